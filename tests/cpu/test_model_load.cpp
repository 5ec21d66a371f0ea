// Tiled loads in the reference model: naive-gather agreement, out-of-bounds fill (zero and NaN),
// element strides, every rank, swizzled placement, and bytes outside the image left alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::get;
using testing::naive_load;
using testing::put;
using testing::random_bytes;
using testing::tiled_spec;

// A 2-D uint32 tensor whose element (x, y) holds 1000 * y + x; rows 16 B aligned.
std::vector<std::byte> counting_u32(const TensorMapSpec& s) {
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0xEE);
  for (std::uint64_t y = 0; y < s.dims_inner_first[1]; ++y)
    for (std::uint64_t x = 0; x < s.dims_inner_first[0]; ++x)
      put<std::uint32_t>(g, y * s.strides_bytes_inner_first[1] + x * 4,
                         static_cast<std::uint32_t>(1000 * y + x));
  return g;
}

std::vector<std::uint32_t> as_u32(const std::vector<std::byte>& smem) {
  std::vector<std::uint32_t> v(smem.size() / 4);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = get<std::uint32_t>(smem, i * 4);
  return v;
}

TEST(ModelLoad, InBoundsBoxIsTheHandGather) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {10, 6}, {4, 3});
  const auto g = counting_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t c[] = {4, 2};
  load_box(s, g, c, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{2004, 2005, 2006, 2007,  //
                                                      3004, 3005, 3006, 3007,  //
                                                      4004, 4005, 4006, 4007}));
}

TEST(ModelLoad, PartlyOutOfBoundsFillsZero) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {10, 6}, {8, 3});
  const auto g = counting_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t negative[] = {-4, -1};  // x = -4..3, y = -1..1
  load_box(s, g, negative, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{0, 0, 0, 0, 0,    0,    0,    0,  //
                                                      0, 0, 0, 0, 0,    1,    2,    3,  //
                                                      0, 0, 0, 0, 1000, 1001, 1002, 1003}));
  // x = 8..15, y = 4..6: x = 10, 11 lie in the row's last 16 B chunk but are still filled (the
  // whole-chunk rule is about stores).
  const std::int32_t past_end[] = {8, 4};
  load_box(s, g, past_end, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{4008, 4009, 0, 0, 0, 0, 0, 0,  //
                                                      5008, 5009, 0, 0, 0, 0, 0, 0,  //
                                                      0,    0,    0, 0, 0, 0, 0, 0}));
}

TEST(ModelLoad, WhollyOutOfBoundsIsAllFill) {
  TensorMapSpec s = tiled_spec(DataType::kFloat32, {10, 6}, {4, 3});
  const auto g = random_bytes(global_footprint_bytes(s), 7);
  std::vector<std::byte> smem(smem_bytes(s));
  for (auto c : {std::vector<std::int32_t>{12, 0}, {-4, 0}, {0, 6}, {0, -3}, {-100000, 99999}}) {
    s.oob_fill = OobFill::kZero;
    load_box(s, g, c, smem);
    EXPECT_EQ(smem, filled(smem.size(), 0));
    s.oob_fill = OobFill::kNan;
    load_box(s, g, c, smem);
    for (std::uint32_t v : as_u32(smem))
      EXPECT_EQ(v, 0x7FF77FF7u);
  }
}

