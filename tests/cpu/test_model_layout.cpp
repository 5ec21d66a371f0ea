// The reference model's shared layout pieces: global footprint, shared-memory size, OOB fill bits
// and the argument checks with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::tiled_spec;

// Runs `f`, expects std::invalid_argument whose message contains every string of `parts`.
template <class F>
void expect_invalid(F&& f, std::vector<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& p : parts)
      EXPECT_NE(what.find(p), std::string::npos) << what << "\nmissing: " << p;
  }
}

TEST(ModelLayout, GlobalFootprint) {
  // 3 x 5 x 2 fp16 tensor, rows padded to 16 B, planes of 5 rows.
  TensorMapSpec s = tiled_spec(DataType::kFloat16, {3, 5, 2}, {8, 1, 1});
  EXPECT_EQ(s.strides_bytes_inner_first[1], 16u);
  EXPECT_EQ(s.strides_bytes_inner_first[2], 80u);
  EXPECT_EQ(global_footprint_bytes(s), 2u * 2 + 4 * 16 + 1 * 80 + 2);
  s.rank = 1;
  EXPECT_EQ(global_footprint_bytes(s), 6u);
  // A stride smaller than the row still works: footprint is the last element's end.
  s = tiled_spec(DataType::kUInt64, {1, 7}, {2, 1});
  EXPECT_EQ(global_footprint_bytes(s), 6u * 16 + 8);
}

TEST(ModelLayout, GlobalFootprintOverflowIsAnError) {
  TensorMapSpec s = tiled_spec(DataType::kUInt8, {16, 1, 1, 1, 1}, {16, 1, 1, 1, 1});
  s.dims_inner_first = {1ull << 32, 1ull << 32, 1ull << 32, 2, 2};
  s.strides_bytes_inner_first = {1, 1ull << 32, 1ull << 39, 1ull << 39, 1ull << 39};
  expect_invalid([&] { (void)global_footprint_bytes(s); }, {"2^64", "use smaller"});
}

TEST(ModelLayout, SmemBytesMatchesTransactionBytesInCommonCases) {
  const TensorMapSpec a = tiled_spec(DataType::kFloat16, {100, 100}, {64, 32}, Swizzle::k128B);
  EXPECT_EQ(smem_bytes(a), transaction_bytes(a));
  EXPECT_EQ(smem_bytes(a), 64u * 2 * 32);
  TensorMapSpec b = tiled_spec(DataType::kFloat32, {9, 9, 9}, {4, 3, 5}, Swizzle::k32B);
  b.element_strides_inner_first = {3, 2, 2, 1, 1};  // dim 0's stride ignored: 4 x 2 x 3
  EXPECT_EQ(smem_bytes(b), transaction_bytes(b));
  EXPECT_EQ(smem_bytes(b), 4u * 4 * 2 * 3);
}

TEST(ModelLayout, SmemBytesCoversChunksSwizzledPastTheDenseEnd) {
  // 9 rows of 16 B with SWIZZLE_128B (hypothesis A, dense rows): row 8 is chunk 0 of span-row 1
  // and moves to chunk 1, bytes 144..159, past the 144 dense bytes.
  const TensorMapSpec s = tiled_spec(DataType::kUInt8, {64, 64}, {16, 9}, Swizzle::k128B);
  EXPECT_EQ(transaction_bytes(s), 144u);
  EXPECT_EQ(smem_bytes(s), 160u);
  EXPECT_EQ(smem_offset(s, 8, 0), 144u);
  // 10 rows: row 9 (chunk 1 of span-row 1) moves back to chunk 0: the image ends at 160 still.
  TensorMapSpec ten = s;
  ten.box_inner_first[1] = 10;
  EXPECT_EQ(smem_bytes(ten), 160u);
  // A partly filled span inside the first 128 B is not moved: one 16 B row under SWIZZLE_64B.
  const TensorMapSpec one = tiled_spec(DataType::kUInt64, {3}, {2}, Swizzle::k64B);
  EXPECT_EQ(smem_bytes(one), 16u);
}

TEST(ModelLayout, OobNanBits) {
  EXPECT_EQ(oob_nan_bits(DataType::kFloat16), 0x7FFFu);
  EXPECT_EQ(oob_nan_bits(DataType::kBFloat16), 0x7FFFu);
  EXPECT_EQ(oob_nan_bits(DataType::kFloat32), 0x7FFFFFFFu);
  EXPECT_EQ(oob_nan_bits(DataType::kTFloat32), 0x7FFFFFFFu);
  EXPECT_EQ(oob_nan_bits(DataType::kFloat64), 0x7FFFFFFFFFFFFFFFull);
  TensorMapSpec s = tiled_spec(DataType::kFloat32, {4}, {4});
  EXPECT_EQ(oob_fill_bits(s), 0u);
  s.oob_fill = OobFill::kNan;
  EXPECT_EQ(oob_fill_bits(s), 0x7FFFFFFFu);
}

TEST(ModelLayout, ArgumentErrorsNameTheValueAndTheFix) {
  const TensorMapSpec s = tiled_spec(DataType::kFloat32, {8, 4}, {4, 2});
  std::vector<std::byte> g(global_footprint_bytes(s));
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t c2[] = {0, 0};
  const std::int32_t c3[] = {0, 0, 0};
  expect_invalid([&] { load_box(s, g, c3, smem); }, {"load_box", "coords has 3", "rank = 2"});
  std::vector<std::byte> small(g.size() - 1);
  expect_invalid([&] { load_box(s, small, c2, smem); },
                 {"global buffer has " + std::to_string(small.size()),
                  "at least " + std::to_string(g.size())});
  std::vector<std::byte> big_smem(smem.size() + 16);
  expect_invalid(
      [&] { store_box(s, big_smem, c2, g); },
      {"store_box", std::to_string(big_smem.size()), "exactly " + std::to_string(smem.size())});
  TensorMapSpec packed = s;
  packed.dtype = DataType::k16U4Align8B;
  expect_invalid([&] { load_box(packed, g, c2, smem); }, {"16u4_align8b", "byte-sized"});
  TensorMapSpec atom = s;
  atom.swizzle = Swizzle::k128BAtom64B;
  expect_invalid([&] { load_box(atom, g, c2, smem); },
                 {"128B_atom_64B", "use none, 32B, 64B or 128B"});
  TensorMapSpec rank0 = s;
  rank0.rank = 0;
  expect_invalid([&] { load_box(rank0, g, c2, smem); }, {"spec.rank = 0", "1..5"});
  TensorMapSpec im2col = s;
  im2col.mode = Mode::kIm2col;
  expect_invalid([&] { load_box(im2col, g, c2, smem); }, {"im2col", "load_im2col"});
  TensorMapSpec zero_dim = s;
  zero_dim.dims_inner_first[1] = 0;
  expect_invalid([&] { load_box(zero_dim, g, c2, smem); }, {"dims_inner_first[1] = 0"});
}

}  // namespace
}  // namespace tma::model
