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
  const std::int32_t c[] = {5, 2};
  load_box(s, g, c, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{2005, 2006, 2007, 2008,  //
                                                      3005, 3006, 3007, 3008,  //
                                                      4005, 4006, 4007, 4008}));
}

TEST(ModelLoad, PartlyOutOfBoundsFillsZero) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt32, {10, 6}, {4, 3});
  const auto g = counting_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t negative[] = {-2, -1};
  load_box(s, g, negative, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{0, 0, 0, 0,  //
                                                      0, 0, 0, 1,  //
                                                      0, 0, 1000, 1001}));
  const std::int32_t past_end[] = {8, 4};
  load_box(s, g, past_end, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{4008, 4009, 0, 0,  //
                                                      5008, 5009, 0, 0,  //
                                                      0, 0, 0, 0}));
}

TEST(ModelLoad, WhollyOutOfBoundsIsAllFill) {
  TensorMapSpec s = tiled_spec(DataType::kFloat32, {10, 6}, {4, 3});
  const auto g = random_bytes(global_footprint_bytes(s), 7);
  std::vector<std::byte> smem(smem_bytes(s));
  for (auto c : {std::vector<std::int32_t>{10, 0}, {-4, 0}, {0, 6}, {0, -3}, {-100000, 99999}}) {
    s.oob_fill = OobFill::kZero;
    load_box(s, g, c, smem);
    EXPECT_EQ(smem, filled(smem.size(), 0));
    s.oob_fill = OobFill::kNan;
    load_box(s, g, c, smem);
    for (std::uint32_t v : as_u32(smem))
      EXPECT_EQ(v, 0x7FFFFFFFu);
  }
}

TEST(ModelLoad, NanFillBytesPerType) {
  struct Case {
    DataType t;
    std::vector<unsigned char> element;  // little-endian bytes of the OOB-NaN
  };
  const Case cases[] = {
      {DataType::kFloat16, {0xFF, 0x7F}},
      {DataType::kBFloat16, {0xFF, 0x7F}},
      {DataType::kFloat32, {0xFF, 0xFF, 0xFF, 0x7F}},
      {DataType::kFloat64, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}},
  };
  for (const Case& k : cases) {
    const auto es = static_cast<std::uint32_t>(element_bytes(k.t));
    TensorMapSpec s = tiled_spec(k.t, {16 / es * 2}, {16 / es});
    s.oob_fill = OobFill::kNan;
    const auto g = filled(global_footprint_bytes(s), 0x11);
    std::vector<std::byte> smem(smem_bytes(s));
    const std::int32_t c[] = {static_cast<std::int32_t>(16 / es) +
                              8 / static_cast<std::int32_t>(es)};
    load_box(s, g, c, smem);  // first half in bounds, second half past the end
    for (std::size_t i = 0; i < 8; ++i)
      EXPECT_EQ(smem[i], std::byte{0x11}) << to_string(k.t);
    for (std::size_t i = 8; i < 16; ++i)
      EXPECT_EQ(std::to_integer<unsigned>(smem[i]), k.element[i % es])
          << to_string(k.t) << " byte " << i;
  }
}

