// Tiled stores in the reference model: clipping (bytes outside the tensor and outside the box are
// untouched), element strides, and the store(load(x)) round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::get;
using testing::put;
using testing::random_bytes;
using testing::tiled_spec;

TEST(ModelStore, ClipsAtTheTensorEdgeAndTouchesOnlyTheBox) {
  // 8 x 4 uint32 tensor (32 B rows: whole 16 B chunks); rows 48 B apart (16 B of row padding).
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {8, 4}, {8, 2}, Swizzle::kNone, 16);
  ASSERT_EQ(s.strides_bytes_inner_first[1], 48u);
  // 16 tail bytes past the footprint: nothing may land there either.
  std::vector<std::byte> g = filled(global_footprint_bytes(s) + 16, 0xAA);
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::uint32_t i = 0; i < 16; ++i)
    put<std::uint32_t>(smem, i * 4, 100 + i);
  const std::int32_t c[] = {4, 3};  // box x = 4..11, y = 3..4: only (4..7, 3) are inside
  store_box(s, smem, c, g);
  for (std::size_t b = 0; b < g.size(); ++b) {
    const bool written = b >= 3 * 48 + 4 * 4 && b < 3 * 48 + 8 * 4;
    if (!written) {
      EXPECT_EQ(g[b], std::byte{0xAA}) << "byte " << b;
    }
  }
  for (std::uint32_t x = 4; x < 8; ++x)
    EXPECT_EQ(get<std::uint32_t>(g, 3 * 48 + x * 4), 100u + x - 4);
}

TEST(ModelStore, WritesDimension0InWhole16ByteChunks) {
  // MEASURED (H200, tests/gpu/probes.txt group E): elements past dims[0] that share the row's last
  // 16 B chunk are written from shared memory; nothing past that chunk is. `limit` is the first
  // element index not written, worked out by hand.
  struct Case {
    DataType t;
    std::uint64_t dim0;
    std::uint32_t box0;
    std::int32_t c0;
    std::uint64_t limit;
    Swizzle swz;
  };
  const Case cases[] = {
      {DataType::kBFloat16, 100, 64, 64, 104, Swizzle::kNone},  // 200 B rows -> 208
      {DataType::kBFloat16, 100, 64, 64, 104, Swizzle::k128B},
      {DataType::kFloat32, 149, 32, 128, 152, Swizzle::kNone},  // 596 B -> 608
      {DataType::kUInt8, 1726, 256, 1536, 1728, Swizzle::kNone},
      {DataType::kFloat64, 1, 2, 0, 2, Swizzle::kNone},       // 8 B -> 16
      {DataType::kUInt32, 5, 8, 0, 8, Swizzle::k32B},         // 20 B -> 32
      {DataType::kUInt16, 70, 16, 64, 72, Swizzle::kNone},    // box 64..79 ends past the chunk
      {DataType::kBFloat16, 64, 64, 32, 64, Swizzle::kNone},  // whole chunks: exact clipping
  };
  for (const Case& k : cases) {
    const std::size_t es = static_cast<std::size_t>(element_bytes(k.t));
    // 4 rows; 32 B of padding per row so that writes past the chunk would land in the buffer.
    const TensorMapSpec s = tiled_spec(k.t, {k.dim0, 4}, {k.box0, 4}, k.swz, 32);
    SCOPED_TRACE(to_string(s) + " coords[0] = " + std::to_string(k.c0));
    const std::uint64_t pitch = s.strides_bytes_inner_first[1];
    // The last row's chunk is inside the footprint; the tail past it must stay untouched.
    ASSERT_EQ(global_footprint_bytes(s), 3 * pitch + k.limit * es);
    std::vector<std::byte> g = filled(global_footprint_bytes(s) + 64, 0xAA);
    // smem element (k0, y) holds (y + 1) * 0x1000 + k0 + 1, truncated to the element size.
    std::vector<std::byte> smem = filled(smem_bytes(s), 0);
    for (std::uint32_t y = 0; y < 4; ++y)
      for (std::uint32_t k0 = 0; k0 < k.box0; ++k0)
        write_element(smem, smem_offset(s, y, k0 * es), es, (y + 1) * 0x1000u + k0 + 1);
    const std::int32_t c[] = {k.c0, 0};
    store_box(s, smem, c, g);
    const std::uint64_t mask = es == 8 ? ~0ull : (1ull << (8 * es)) - 1;
    std::size_t written = 0;
    for (std::size_t b = 0; b < g.size(); ++b) {
      const std::uint64_t y = b / pitch, x = b % pitch / es;
      if (y < 4 && x >= static_cast<std::uint64_t>(k.c0) && x < k.limit &&
          x < static_cast<std::uint64_t>(k.c0) + k.box0) {
        if (b % es == 0) {
          const std::uint64_t want = ((y + 1) * 0x1000u + (x - k.c0) + 1) & mask;
          EXPECT_EQ(read_element(g, b, es), want) << "x = " << x << ", y = " << y;
          ++written;
        }
      } else {
        EXPECT_EQ(g[b], std::byte{0xAA}) << "byte " << b << " (x = " << x << ", y = " << y << ")";
      }
    }
    EXPECT_EQ(written, 4 * (std::min<std::uint64_t>(k.limit, k.c0 + k.box0) - k.c0));
  }
}

