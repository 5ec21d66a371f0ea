// Properties of the shared enums and the spec helpers.
#include <gtest/gtest.h>

#include "tma/host/spec.hpp"
#include "tma/model/swizzle.hpp"

namespace tma {
namespace {

TEST(Types, ElementSizes) {
  EXPECT_EQ(element_bytes(DataType::kUInt8), 1);
  EXPECT_EQ(element_bytes(DataType::kBFloat16), 2);
  EXPECT_EQ(element_bytes(DataType::kTFloat32Ftz), 4);
  EXPECT_EQ(element_bytes(DataType::kFloat64), 8);
  EXPECT_EQ(element_bits(DataType::k16U6Align16B), 6);
  EXPECT_TRUE(is_packed(DataType::k16U4Align8B));
  EXPECT_FALSE(is_floating_point(DataType::kInt64));
  EXPECT_TRUE(is_floating_point(DataType::kBFloat16));
}

TEST(Spec, TransactionBytesCountsElementStrides) {
  TensorMapSpec s;
  s.dtype = DataType::kFloat32;
  s.rank = 3;
  s.box_inner_first = {8, 5, 7, 0, 0};
  s.element_strides_inner_first = {4, 2, 3, 1, 1};
  // Dimension 0's stride is ignored without interleave: 8 * ceil(5/2) * ceil(7/3) * 4 B.
  EXPECT_EQ(transaction_bytes(s), 8u * 3u * 3u * 4u);
  EXPECT_EQ(smem_alignment(s), 128);
  s.swizzle = Swizzle::k128B;
  EXPECT_EQ(smem_alignment(s), 1024);
}

TEST(Swizzle, MatchesDocumentedXorPattern) {
  // Row r of a 1024 B SWIZZLE_128B atom: 16 B chunk c lands at chunk c ^ r.
  for (std::uint32_t r = 0; r < 8; ++r)
    for (std::uint32_t c = 0; c < 8; ++c)
      EXPECT_EQ(swizzle_offset(Swizzle::k128B, r * 128 + c * 16 + 3), r * 128 + ((c ^ r) * 16) + 3);
  EXPECT_EQ(swizzle_offset(Swizzle::k32B, 128 + 0), 128u + 16u);
  EXPECT_EQ(swizzle_offset(Swizzle::kNone, 1000), 1000u);
}

}  // namespace
}  // namespace tma
