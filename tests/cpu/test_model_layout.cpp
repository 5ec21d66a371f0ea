// The reference model's shared layout pieces: global footprint, shared-memory size, OOB fill bits
// and the argument checks with their messages.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
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
  // 3 x 5 x 2 fp16 tensor, rows padded to 16 B, planes of 5 rows. The last element ends at byte
  // 150; the footprint rounds up to 160 because a store writes that row's whole last 16 B chunk.
  TensorMapSpec s = tiled_spec(DataType::kFloat16, {3, 5, 2}, {8, 1, 1});
  EXPECT_EQ(s.strides_bytes_inner_first[1], 16u);
  EXPECT_EQ(s.strides_bytes_inner_first[2], 80u);
  EXPECT_EQ(global_footprint_bytes(s), 160u);
  static_assert(2 * 2 + 4 * 16 + 1 * 80 + 2 == 150);
  s.rank = 1;
  EXPECT_EQ(global_footprint_bytes(s), 16u);  // 3 fp16 = 6 B, one 16 B chunk
  // A stride smaller than the row still works: the last element ends at 6 * 16 + 8 = 104 -> 112.
  s = tiled_spec(DataType::kUInt64, {1, 7}, {2, 1});
  EXPECT_EQ(global_footprint_bytes(s), 112u);
  // Rows that are whole chunks need no rounding: 2 rows of 32 uint8, 32 B apart.
  s = tiled_spec(DataType::kUInt8, {32, 2}, {16, 1});
  EXPECT_EQ(global_footprint_bytes(s), 64u);
}

TEST(ModelLayout, GlobalFootprintOverflowIsAnError) {
  TensorMapSpec s = tiled_spec(DataType::kUInt8, {16, 1, 1, 1, 1}, {16, 1, 1, 1, 1});
  s.dims_inner_first = {1ull << 32, 1ull << 32, 1ull << 32, 2, 2};
  s.strides_bytes_inner_first = {1, 1ull << 32, 1ull << 39, 1ull << 39, 1ull << 39};
  expect_invalid([&] { (void)global_footprint_bytes(s); }, {"2^64", "use smaller"});
}

TEST(ModelLayout, SmemBytesMatchesTransactionBytesInCommonCases) {
  // Rows exactly one swizzle span wide, or no swizzle: the image is the transaction's bytes.
  const TensorMapSpec a = tiled_spec(DataType::kFloat16, {100, 100}, {64, 32}, Swizzle::k128B);
  EXPECT_EQ(smem_bytes(a), transaction_bytes(a));
  EXPECT_EQ(smem_bytes(a), 64u * 2 * 32);
  TensorMapSpec b = tiled_spec(DataType::kFloat32, {9, 9, 9}, {8, 3, 5}, Swizzle::k32B);
  b.element_strides_inner_first = {3, 2, 2, 1, 1};  // dim 0's stride ignored: 8 x 2 x 3
  EXPECT_EQ(smem_bytes(b), transaction_bytes(b));
  EXPECT_EQ(smem_bytes(b), 8u * 4 * 2 * 3);
  const TensorMapSpec c = tiled_spec(DataType::kUInt8, {64, 64}, {16, 9});
  EXPECT_EQ(smem_bytes(c), transaction_bytes(c));
  EXPECT_EQ(smem_bytes(c), 144u);
}