TEST(ModelStore, NegativeStartIsClipped) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {8, 4}, {8, 2});
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0);
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::uint32_t i = 0; i < 16; ++i)
    put<std::uint32_t>(smem, i * 4, 100 + i);
  // x = -4..3, y = -1..0: only smem row 1, elements 4..7, land: at (0..3, 0).
  const std::int32_t c[] = {-4, -1};
  store_box(s, smem, c, g);
  for (std::uint32_t x = 0; x < 4; ++x)
    EXPECT_EQ(get<std::uint32_t>(g, x * 4), 112u + x);
  for (std::size_t b = 16; b < g.size(); ++b)
    EXPECT_EQ(g[b], std::byte{0}) << b;
}

TEST(ModelStore, HonoursElementStrides) {
  TensorMapSpec s = tiled_spec(DataType::kUInt32, {4, 6}, {4, 6});
  s.element_strides_inner_first[1] = 2;  // rows 0, 2, 4 only
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0);
  std::vector<std::byte> smem(smem_bytes(s));
  ASSERT_EQ(smem.size(), 3u * 16);
  for (std::uint32_t i = 0; i < 12; ++i)
    put<std::uint32_t>(smem, i * 4, 1 + i);
  const std::int32_t c[] = {0, 0};
  store_box(s, smem, c, g);
  for (std::uint32_t y = 0; y < 6; ++y)
    for (std::uint32_t x = 0; x < 4; ++x)
      EXPECT_EQ(get<std::uint32_t>(g, y * 16 + x * 4), y % 2 ? 0u : 1 + (y / 2) * 4 + x)
          << x << "," << y;
}

TEST(ModelStore, StoreOfLoadRoundTrips) {
  for (Swizzle swz : {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
    const std::uint32_t row =
        swz == Swizzle::kNone ? 48 : static_cast<std::uint32_t>(swizzle_span_bytes(swz));
    // dims[0] = 70 uint16 = 140 B: a store also writes x = 70, 71 (bytes 140..143 of the row's last
    // 16 B chunk), which hold the load's zero fill.
    TensorMapSpec s = tiled_spec(DataType::kUInt16, {70, 9, 5}, {row / 2, 6, 3}, swz, 16);
    s.element_strides_inner_first[2] = 2;
    const auto x = random_bytes(global_footprint_bytes(s), 11);
    for (const auto& c :
         {std::vector<std::int32_t>{0, 0, 0}, {48, 5, 3}, {-8, -2, -1}, {64, 8, 4}}) {
      std::vector<std::byte> smem(smem_bytes(s));
      load_box(s, x, c, smem);
      // Storing the loaded box back onto x changes nothing but the padding elements inside the
      // last chunk of the box's rows, which become the fill.
      std::vector<std::byte> same = x;
      store_box(s, smem, c, same);
      std::vector<std::byte> want_same = x;
      std::size_t padding = 0;
      for (const auto& e : testing::naive_box(s, c))
        if (e.stored && !e.in_bounds) {
          ++padding;
          want_same[e.global] = want_same[e.global + 1] = std::byte{0};
        }
      EXPECT_EQ(same, want_same) << to_string(swz) << " c0=" << c[0];
      // Storing it into a poisoned buffer writes exactly the box's stored elements.
      std::vector<std::byte> poisoned = filled(x.size(), 0xAB);
      store_box(s, smem, c, poisoned);
      std::vector<std::byte> want = filled(x.size(), 0xAB);
      for (const auto& e : testing::naive_box(s, c))
        if (e.stored)
          for (std::size_t b = 0; b < 2; ++b)
            want[e.global + b] = e.in_bounds ? x[e.global + b] : std::byte{0};
      EXPECT_EQ(poisoned, want) << to_string(swz) << " c0=" << c[0];
      // A box reaching past x = 70 writes x = 70, 71 in its in-bounds rows.
      if (c[0] == 64 || (c[0] == 48 && s.box_inner_first[0] > 22)) {
        EXPECT_GT(padding, 0u) << to_string(swz) << " c0=" << c[0];
      }
    }
  }
}

}  // namespace
}  // namespace tma::model