TEST(ModelLoad, NanFillBytesPerType) {
  struct Case {
    DataType t;
    std::vector<unsigned char> element;  // little-endian bytes of the OOB-NaN
  };
  // MEASURED (H200): 0x7FF7 repeated, so every type's bytes read F7 7F F7 7F ...
  const Case cases[] = {
      {DataType::kFloat16, {0xF7, 0x7F}},
      {DataType::kBFloat16, {0xF7, 0x7F}},
      {DataType::kFloat32, {0xF7, 0x7F, 0xF7, 0x7F}},
      {DataType::kFloat64, {0xF7, 0x7F, 0xF7, 0x7F, 0xF7, 0x7F, 0xF7, 0x7F}},
  };
  for (const Case& k : cases) {
    const auto es = static_cast<std::uint32_t>(element_bytes(k.t));
    // A 24 B row; the 32 B box starts at byte 16: bytes 16..23 are in bounds, 24..47 past the end.
    TensorMapSpec s = tiled_spec(k.t, {24 / es}, {32 / es});
    s.oob_fill = OobFill::kNan;
    const auto g = filled(global_footprint_bytes(s), 0x11);
    std::vector<std::byte> smem(smem_bytes(s));
    ASSERT_EQ(smem.size(), 32u);
    const std::int32_t c[] = {static_cast<std::int32_t>(16 / es)};
    load_box(s, g, c, smem);
    for (std::size_t i = 0; i < 8; ++i)
      EXPECT_EQ(smem[i], std::byte{0x11}) << to_string(k.t);
    for (std::size_t i = 8; i < 32; ++i)
      EXPECT_EQ(std::to_integer<unsigned>(smem[i]), k.element[i % es])
          << to_string(k.t) << " byte " << i;
  }
}

TEST(ModelLoad, Tf32MapsRoundTheMantissaOnLoad) {
  // MEASURED (H200): TFLOAT32 and TFLOAT32_FTZ maps round each fp32 to 10 mantissa bits, ties to
  // even, subnormals included (no flush on load); every NaN becomes the
  // canonical TF32 NaN; the OOB fill is not converted. Rows: {global bits, result} (both types).
  const std::uint32_t cases[][2] = {
      {0x3F800000u, 0x3F800000u},  // 1.0: exact
      {0x3F800FFFu, 0x3F800000u},  // below the tie: down
      {0x3F801000u, 0x3F800000u},  // tie, even below: stays (ties to even)
      {0x3F803000u, 0x3F804000u},  // tie, odd below: up to even
      {0xD797D000u, 0xD797C000u},  // negative tie (seen on hardware): to even
      {0x00102000u, 0x00102000u},  // subnormal, exact: kept (seen on hardware)
      {0x00131234u, 0x00132000u},  // subnormal: rounded, not flushed
      {0x80000001u, 0x80000000u},  // tiny negative subnormal: -0
      {0x7F800000u, 0x7F800000u},  // +Inf
      {0x7FC01234u, 0x7FFFE000u},  // NaN: canonical TF32 NaN (seen on hardware)
      {0xFFB46000u, 0x7FFFE000u},  // negative NaN: canonical, sign cleared (seen on hardware)
  };
  constexpr std::uint32_t kN = sizeof(cases) / sizeof(cases[0]);
  for (DataType t : {DataType::kTFloat32, DataType::kTFloat32Ftz}) {
    TensorMapSpec s = tiled_spec(t, {kN}, {12});
    s.oob_fill = OobFill::kNan;
    std::vector<std::byte> g(global_footprint_bytes(s));
    for (std::uint32_t i = 0; i < kN; ++i)
      put<std::uint32_t>(g, i * 4, cases[i][0]);
    std::vector<std::byte> smem(smem_bytes(s));
    const std::int32_t c[] = {0};
    load_box(s, g, c, smem);
    const auto got = as_u32(smem);
    for (std::uint32_t i = 0; i < kN; ++i)
      EXPECT_EQ(got[i], cases[i][1]) << to_string(t) << " 0x" << std::hex << cases[i][0];
    for (std::uint32_t i = kN; i < 12; ++i)
      EXPECT_EQ(got[i], 0x7FF77FF7u) << to_string(t);
  }
  // Other float maps copy bits unchanged.
  const TensorMapSpec f32 = tiled_spec(DataType::kFloat32, {4}, {4});
  std::vector<std::byte> g(global_footprint_bytes(f32));
  put<std::uint32_t>(g, 0, 0x3F801000u);
  put<std::uint32_t>(g, 4, 0x00000001u);
  std::vector<std::byte> smem(smem_bytes(f32));
  const std::int32_t c[] = {0};
  load_box(f32, g, c, smem);
  EXPECT_EQ(get<std::uint32_t>(smem, 0), 0x3F801000u);
  EXPECT_EQ(get<std::uint32_t>(smem, 4), 0x00000001u);
}