TEST(ModelLayout, NarrowSwizzledRowsArePaddedToTheSpan) {
  // MEASURED (H200): a row narrower than the swizzle span starts one span after the previous row.
  struct Case {
    DataType t;
    std::uint32_t box0, box1;
    Swizzle swz;
    std::size_t pitch, smem;
  };
  const Case cases[] = {
      {DataType::kFloat16, 32, 16, Swizzle::k128B, 128, 16 * 128},  // 64 B rows
      {DataType::kBFloat16, 56, 8, Swizzle::k128B, 128, 8 * 128},   // 112 B rows
      {DataType::kUInt8, 16, 9, Swizzle::k128B, 128, 9 * 128},      // 16 B rows
      {DataType::kBFloat16, 16, 8, Swizzle::k64B, 64, 8 * 64},      // 32 B rows
      {DataType::kUInt8, 16, 3, Swizzle::k32B, 32, 3 * 32},         // 16 B rows
      {DataType::kUInt64, 2, 1, Swizzle::k64B, 64, 64},             // one 16 B row
  };
  for (const Case& k : cases) {
    const TensorMapSpec s = tiled_spec(k.t, {256, 16}, {k.box0, k.box1}, k.swz);
    SCOPED_TRACE(to_string(s));
    EXPECT_EQ(smem_row_bytes(s), k.box0 * static_cast<std::size_t>(element_bytes(k.t)));
    EXPECT_EQ(smem_row_pitch(s), k.pitch);
    EXPECT_EQ(smem_bytes(s), k.smem);
    EXPECT_LT(transaction_bytes(s), smem_bytes(s));  // the padding is not part of the transaction
    EXPECT_EQ(smem_offset(s, 0, 0), 0u);
    // Row 1 starts one pitch in; SWIZZLE_128B moves its chunk 0 to chunk 1.
    EXPECT_EQ(smem_offset(s, 1, 0), k.swz == Swizzle::k128B ? 128u + 16 : k.pitch);
  }
  // Without swizzle, narrow rows stay dense.
  const TensorMapSpec plain = tiled_spec(DataType::kFloat16, {256, 16}, {32, 16});
  EXPECT_EQ(smem_row_pitch(plain), 64u);
  EXPECT_EQ(smem_bytes(plain), 1024u);
}

TEST(ModelLayout, SmemBytesCoversChunksSwizzledPastTheDenseEnd) {
  // With rows padded to the span, an image of rows <= the span ends on a span boundary. Rows wider
  // than the span (validate() rejects them, the model defines them) can end mid-span: 3 rows of
  // 48 B under SWIZZLE_32B are 144 dense bytes; bytes 128..143 (row 2's last chunk) have bit 7
  // set, so the swizzle moves them to 144..159, past the dense end.
  const TensorMapSpec s = tiled_spec(DataType::kUInt8, {64, 64}, {48, 3}, Swizzle::k32B);
  EXPECT_EQ(smem_row_pitch(s), 48u);
  EXPECT_EQ(transaction_bytes(s), 144u);
  EXPECT_EQ(smem_bytes(s), 160u);
  EXPECT_EQ(smem_offset(s, 2, 32), 144u);
  // 4 rows: 192 dense bytes, the last span (160..191) is full: the image ends at 192.
  TensorMapSpec four = s;
  four.box_inner_first[1] = 4;
  EXPECT_EQ(smem_bytes(four), 192u);
}

TEST(ModelLayout, OobNanBits) {
  // MEASURED (H200): the 16-bit pattern 0x7FF7 repeated over the element.
  EXPECT_EQ(oob_nan_bits(DataType::kFloat16), 0x7FF7u);
  EXPECT_EQ(oob_nan_bits(DataType::kBFloat16), 0x7FF7u);
  for (DataType t :
       {DataType::kFloat32, DataType::kFloat32Ftz, DataType::kTFloat32, DataType::kTFloat32Ftz})
    EXPECT_EQ(oob_nan_bits(t), 0x7FF77FF7u) << to_string(t);
  EXPECT_EQ(oob_nan_bits(DataType::kFloat64), 0x7FF77FF77FF77FF7ull);
  // Each is a NaN of its format (exponent all ones, fraction non-zero).
  EXPECT_EQ(oob_nan_bits(DataType::kFloat16) & 0x7C00u, 0x7C00u);
  EXPECT_NE(oob_nan_bits(DataType::kFloat16) & 0x03FFu, 0u);
  EXPECT_EQ(oob_nan_bits(DataType::kBFloat16) & 0x7F80u, 0x7F80u);
  EXPECT_NE(oob_nan_bits(DataType::kBFloat16) & 0x007Fu, 0u);
  EXPECT_TRUE(std::isnan(
      std::bit_cast<float>(static_cast<std::uint32_t>(oob_nan_bits(DataType::kFloat32)))));
  EXPECT_TRUE(std::isnan(std::bit_cast<double>(oob_nan_bits(DataType::kFloat64))));
  // Integer types have no NaN: zeros.
  for (DataType t : {DataType::kUInt8, DataType::kInt32, DataType::kUInt64})
    EXPECT_EQ(oob_nan_bits(t), 0u) << to_string(t);
  TensorMapSpec s = tiled_spec(DataType::kFloat32, {4}, {4});
  EXPECT_EQ(oob_fill_bits(s), 0u);
  s.oob_fill = OobFill::kNan;
  EXPECT_EQ(oob_fill_bits(s), 0x7FF77FF7u);
}

