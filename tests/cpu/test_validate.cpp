// The validator: one test per rule, each asserting the exact message, plus valid edge cases and
// specs that break several rules at once.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/validate.hpp"

namespace tma {
namespace {

const void* addr(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

// bf16 256 x 128 matrix (innermost first), 64 x 32 box, 128 B swizzle: valid on Hopper.
TensorMapSpec good_tiled() {
  TensorMapSpec s;
  s.mode = Mode::kTiled;
  s.dtype = DataType::kBFloat16;
  s.rank = 2;
  s.address = addr(0x10000);
  s.dims_inner_first = {256, 128, 0, 0, 0};
  s.strides_bytes_inner_first = {2, 512, 0, 0, 0};
  s.box_inner_first = {64, 32, 0, 0, 0};
  s.swizzle = Swizzle::k128B;
  return s;
}

// fp16 NC/16HWC16-style tensor with interleave 32B (rank 3, swizzle 32B): valid on Hopper.
TensorMapSpec good_interleaved() {
  TensorMapSpec s;
  s.dtype = DataType::kFloat16;
  s.rank = 3;
  s.address = addr(0x10000);
  s.dims_inner_first = {16, 32, 4, 0, 0};
  s.strides_bytes_inner_first = {2, 32, 2048, 0, 0};
  s.box_inner_first = {16, 8, 2, 0, 0};
  s.interleave = Interleave::k32B;
  s.swizzle = Swizzle::k32B;
  return s;
}

// bf16 NHWC image batch {C=64, W=16, H=16, N=2} innermost first, 3x3 filter with padding 1.
TensorMapSpec good_im2col() {
  TensorMapSpec s;
  s.mode = Mode::kIm2col;
  s.dtype = DataType::kBFloat16;
  s.rank = 4;
  s.address = addr(0x10000);
  s.dims_inner_first = {64, 16, 16, 2, 0};
  s.strides_bytes_inner_first = {2, 128, 2048, 32768, 0};
  s.pixel_box_lower_corner = {-1, -1, 0};
  s.pixel_box_upper_corner = {-1, -1, 0};
  s.channels_per_pixel = 64;
  s.pixels_per_column = 128;
  s.swizzle = Swizzle::k128B;
  return s;
}

// 16U4_ALIGN8B (Blackwell): 256 values per row = 128 B.
TensorMapSpec good_packed8() {
  TensorMapSpec s = good_tiled();
  s.dtype = DataType::k16U4Align8B;
  s.dims_inner_first = {256, 64, 0, 0, 0};
  s.strides_bytes_inner_first = {0, 128, 0, 0, 0};
  s.box_inner_first = {64, 32, 0, 0, 0};
  return s;
}

// 16U4_ALIGN16B (Blackwell): 32 B aligned, box[0] = 128.
TensorMapSpec good_packed16() {
  TensorMapSpec s = good_tiled();
  s.dtype = DataType::k16U4Align16B;
  s.dims_inner_first = {256, 64, 0, 0, 0};
  s.strides_bytes_inner_first = {0, 256, 0, 0, 0};
  s.box_inner_first = {128, 32, 0, 0, 0};
  return s;
}

// Every violation, one per line, for failure messages.
std::string describe_all(const std::vector<Violation>& v) {
  std::string s;
  for (const Violation& x : v)
    s += to_string(x) + "\n";
  return s;
}

// Asserts that `s` breaks exactly one rule, with this field, index and message.
void expect_only(const TensorMapSpec& s, Rule rule, const std::string& field, int index,
                 const std::string& message, const Limits& limits = Limits::hopper()) {
  const std::vector<Violation> v = validate(s, limits);
  ASSERT_EQ(v.size(), 1u) << describe_all(v);
  EXPECT_EQ(rule_code(v[0].rule), rule_code(rule));
  EXPECT_EQ(v[0].field, field);
  EXPECT_EQ(v[0].index, index);
  EXPECT_EQ(v[0].message, message);
}

TEST(Validate, GoodSpecsAreValid) {
  EXPECT_TRUE(validate(good_tiled()).empty());
  EXPECT_TRUE(validate(good_interleaved()).empty());
  EXPECT_TRUE(validate(good_im2col()).empty());
  EXPECT_TRUE(validate(good_packed8(), Limits::blackwell()).empty());
  EXPECT_TRUE(validate(good_packed16(), Limits::blackwell()).empty());
}

TEST(Validate, TMA001_ModeValid) {
  TensorMapSpec s = good_tiled();
  s.mode = static_cast<Mode>(7);
  expect_only(s, Rule::kModeValid, "mode", -1,
              "mode = 7 is not a tma::Mode (0 = tiled, 1 = im2col): use Mode::kTiled or "
              "Mode::kIm2col");
}

TEST(Validate, TMA002_DataTypeValid) {
  TensorMapSpec s = good_tiled();
  s.dtype = static_cast<DataType>(20);
  expect_only(s, Rule::kDataTypeValid, "dtype", -1,
              "dtype = 20 is not a tma::DataType (0..15): use one of DataType::kUInt8 .. "
              "DataType::k16U6Align16B");
}

TEST(Validate, TMA003_InterleaveValid) {
  TensorMapSpec s = good_tiled();
  s.interleave = static_cast<Interleave>(5);
  expect_only(s, Rule::kInterleaveValid, "interleave", -1,
              "interleave = 5 is not a tma::Interleave (0..2): use Interleave::kNone, k16B or "
              "k32B");
}

TEST(Validate, TMA004_SwizzleValid) {
  TensorMapSpec s = good_tiled();
  s.swizzle = static_cast<Swizzle>(9);
  expect_only(s, Rule::kSwizzleValid, "swizzle", -1,
              "swizzle = 9 is not a tma::Swizzle (0..6): use Swizzle::kNone, k32B, k64B or k128B");
}

TEST(Validate, TMA005_L2PromotionValid) {
  TensorMapSpec s = good_tiled();
  s.l2_promotion = static_cast<L2Promotion>(4);
  expect_only(s, Rule::kL2PromotionValid, "l2_promotion", -1,
              "l2_promotion = 4 is not a tma::L2Promotion (0..3): use L2Promotion::kNone, k64B, "
              "k128B or k256B");
}

TEST(Validate, TMA006_OobFillValid) {
  TensorMapSpec s = good_tiled();
  s.oob_fill = static_cast<OobFill>(2);
  expect_only(s, Rule::kOobFillValid, "oob_fill", -1,
              "oob_fill = 2 is not a tma::OobFill (0..1): use OobFill::kZero or OobFill::kNan");
}

TEST(Validate, TMA007_RankRange) {
  TensorMapSpec s = good_tiled();
  s.rank = 0;
  expect_only(s, Rule::kRankRange, "rank", -1,
              "rank = 0 is outside 1..5 for tiled mode: describe at least one dimension");
  s.rank = 6;  // the five array entries are checked, the sixth does not exist
  s.dims_inner_first = {256, 128, 1, 1, 1};
  s.strides_bytes_inner_first = {2, 512, 65536, 65536, 65536};
  s.box_inner_first = {64, 32, 1, 1, 1};
  expect_only(s, Rule::kRankRange, "rank", -1,
              "rank = 6 is outside 1..5 for tiled mode: merge adjacent dimensions whose strides "
              "nest so that at most 5 remain");
  TensorMapSpec i = good_im2col();
  i.rank = 2;
  expect_only(i, Rule::kRankRange, "rank", -1,
              "rank = 2 is outside 3..5 for im2col mode: use a 3-D (NWC), 4-D (NHWC) or 5-D "
              "(NDHWC) tensor");
}

TEST(Validate, TMA008_RankAtLeast3WithInterleave) {
  TensorMapSpec s = good_tiled();
  s.interleave = Interleave::k16B;
  expect_only(s, Rule::kRankInterleave, "rank", -1,
              "rank = 2 with interleave 16B: interleaved layouts need rank >= 3: add an outer "
              "dimension of extent 1 or use interleave none");
}

TEST(Validate, TMA009_AddressNonNull) {
  TensorMapSpec s = good_tiled();
  s.address = nullptr;
  expect_only(s, Rule::kAddressNonNull, "address", -1,
              "address = null: pass the global-memory base of the tensor (a device pointer)");
}

TEST(Validate, TMA010_AddressAligned) {
  TensorMapSpec s = good_tiled();
  s.address = addr(0x10008);
  expect_only(s, Rule::kAddressAligned, "address", -1,
              "address = 0x10008 is not 16 B aligned (it is 8 B past a 16 B boundary): offset the "
              "base by a multiple of 16 B (cudaMalloc returns 256 B aligned memory)");
  TensorMapSpec i = good_interleaved();
  i.address = addr(0x10010);
  expect_only(i, Rule::kAddressAligned, "address", -1,
              "address = 0x10010 is not 32 B aligned, which interleave 32B requires (it is 16 B "
              "past a 32 B boundary): offset the base by a multiple of 32 B (cudaMalloc returns "
              "256 B aligned memory)");
  TensorMapSpec p = good_packed16();
  p.address = addr(0x10010);
  expect_only(p, Rule::kAddressAligned, "address", -1,
              "address = 0x10010 is not 32 B aligned, which 16u4_align16b requires (it is 16 B "
              "past a 32 B boundary): offset the base by a multiple of 32 B (cudaMalloc returns "
              "256 B aligned memory)",
              Limits::blackwell());
}

TEST(Validate, TMA011_DimRange) {
  TensorMapSpec s = good_tiled();
  s.dims_inner_first[1] = 0;
  expect_only(s, Rule::kDimRange, "dims_inner_first", 1,
              "dims_inner_first[1] = 0 is outside 1..2^32: every dimension needs at least 1 "
              "element (give it extent 1 or drop it)");
  s = good_tiled();
  s.dims_inner_first[0] = (std::uint64_t{1} << 32) + 1;
  expect_only(s, Rule::kDimRange, "dims_inner_first", 0,
              "dims_inner_first[0] = 4294967297 is outside 1..2^32: split the dimension into two "
              "of at most 2^32 elements each");
  TensorMapSpec i = good_im2col();
  i.dims_inner_first[2] = std::uint64_t{1} << 31;  // H
  i.strides_bytes_inner_first[3] = std::uint64_t{1} << 39;
  expect_only(i, Rule::kDimRange, "dims_inner_first", 2,
              "dims_inner_first[2] = 2147483648 is outside 1..2^31-1, the range of an im2col "
              "pixel coordinate (signed 32-bit): split the image into parts of at most "
              "2147483647 pixels");
  i.dims_inner_first[2] = (std::uint64_t{1} << 31) - 1;
  EXPECT_TRUE(validate(i).empty());
  // With interleave the driver takes the spatial dimensions one lower (GPU sweep): C and W here.
  i.interleave = Interleave::k16B;
  i.dims_inner_first[0] = std::uint64_t{1} << 31;
  i.dims_inner_first[2] = std::uint64_t{1} << 31;  // H: now N-like, not checked
  i.strides_bytes_inner_first[1] = std::uint64_t{1} << 32;
  expect_only(i, Rule::kDimRange, "dims_inner_first", 0,
              "dims_inner_first[0] = 2147483648 is outside 1..2^31-1, the range of an im2col "
              "pixel coordinate (signed 32-bit): split the image into parts of at most "
              "2147483647 pixels");
}

TEST(Validate, TMA012_InnermostDimensionContiguous) {
  TensorMapSpec s = good_tiled();
  s.strides_bytes_inner_first[0] = 512;
  expect_only(s, Rule::kInnerStride, "strides_bytes_inner_first", 0,
              "strides_bytes_inner_first[0] = 512 B is not the 2 B element size: TMA's dimension 0 "
              "must be contiguous: make the contiguous dimension innermost (transpose the view, or "
              "copy it contiguous) or leave strides_bytes_inner_first[0] = 0");
  s.strides_bytes_inner_first[0] = 0;  // "not given" is fine
  EXPECT_TRUE(validate(s).empty());
  TensorMapSpec p = good_packed8();
  p.strides_bytes_inner_first[0] = 1;
  expect_only(p, Rule::kInnerStride, "strides_bytes_inner_first", 0,
              "strides_bytes_inner_first[0] = 1 B is not 0: dimension 0 of a packed 16u4_align8b "
              "tensor is contiguous and has no byte stride: leave strides_bytes_inner_first[0] = 0",
              Limits::blackwell());
}

TEST(Validate, TMA013_StrideMultipleOf16) {
  TensorMapSpec s = good_tiled();
  s.strides_bytes_inner_first[1] = 520;
  expect_only(s, Rule::kStrideMultiple, "strides_bytes_inner_first", 1,
              "strides_bytes_inner_first[1] = 520 B is not a multiple of 16 B: pad it to 528 B "
              "(allocate with a padded leading dimension)");
  TensorMapSpec i = good_interleaved();
  i.strides_bytes_inner_first[1] = 48;
  expect_only(i, Rule::kStrideMultiple, "strides_bytes_inner_first", 1,
              "strides_bytes_inner_first[1] = 48 B is not a multiple of 32 B, which interleave 32B "
              "requires: pad it to 64 B (allocate with a padded leading dimension)");
}

TEST(Validate, TMA014_StrideBelow2To40) {
  TensorMapSpec s = good_tiled();
  s.strides_bytes_inner_first[1] = std::uint64_t{1} << 40;
  expect_only(s, Rule::kStrideMax, "strides_bytes_inner_first", 1,
              "strides_bytes_inner_first[1] = 1099511627776 B is not below 2^40 B: split the "
              "tensor into several tensor maps along dimension 1");
}

// A lint, not a rule: the driver accepts overlapping strides (GPU sweep).
void expect_only_lint(const TensorMapSpec& s, int index, const std::string& message) {
  EXPECT_TRUE(validate(s).empty()) << describe_all(validate(s));
  const std::vector<Violation> v = lint(s);
  ASSERT_EQ(v.size(), 1u) << describe_all(v);
  EXPECT_EQ(rule_code(v[0].rule), "TMA015");
  EXPECT_EQ(v[0].field, "strides_bytes_inner_first");
  EXPECT_EQ(v[0].index, index);
  EXPECT_EQ(v[0].message, message);
}

TEST(Validate, TMA015_StrideCoversLowerDimension) {
  EXPECT_TRUE(lint(good_tiled()).empty());
  TensorMapSpec s = good_tiled();
  s.strides_bytes_inner_first[1] = 256;
  expect_only_lint(s, 1,
                   "strides_bytes_inner_first[1] = 256 B is smaller than one row of dimension 0 "
                   "(dims_inner_first[0] = 256 elements x 2 B = 512 B), so consecutive rows "
                   "overlap: use strides_bytes_inner_first[1] >= 512");
  TensorMapSpec t = good_tiled();
  t.rank = 3;
  t.dims_inner_first = {256, 4, 8, 0, 0};
  t.strides_bytes_inner_first = {2, 512, 1024, 0, 0};
  t.box_inner_first = {64, 4, 8, 0, 0};
  expect_only_lint(t, 2,
                   "strides_bytes_inner_first[2] = 1024 B is smaller than "
                   "strides_bytes_inner_first[1] x dims_inner_first[1] = 512 B x 4 = 2048 B, so "
                   "dimension 2 overlaps dimension 1: use strides_bytes_inner_first[2] >= 2048 or "
                   "order the dimensions by increasing stride");
}

TEST(Validate, TMA016_BoxRange) {
  TensorMapSpec s = good_tiled();
  s.box_inner_first[1] = 0;
  expect_only(s, Rule::kBoxRange, "box_inner_first", 1,
              "box_inner_first[1] = 0 is outside 1..256: a box needs at least 1 element in every "
              "dimension");
  s.box_inner_first[1] = 257;
  expect_only(s, Rule::kBoxRange, "box_inner_first", 1,
              "box_inner_first[1] = 257 is outside 1..256: use at most 256 elements per dimension "
              "and issue several copies");
}

TEST(Validate, TMA017_BoxInnerBytesMultipleOf16) {
  TensorMapSpec s = good_tiled();
  s.box_inner_first[0] = 12;
  expect_only(s, Rule::kBoxInnerBytes, "box_inner_first", 0,
              "box_inner_first[0] = 12 elements x 2 B = 24 B is not a multiple of 16 B: use "
              "box_inner_first[0] = 16 (a multiple of 8 elements)");
  TensorMapSpec il = good_interleaved();  // enforced with interleave too (GPU sweep)
  il.box_inner_first[0] = 12;
  expect_only(il, Rule::kBoxInnerBytes, "box_inner_first", 0,
              "box_inner_first[0] = 12 elements x 2 B = 24 B is not a multiple of 16 B: use "
              "box_inner_first[0] = 16 (a multiple of 8 elements)");
  TensorMapSpec i = good_im2col();  // and for im2col's channels (GPU sweep)
  i.channels_per_pixel = 12;
  expect_only(i, Rule::kBoxInnerBytes, "channels_per_pixel", -1,
              "channels_per_pixel = 12 x 2 B = 24 B is not a multiple of 16 B: use "
              "channels_per_pixel = 16 (a multiple of 8 channels)");
  TensorMapSpec p = good_packed8();
  p.box_inner_first[0] = 20;
  expect_only(p, Rule::kBoxInnerBytes, "box_inner_first", 0,
              "box_inner_first[0] = 20 elements of 16u4_align8b = 10 B is not a multiple of 16 B: "
              "use box_inner_first[0] = 32 (a multiple of 32 elements)",
              Limits::blackwell());
}

TEST(Validate, TMA018_ElementStrideRange) {
  TensorMapSpec s = good_tiled();
  s.element_strides_inner_first[1] = 9;
  expect_only(s, Rule::kElementStrideRange, "element_strides_inner_first", 1,
              "element_strides_inner_first[1] = 9 is outside 1..8: use a traversal step of 1..8 "
              "(1 for a dense box)");
  s.element_strides_inner_first[1] = 0;
  expect_only(s, Rule::kElementStrideRange, "element_strides_inner_first", 1,
              "element_strides_inner_first[1] = 0 is outside 1..8: use a traversal step of 1..8 "
              "(1 for a dense box)");
}

TEST(Validate, TMA019_SwizzleSpan) {
  TensorMapSpec s = good_tiled();
  s.box_inner_first[0] = 96;
  expect_only(s, Rule::kSwizzleSpan, "box_inner_first", 0,
              "box_inner_first[0] = 96 elements x 2 B = 192 B exceeds the 128 B span of "
              "SWIZZLE_128B: use box_inner_first[0] <= 64 or no swizzle");
  s = good_tiled();
  s.swizzle = Swizzle::k32B;
  s.box_inner_first[0] = 32;
  expect_only(s, Rule::kSwizzleSpan, "box_inner_first", 0,
              "box_inner_first[0] = 32 elements x 2 B = 64 B exceeds the 32 B span of "
              "SWIZZLE_32B: use box_inner_first[0] <= 16 or SWIZZLE_64B");
  TensorMapSpec i = good_im2col();
  i.channels_per_pixel = 96;
  expect_only(i, Rule::kSwizzleSpan, "channels_per_pixel", -1,
              "channels_per_pixel = 96 x 2 B = 192 B exceeds the 128 B span of SWIZZLE_128B: use "
              "channels_per_pixel <= 64 or no swizzle");
}

TEST(Validate, TMA020_Interleave32BNeedsSwizzle32B) {
  TensorMapSpec s = good_interleaved();
  s.swizzle = Swizzle::k64B;
  expect_only(s, Rule::kInterleaveSwizzle, "swizzle", -1,
              "swizzle = SWIZZLE_64B with interleave 32B: interleave 32B requires SWIZZLE_32B: use "
              "swizzle = Swizzle::k32B");
}

TEST(Validate, TMA021_SwizzleNeedsSm100) {
  TensorMapSpec s = good_tiled();
  s.swizzle = Swizzle::k128BAtom32B;
  expect_only(s, Rule::kSwizzleArch, "swizzle", -1,
              "swizzle = SWIZZLE_128B_ATOM_32B needs compute capability >= 10.0 (the target is "
              "9.0): use SWIZZLE_128B on Hopper");
  EXPECT_TRUE(validate(s, Limits::blackwell()).empty());
}

TEST(Validate, TMA022_DataTypeNeedsSm100) {
  expect_only(good_packed8(), Rule::kDataTypeArch, "dtype", -1,
              "dtype = 16u4_align8b needs compute capability >= 10.0 (the target is 9.0): unpack "
              "the values to uint8 on Hopper");
}

TEST(Validate, TMA023_PackedDim0Multiple) {
  TensorMapSpec s = good_packed8();
  s.dims_inner_first[0] = 255;
  expect_only(s, Rule::kPackedDim0, "dims_inner_first", 0,
              "dims_inner_first[0] = 255 is not a multiple of 2, which 16u4_align8b requires: pad "
              "dimension 0 to 256 elements",
              Limits::blackwell());
  TensorMapSpec t = good_packed16();
  t.dims_inner_first[0] = 200;
  expect_only(t, Rule::kPackedDim0, "dims_inner_first", 0,
              "dims_inner_first[0] = 200 is not a multiple of 128, which 16u4_align16b requires: "
              "pad dimension 0 to 256 elements",
              Limits::blackwell());
}

TEST(Validate, TMA024_PackedBox0Is128) {
  TensorMapSpec s = good_packed16();
  s.box_inner_first[0] = 64;
  expect_only(s, Rule::kPackedBox0, "box_inner_first", 0,
              "box_inner_first[0] = 64 is not 128, which 16u4_align16b requires: use "
              "box_inner_first[0] = 128",
              Limits::blackwell());
  TensorMapSpec i = good_im2col();
  i.dtype = DataType::k16U6Align16B;
  i.dims_inner_first[0] = 128;
  i.strides_bytes_inner_first = {0, 128, 2048, 32768, 0};
  i.channels_per_pixel = 64;
  expect_only(i, Rule::kPackedBox0, "channels_per_pixel", -1,
              "channels_per_pixel = 64 is not 128, which 16u6_align16b requires: use "
              "channels_per_pixel = 128",
              Limits::blackwell());
}

TEST(Validate, TMA025_PackedSwizzle) {
  TensorMapSpec s = good_packed16();
  s.swizzle = Swizzle::k128BAtom64B;  // allowed for 16U6 stores, never for 16U4_ALIGN16B
  expect_only(s, Rule::kPackedSwizzle, "swizzle", -1,
              "swizzle = SWIZZLE_128B_ATOM_64B is not supported with 16u4_align16b: use "
              "SWIZZLE_NONE, SWIZZLE_128B or SWIZZLE_128B_ATOM_32B (loads only)",
              Limits::blackwell());
  s.dtype = DataType::k16U6Align16B;
  EXPECT_TRUE(validate(s, Limits::blackwell()).empty());
}

TEST(Validate, TMA026_Packed16U6InterleaveNone) {
  TensorMapSpec s = good_packed16();
  s.dtype = DataType::k16U6Align16B;
  s.rank = 3;
  s.dims_inner_first = {256, 8, 4, 0, 0};
  s.strides_bytes_inner_first = {0, 256, 2048, 0, 0};
  s.box_inner_first = {128, 8, 4, 0, 0};
  s.interleave = Interleave::k16B;
  expect_only(s, Rule::kPackedInterleave, "interleave", -1,
              "interleave = 16B with 16u6_align16b: 16u6_align16b requires interleave none: use "
              "Interleave::kNone",
              Limits::blackwell());
}

TEST(Validate, TMA027_OobNanNeedsFloat) {
  TensorMapSpec s = good_tiled();
  s.dtype = DataType::kUInt16;
  s.oob_fill = OobFill::kNan;
  expect_only(s, Rule::kOobNanFloat, "oob_fill", -1,
              "oob_fill = nan with dtype uint16: the NaN fill exists only for floating-point "
              "types: use OobFill::kZero");
  TensorMapSpec p = good_packed8();
  p.oob_fill = OobFill::kNan;
  expect_only(p, Rule::kOobNanFloat, "oob_fill", -1,
              "oob_fill = nan with dtype 16u4_align8b: the NaN fill exists only for floating-point "
              "types, not packed integers: use OobFill::kZero",
              Limits::blackwell());
  s.dtype = DataType::kTFloat32Ftz;
  s.strides_bytes_inner_first = {4, 1024, 0, 0, 0};
  s.box_inner_first = {32, 32, 0, 0, 0};
  EXPECT_TRUE(validate(s).empty());
}

TEST(Validate, TMA028_Im2colCornerRange) {
  TensorMapSpec s = good_im2col();
  s.pixel_box_lower_corner[0] = -129;
  expect_only(s, Rule::kIm2colCornerRange, "pixel_box_lower_corner", 0,
              "pixel_box_lower_corner[0] = -129 is outside -128..127, the range of a rank-4 "
              "im2col corner: use a value in -128..127 (less padding, or a smaller filter)");
  TensorMapSpec t = good_im2col();
  t.rank = 5;
  t.dims_inner_first = {64, 16, 16, 4, 2};
  t.strides_bytes_inner_first = {2, 128, 2048, 32768, 131072};
  t.pixel_box_lower_corner = {-1, -1, -1};
  t.pixel_box_upper_corner = {-1, -1, 16};
  expect_only(t, Rule::kIm2colCornerRange, "pixel_box_upper_corner", 2,
              "pixel_box_upper_corner[2] = 16 is outside -16..15, the range of a rank-5 im2col "
              "corner: use a value in -16..15 (less padding, or a smaller filter)");
}

TEST(Validate, TMA029_Im2colBoundingBoxNonEmpty) {
  TensorMapSpec s = good_im2col();
  s.pixel_box_lower_corner[0] = 10;
  s.pixel_box_upper_corner[0] = -8;
  expect_only(s, Rule::kIm2colBoundingBox, "pixel_box_upper_corner", 0,
              "pixel_box_lower_corner[0] = 10 and pixel_box_upper_corner[0] = -8 leave an empty "
              "bounding box along dims_inner_first[1] = 16 (it spans 10 .. 16 - 1 + -8 = 7): use "
              "pixel_box_upper_corner[0] >= -5 or pixel_box_lower_corner[0] <= 7");
  // With interleave the driver measures corner i against dims_inner_first[i] (GPU sweep).
  s.interleave = Interleave::k16B;
  EXPECT_TRUE(validate(s).empty());  // 10 .. 64 - 1 - 8 along dims_inner_first[0] = 64
  s.pixel_box_lower_corner[0] = 60;
  expect_only(s, Rule::kIm2colBoundingBox, "pixel_box_upper_corner", 0,
              "pixel_box_lower_corner[0] = 60 and pixel_box_upper_corner[0] = -8 leave an empty "
              "bounding box along dims_inner_first[0] = 64 (it spans 60 .. 64 - 1 + -8 = 55): use "
              "pixel_box_upper_corner[0] >= -3 or pixel_box_lower_corner[0] <= 55");
  s.interleave = Interleave::kNone;
  s.pixel_box_lower_corner[0] = 10;
  s.pixel_box_upper_corner[0] = -5;  // exactly one pixel: lower 10 .. 16 - 1 - 5 = 10
  EXPECT_TRUE(validate(s).empty());
}

TEST(Validate, TMA030_Im2colChannelsRange) {
  TensorMapSpec s = good_im2col();
  s.channels_per_pixel = 0;
  expect_only(s, Rule::kIm2colChannelsRange, "channels_per_pixel", -1,
              "channels_per_pixel = 0 is outside 1..256: load at least 1 channel");
  s.channels_per_pixel = 257;
  expect_only(s, Rule::kIm2colChannelsRange, "channels_per_pixel", -1,
              "channels_per_pixel = 257 is outside 1..256: load at most 256 channels per copy and "
              "issue several copies along C");
}

TEST(Validate, TMA031_Im2colPixelsRange) {
  TensorMapSpec s = good_im2col();
  s.pixels_per_column = 0;
  expect_only(s, Rule::kIm2colPixelsRange, "pixels_per_column", -1,
              "pixels_per_column = 0 is outside 1..1024: load at least 1 pixel");
  s.pixels_per_column = 1025;
  expect_only(s, Rule::kIm2colPixelsRange, "pixels_per_column", -1,
              "pixels_per_column = 1025 is outside 1..1024: load at most 1024 pixels per copy and "
              "issue several copies");
}

TEST(Validate, TMA032_ArchNeedsSm90) {
  expect_only(good_tiled(), Rule::kArchTma, "limits", -1,
              "compute capability 8.6 is below 9.0: TMA needs Hopper (sm_90) or newer: run on an "
              "H100/H200 or newer GPU",
              Limits{8, 6});
}

TEST(Validate, TMA037_BoxBytesFitSmSharedMemory) {
  TensorMapSpec s = good_tiled();
  s.dtype = DataType::kFloat32;
  s.dims_inner_first = {4096, 4096, 0, 0, 0};
  s.strides_bytes_inner_first = {4, 16384, 0, 0, 0};
  s.swizzle = Swizzle::kNone;
  s.box_inner_first = {256, 256, 0, 0, 0};
  expect_only(s, Rule::kBoxBytes, "box_inner_first", 1,
              "the box traverses 256 x 256 elements x 4 B = 262144 B, more than the 233472 B one "
              "copy can move (the shared memory of an SM): use box_inner_first[1] <= 228 or split "
              "the copy");
  s.box_inner_first[1] = 228;  // 233472 B: the largest the driver takes
  EXPECT_TRUE(validate(s).empty());
  s.box_inner_first[1] = 256;
  s.element_strides_inner_first[1] = 2;  // element strides shrink what is traversed
  EXPECT_TRUE(validate(s).empty());
  TensorMapSpec i = good_im2col();
  i.channels_per_pixel = 256;
  i.pixels_per_column = 512;
  i.swizzle = Swizzle::kNone;
  expect_only(i, Rule::kBoxBytes, "pixels_per_column", -1,
              "channels_per_pixel x pixels_per_column traverses 256 x 512 elements x 2 B = 262144 "
              "B, more than the 233472 B one copy can move (the shared memory of an SM): use "
              "pixels_per_column <= 456 or split the copy");
}

TEST(Validate, TMA038_InterleavedImageFitsSmSharedMemory) {
  // uint8 with interleave 32B: box[0] = 256 counts 32 B chunks (docs/hardware-findings.md, finding
  // 12), 8 KiB per step of the outer dimensions; the driver's element count (256 x 1 x 100 B)
  // passes, the image (8 KiB x 100; dimension 1 not traversed) does not fit.
  TensorMapSpec s;
  s.dtype = DataType::kUInt8;
  s.rank = 3;
  s.address = addr(0x10000);
  s.interleave = Interleave::k32B;
  s.swizzle = Swizzle::k32B;
  s.dims_inner_first = {256, 4, 100, 0, 0};
  s.strides_bytes_inner_first = {1, 8192, 32768, 0, 0};
  s.box_inner_first = {256, 1, 100, 0, 0};
  expect_only(s, Rule::kInterleavedImageBytes, "box_inner_first", 2,
              "with interleave 32B the box moves 256 x 1 x 100 chunks of 32 B (dimension 0 counts "
              "chunks, dimension 1 is not traversed) = 819200 B of shared memory, more than the "
              "233472 B one copy can move (the shared memory of an SM): use box_inner_first[2] <= "
              "28 or split the copy");
  s.box_inner_first[2] = 28;  // 229376 B
  EXPECT_TRUE(validate(s).empty());
  s.box_inner_first = {256, 8, 28, 0, 0};  // box[1] is not traversed: still 229376 B
  EXPECT_TRUE(validate(s).empty());
}

TEST(Validate, EdgeSpecsAreValid) {
  // Rank 5, box extents of 256, dims of 2^32, the largest stride below 2^40.
  TensorMapSpec s;
  s.dtype = DataType::kUInt8;
  s.rank = 5;
  s.address = addr(0x10000);
  s.dims_inner_first = {std::uint64_t{1} << 32, 8, 2, 2, 1};
  s.strides_bytes_inner_first = {1, std::uint64_t{1} << 32, std::uint64_t{1} << 35,
                                 std::uint64_t{1} << 36, (std::uint64_t{1} << 40) - 16};
  s.box_inner_first = {256, 256, 256, 1, 256};
  s.element_strides_inner_first = {8, 8, 8, 1, 8};  // 256 x 32 x 32 x 1 x 32 B: too many
  EXPECT_FALSE(validate(s).empty());
  s.box_inner_first = {16, 256, 256, 1, 1};  // 16 x 32 x 32 = 16 KiB
  s.l2_promotion = L2Promotion::k256B;
  EXPECT_TRUE(validate(s).empty()) << describe_all(validate(s));
  // Rank 1, one element, no strides at all.
  TensorMapSpec one;
  one.dtype = DataType::kFloat64;
  one.rank = 1;
  one.address = addr(16);
  one.dims_inner_first = {1, 0, 0, 0, 0};
  one.box_inner_first = {2, 0, 0, 0, 0};  // 16 B; larger than the tensor is fine (filled)
  EXPECT_TRUE(validate(one).empty()) << describe_all(validate(one));
  // Every swizzle at its full span.
  for (Swizzle sw : {Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
    TensorMapSpec t = good_tiled();
    t.swizzle = sw;
    t.box_inner_first[0] = static_cast<std::uint32_t>(swizzle_span_bytes(sw) / 2);
    EXPECT_TRUE(validate(t).empty()) << to_string(sw);
  }
  // Im2col corner extremes of each rank.
  TensorMapSpec i = good_im2col();
  i.rank = 3;
  i.dims_inner_first = {64, 65536, 2, 0, 0};
  i.strides_bytes_inner_first = {2, 128, 128 * 65536, 0, 0};
  i.pixel_box_lower_corner = {-32768, 0, 0};
  i.pixel_box_upper_corner = {32767, 0, 0};
  i.pixels_per_column = 1024;
  i.channels_per_pixel = 64;
  EXPECT_TRUE(validate(i).empty()) << describe_all(validate(i));
}

TEST(Validate, ReportsEveryViolationInOrder) {
  TensorMapSpec s = good_tiled();
  s.address = addr(0x10004);
  s.dims_inner_first[1] = 0;
  s.strides_bytes_inner_first[1] = 100;
  s.box_inner_first = {96, 300, 0, 0, 0};
  s.element_strides_inner_first[0] = 0;
  s.dtype = DataType::kUInt32;
  s.oob_fill = OobFill::kNan;
  std::vector<Rule> rules;
  for (const Violation& v : validate(s))
    rules.push_back(v.rule);
  const std::vector<Rule> expected = {
      Rule::kAddressAligned, Rule::kDimRange,           Rule::kInnerStride, Rule::kStrideMultiple,
      Rule::kBoxRange,       Rule::kElementStrideRange, Rule::kSwizzleSpan, Rule::kOobNanFloat};
  EXPECT_EQ(rules, expected) << describe_all(validate(s));
}

TEST(Validate, CheckThrowsErrorListingEveryViolation) {
  TensorMapSpec s = good_tiled();
  s.address = nullptr;
  s.box_inner_first[1] = 0;
  try {
    check(s);
    FAIL() << "check() accepted an invalid spec";
  } catch (const Error& e) {
    ASSERT_EQ(e.violations().size(), 2u);
    EXPECT_EQ(e.driver_code(), 0);
    const std::string what = e.what();
    EXPECT_EQ(what, "invalid tensor map (2 violations): " + to_string(s) + "\n" +
                        to_string(e.violations()[0]) + "\n" + to_string(e.violations()[1]));
    EXPECT_NE(what.find("TMA009 address-non-null: address = null"), std::string::npos);
    EXPECT_NE(what.find("TMA016 box-range: box_inner_first[1] = 0"), std::string::npos);
  }
  EXPECT_NO_THROW(check(good_tiled()));
}

TEST(Rules, CodesAndNamesAreStableAndDistinct) {
  std::set<std::string_view> codes, names;
  for (int i = 1; i <= kNumRules; ++i) {
    const Rule r = static_cast<Rule>(i);
    char expected[8];
    std::snprintf(expected, sizeof expected, "TMA%03d", i);
    EXPECT_EQ(rule_code(r), expected);
    codes.insert(rule_code(r));
    names.insert(rule_name(r));
    for (char c : rule_name(r))
      EXPECT_TRUE(c == '-' || c == '^' || std::islower(c) || std::isdigit(c));
  }
  EXPECT_EQ(codes.size(), std::size_t(kNumRules));
  EXPECT_EQ(names.size(), std::size_t(kNumRules));
  EXPECT_EQ(rule_code(Rule::kBoxInnerBytes), "TMA017");
  EXPECT_EQ(rule_name(Rule::kBoxInnerBytes), "box-inner-bytes-multiple-of-16");
  EXPECT_EQ(rule_code(static_cast<Rule>(0)), "TMA???");
}

}  // namespace
}  // namespace tma