TEST(ModelLoad, ElementStridesOnOuterDimsAndIgnoredOnDim0) {
  TensorMapSpec s = tiled_spec(DataType::kUInt32, {10, 12}, {4, 5});
  s.element_strides_inner_first = {3, 2, 1, 1, 1};  // dim 0's 3 is ignored without interleave
  const auto g = counting_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  EXPECT_EQ(smem.size(), 4u * 3 * 4);  // ceil(5 / 2) = 3 rows
  const std::int32_t c[] = {4, 3};
  load_box(s, g, c, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{3004, 3005, 3006, 3007,  //
                                                      5004, 5005, 5006, 5007,  //
                                                      7004, 7005, 7006, 7007}));
  // Stride 3 over 8 rows from row 7: rows 7, 10 and 13 (out of bounds) of a 12-row tensor.
  s.box_inner_first[1] = 8;
  s.element_strides_inner_first[1] = 3;
  std::vector<std::byte> smem3(smem_bytes(s));
  const std::int32_t c3[] = {0, 7};
  load_box(s, g, c3, smem3);
  EXPECT_EQ(as_u32(smem3), (std::vector<std::uint32_t>{7000, 7001, 7002, 7003,      //
                                                       10000, 10001, 10002, 10003,  //
                                                       0, 0, 0, 0}));
}

TEST(ModelLoad, EveryRankAgreesWithNaiveGather) {
  const std::vector<std::vector<std::uint64_t>> dims = {
      {37}, {19, 7}, {9, 5, 4}, {8, 3, 4, 3}, {5, 3, 2, 3, 2}};
  for (int rank = 1; rank <= 5; ++rank) {
    std::vector<std::uint32_t> box(rank, 2);
    box[0] = 8;  // 8 x fp16 = 16 B rows
    TensorMapSpec s = tiled_spec(DataType::kFloat16, dims[rank - 1], box, Swizzle::kNone, 32);
    for (int d = 1; d < rank; ++d)
      s.element_strides_inner_first[d] = static_cast<std::uint32_t>(d);
    if (rank > 1) s.box_inner_first[rank - 1] = 3;
    const auto g = random_bytes(global_footprint_bytes(s), 100 + rank);
    std::vector<std::int32_t> c(rank);
    for (int trial = 0; trial < 20; ++trial) {
      for (int d = 1; d < rank; ++d)
        c[d] = static_cast<std::int32_t>((trial * 7 + d * 3) % 13) - 4;
      c[0] = 8 * static_cast<std::int32_t>((trial * 3) % 7 - 2);  // -16..32: whole 16 B chunks
      std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
      load_box(s, g, c, smem);
      EXPECT_EQ(smem, naive_load(s, g, c, smem.size(), 0)) << "rank " << rank << " trial " << trial;
    }
  }
}

TEST(ModelLoad, SwizzledPlacementByHand) {
  // 64 fp16 per row = 128 B rows, SWIZZLE_128B: element (x, y) lands in chunk (x / 8) ^ (y % 8).
  const TensorMapSpec s = tiled_spec(DataType::kFloat16, {64, 16}, {64, 16}, Swizzle::k128B);
  std::vector<std::byte> g(global_footprint_bytes(s));
  for (std::uint32_t y = 0; y < 16; ++y)
    for (std::uint32_t x = 0; x < 64; ++x)
      put<std::uint16_t>(g, y * 128 + x * 2, static_cast<std::uint16_t>(y * 64 + x));
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t c[] = {0, 0};
  load_box(s, g, c, smem);
  for (std::uint32_t y = 0; y < 16; ++y)
    for (std::uint32_t x = 0; x < 64; ++x) {
      const std::size_t at = y * 128 + (((x / 8) ^ (y % 8)) * 16) + (x % 8) * 2;
      EXPECT_EQ(get<std::uint16_t>(smem, at), y * 64 + x) << x << "," << y;
    }
}