TEST(ModelLayout, StoredDim0LimitRoundsTheRowUpToA16ByteChunk) {
  struct Case {
    DataType t;
    std::uint64_t dim0, limit;
  };
  const Case cases[] = {
      {DataType::kBFloat16, 100, 104},  // 200 B -> 208 B
      {DataType::kFloat32, 149, 152},   // 596 B -> 608 B
      {DataType::kUInt8, 1726, 1728},   // 1726 B -> 1728 B
      {DataType::kFloat64, 1, 2},       // 8 B -> 16 B
      {DataType::kBFloat16, 64, 64},    // 128 B: already whole chunks
      {DataType::kUInt8, 16, 16},       //
      {DataType::kUInt32, 5, 8},        // 20 B -> 32 B
      {DataType::kUInt64, 3, 4},        // 24 B -> 32 B
  };
  for (const Case& k : cases) {
    const TensorMapSpec s = tiled_spec(k.t, {k.dim0, 2}, {16, 1});
    EXPECT_EQ(stored_dim0_limit(s), k.limit) << to_string(k.t) << " dims[0] = " << k.dim0;
  }
}

TEST(ModelLayout, InnerCoordinateMustStartOnA16ByteChunk) {
  // MEASURED (H200): a tiled copy whose coords[0] * element size is not a multiple of 16 B faults.
  struct Case {
    DataType t;
    std::int32_t quantum;  // elements per 16 B
  };
  const Case cases[] = {{DataType::kUInt8, 16},
                        {DataType::kBFloat16, 8},
                        {DataType::kUInt32, 4},
                        {DataType::kFloat64, 2}};
  for (const Case& k : cases) {
    ASSERT_EQ(testing::coord0_quantum(k.t), k.quantum);
    const auto es = static_cast<std::uint64_t>(element_bytes(k.t));
    const TensorMapSpec s =
        tiled_spec(k.t, {128 / es, 4}, {static_cast<std::uint32_t>(32 / es), 2});
    std::vector<std::byte> g(global_footprint_bytes(s));
    std::vector<std::byte> smem(smem_bytes(s));
    const std::vector<std::vector<std::byte>> ranks(2, smem);
    const bool reducible = reduce_supported(ReduceOp::kAdd, k.t);
    for (std::int32_t c0 : {1, k.quantum - 1, k.quantum + 1, 3 * k.quantum / 2, -1, -k.quantum + 1,
                            -k.quantum - 1, 1000 * k.quantum + 1}) {
      if (c0 % k.quantum == 0) continue;  // 3q/2 is aligned when q = 2
      SCOPED_TRACE(std::string(to_string(k.t)) + " coords[0] = " + std::to_string(c0));
      const std::int32_t c[] = {c0, 0};
      const std::string value = "coords[0] = " + std::to_string(c0);
      const std::string fix = "multiples of " + std::to_string(k.quantum) + " elements";
      expect_invalid([&] { load_box(s, g, c, smem); },
                     {"load_box", value, "not a multiple of 16 B", fix});
      expect_invalid([&] { store_box(s, smem, c, g); }, {"store_box", value, fix});
      if (reducible)
        expect_invalid([&] { reduce_box(s, ReduceOp::kAdd, smem, c, g); },
                       {"reduce_box", value, fix});
      expect_invalid([&] { (void)multicast_load(s, g, c, 0x3, 2, ranks); }, {value, fix});
    }
    // Aligned starts, negative ones and ones past the tensor included, are accepted; the rule is
    // about dimension 0 only.
    for (std::int32_t c0 : {0, k.quantum, -k.quantum, -4 * k.quantum, 1000 * k.quantum}) {
      SCOPED_TRACE(std::string(to_string(k.t)) + " coords[0] = " + std::to_string(c0));
      const std::int32_t c[] = {c0, 3};
      EXPECT_NO_THROW(load_box(s, g, c, smem));
      EXPECT_NO_THROW(store_box(s, smem, c, g));
      if (reducible) {
        EXPECT_NO_THROW(reduce_box(s, ReduceOp::kAdd, smem, c, g));
      }
      EXPECT_NO_THROW((void)multicast_load(s, g, c, 0x3, 2, ranks));
    }
  }
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