TEST(ModelLoad, ElementStridesOnOuterDimsAndIgnoredOnDim0) {
  TensorMapSpec s = tiled_spec(DataType::kUInt32, {10, 12}, {4, 5});
  s.element_strides_inner_first = {3, 2, 1, 1, 1};  // dim 0's 3 is ignored without interleave
  const auto g = counting_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  EXPECT_EQ(smem.size(), 4u * 3 * 4);  // ceil(5 / 2) = 3 rows
  const std::int32_t c[] = {1, 3};
  load_box(s, g, c, smem);
  EXPECT_EQ(as_u32(smem), (std::vector<std::uint32_t>{3001, 3002, 3003, 3004,  //
                                                      5001, 5002, 5003, 5004,  //
                                                      7001, 7002, 7003, 7004}));
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
      for (int d = 0; d < rank; ++d)
        c[d] = static_cast<std::int32_t>((trial * 7 + d * 3) % 13) - 4;
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

TEST(ModelLoad, NarrowRowsWithWideSwizzleUseDenseRowsHypothesisA) {
  // 32 fp16 = 64 B rows under SWIZZLE_128B: rows 2r and 2r+1 share span-row r (hypothesis A).
  const TensorMapSpec s = tiled_spec(DataType::kFloat16, {32, 16}, {32, 16}, Swizzle::k128B);
  std::vector<std::byte> g(global_footprint_bytes(s));
  for (std::uint32_t y = 0; y < 16; ++y)
    for (std::uint32_t x = 0; x < 32; ++x)
      put<std::uint16_t>(g, y * 64 + x * 2, static_cast<std::uint16_t>(y * 32 + x));
  std::vector<std::byte> smem(smem_bytes(s));
  ASSERT_EQ(smem.size(), 1024u);
  const std::int32_t c[] = {0, 0};
  load_box(s, g, c, smem);
  for (std::uint32_t y = 0; y < 16; ++y)
    for (std::uint32_t x = 0; x < 32; ++x) {
      const std::uint32_t linear = y * 64 + x * 2;
      const std::uint32_t span_row = linear / 128, chunk = (linear % 128) / 16;
      const std::size_t at = span_row * 128 + ((chunk ^ (span_row % 8)) * 16) + linear % 16;
      EXPECT_EQ(get<std::uint16_t>(smem, at), y * 32 + x);
    }
}

TEST(ModelLoad, BytesOutsideTheImageAreUntouched) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt8, {64, 64}, {16, 9}, Swizzle::k128B);
  const auto g = random_bytes(global_footprint_bytes(s), 3);
  std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
  const std::int32_t c[] = {3, 4};
  load_box(s, g, c, smem);
  // Image: rows 0..7 dense in bytes 0..127; row 8 moved to 144..159; 128..143 keep the poison.
  ASSERT_EQ(smem.size(), 160u);
  for (std::size_t i = 128; i < 144; ++i)
    EXPECT_EQ(smem[i], std::byte{0xCD}) << i;
  EXPECT_EQ(smem, naive_load(s, g, c, smem.size(), 0, 0xCD));
}

TEST(ModelLoad, InterleaveHonoursDim0StrideAndPadsRowsHypothesis) {
  // INTERLEAVE_16B, uint16 {8, 4, 2}: dimension 0's traversal stride 2 is honoured (4 of 8
  // elements = 8 B per row) and each row is padded to 16 B; the padding is not written.
  TensorMapSpec s = tiled_spec(DataType::kUInt16, {8, 4, 2}, {8, 2, 1});
  s.interleave = Interleave::k16B;
  s.element_strides_inner_first[0] = 2;
  EXPECT_EQ(smem_row_bytes(s), 16u);
  EXPECT_EQ(smem_bytes(s), 32u);
  EXPECT_EQ(transaction_bytes(s), 16u);  // the spec helper does not pad (see layout.hpp)
  std::vector<std::byte> g(global_footprint_bytes(s));
  for (std::uint32_t z = 0; z < 2; ++z)
    for (std::uint32_t y = 0; y < 4; ++y)
      for (std::uint32_t x = 0; x < 8; ++x)
        put<std::uint16_t>(g, z * 64 + y * 16 + x * 2,
                           static_cast<std::uint16_t>(100 * z + 10 * y + x));
  std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
  const std::int32_t c[] = {1, 1, 1};
  load_box(s, g, c, smem);
  const std::uint16_t want[2][4] = {{111, 113, 115, 117}, {121, 123, 125, 127}};
  for (std::size_t row = 0; row < 2; ++row) {
    for (std::size_t k = 0; k < 4; ++k)
      EXPECT_EQ(get<std::uint16_t>(smem, row * 16 + k * 2), want[row][k]);
    for (std::size_t b = 8; b < 16; ++b)
      EXPECT_EQ(smem[row * 16 + b], std::byte{0xCD});
  }
  std::vector<std::byte> back = filled(g.size(), 0);
  store_box(s, smem, c, back);
  EXPECT_EQ(get<std::uint16_t>(back, 64 + 16 + 2), 111);
  EXPECT_EQ(get<std::uint16_t>(back, 64 + 16 + 4), 0);  // x = 2 is skipped by the stride
}

}  // namespace
}  // namespace tma::model
