// Tiled stores in the reference model: clipping (bytes outside the tensor and outside the box are
// untouched), element strides, and the store(load(x)) round trip.
#include <gtest/gtest.h>

#include <cstdint>
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
  // 5 x 4 uint32 tensor; rows 32 B apart (20 B of data + 12 B of row padding).
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {5, 4}, {4, 2}, Swizzle::kNone, 0);
  ASSERT_EQ(s.strides_bytes_inner_first[1], 32u);
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0xAA);
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::uint32_t i = 0; i < 8; ++i)
    put<std::uint32_t>(smem, i * 4, 100 + i);
  const std::int32_t c[] = {3, 3};  // box x = 3..6, y = 3..4: only (3,3) and (4,3) are inside
  store_box(s, smem, c, g);
  for (std::size_t b = 0; b < g.size(); ++b) {
    const bool written = b >= 3 * 32 + 3 * 4 && b < 3 * 32 + 5 * 4;
    if (!written) {
      EXPECT_EQ(g[b], std::byte{0xAA}) << "byte " << b;
    }
  }
  EXPECT_EQ(get<std::uint32_t>(g, 3 * 32 + 12), 100u);
  EXPECT_EQ(get<std::uint32_t>(g, 3 * 32 + 16), 101u);
}

TEST(ModelStore, NegativeStartIsClipped) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {5, 4}, {4, 2});
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0);
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::uint32_t i = 0; i < 8; ++i)
    put<std::uint32_t>(smem, i * 4, 100 + i);
  const std::int32_t c[] = {-2, -1};  // only smem row 1, elements 2 and 3, land: at (0,0), (1,0)
  store_box(s, smem, c, g);
  EXPECT_EQ(get<std::uint32_t>(g, 0), 106u);
  EXPECT_EQ(get<std::uint32_t>(g, 4), 107u);
  for (std::size_t b = 8; b < g.size(); ++b)
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
    TensorMapSpec s = tiled_spec(DataType::kUInt16, {70, 9, 5}, {row / 2, 6, 3}, swz, 16);
    s.element_strides_inner_first[2] = 2;
    const auto x = random_bytes(global_footprint_bytes(s), 11);
    for (const auto& c :
         {std::vector<std::int32_t>{0, 0, 0}, {50, 5, 3}, {-10, -2, -1}, {65, 8, 4}}) {
      std::vector<std::byte> smem(smem_bytes(s));
      load_box(s, x, c, smem);
      // Storing the loaded box back onto x changes nothing.
      std::vector<std::byte> same = x;
      store_box(s, smem, c, same);
      EXPECT_EQ(same, x) << to_string(swz);
      // Storing it into zeros reproduces exactly the box's in-bounds elements.
      std::vector<std::byte> zeros = filled(x.size(), 0);
      store_box(s, smem, c, zeros);
      std::vector<std::byte> want = filled(x.size(), 0);
      for (const auto& e : testing::naive_box(s, c))
        if (e.in_bounds)
          for (std::size_t b = 0; b < 2; ++b)
            want[e.global + b] = x[e.global + b];
      EXPECT_EQ(zeros, want) << to_string(swz) << " c0=" << c[0];
    }
  }
}

}  // namespace
}  // namespace tma::model