TEST(ModelLoad, NarrowRowsWithWideSwizzleArePaddedToTheSpan) {
  // MEASURED (H200): fp16 rows of 32 (64 B) and 56 (112 B) elements under SWIZZLE_128B start 128 B
  // apart; element k of row y lands in chunk (k / 8) ^ (y % 8) of the row's 128 B, and the padding
  // bytes of each row keep what the buffer held.
  for (std::uint32_t width : {32u, 56u}) {
    const TensorMapSpec s = tiled_spec(DataType::kFloat16, {64, 16}, {width, 16}, Swizzle::k128B);
    std::vector<std::byte> g(global_footprint_bytes(s));
    for (std::uint32_t y = 0; y < 16; ++y)
      for (std::uint32_t x = 0; x < 64; ++x)
        put<std::uint16_t>(g, y * 128 + x * 2, static_cast<std::uint16_t>(y * 64 + x));
    std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
    ASSERT_EQ(smem.size(), 16u * 128);
    const std::int32_t c[] = {8, 0};  // x = 8..8+width-1
    load_box(s, g, c, smem);
    std::vector<bool> written(smem.size(), false);
    for (std::uint32_t y = 0; y < 16; ++y)
      for (std::uint32_t k = 0; k < width; ++k) {
        const std::size_t at = y * 128 + (((k / 8) ^ (y % 8)) * 16) + (k % 8) * 2;
        EXPECT_EQ(get<std::uint16_t>(smem, at), y * 64 + 8 + k) << width << ": " << k << "," << y;
        written[at] = written[at + 1] = true;
      }
    for (std::size_t b = 0; b < smem.size(); ++b)
      if (!written[b]) {
        EXPECT_EQ(smem[b], std::byte{0xCD}) << width << ": padding byte " << b;
      }
    // A store reads the same places back and ignores the padding.
    std::vector<std::byte> back = filled(g.size(), 0);
    store_box(s, smem, c, back);
    for (std::uint32_t y = 0; y < 16; ++y)
      for (std::uint32_t x = 0; x < 64; ++x) {
        const bool in_box = x >= 8 && x < 8 + width;
        EXPECT_EQ(get<std::uint16_t>(back, y * 128 + x * 2), in_box ? y * 64 + x : 0u)
            << width << ": " << x << "," << y;
      }
  }
}

TEST(ModelLoad, BytesOutsideTheImageAreUntouched) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt8, {64, 64}, {16, 9}, Swizzle::k128B);
  const auto g = random_bytes(global_footprint_bytes(s), 3);
  std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
  const std::int32_t c[] = {48, 58};  // rows 58..63 in bounds, 64..66 zero-filled
  load_box(s, g, c, smem);
  // Image: row r is one 16 B chunk at r * 128, moved to chunk r % 8; the other 7 chunks of each
  // 128 B row are padding and keep the poison.
  ASSERT_EQ(smem.size(), 9u * 128);
  for (std::size_t r = 0; r < 9; ++r)
    for (std::size_t b = 0; b < 128; ++b) {
      const bool image = b / 16 == r % 8;
      const std::byte want = !image  ? std::byte{0xCD}
                             : r < 6 ? g[(58 + r) * 64 + 48 + b % 16]
                                     : std::byte{0};
      EXPECT_EQ(smem[r * 128 + b], want) << "row " << r << " byte " << b;
    }
  EXPECT_EQ(smem, naive_load(s, g, c, smem.size(), 0, 0xCD));
}

}  // namespace
}  // namespace tma::model
