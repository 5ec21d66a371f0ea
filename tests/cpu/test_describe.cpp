// describe(): the report tma-info prints.
#include <gtest/gtest.h>

#include <string>

#include "tma/host/builder.hpp"
#include "tma/host/describe.hpp"
#include "tma/model/swizzle.hpp"

namespace tma {
namespace {

const void* addr(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Describe, ValidSpecReport) {
  const TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {}, {128, 64},
                                                {.swizzle = Swizzle::k128B});
  const std::string r = describe(s);
  EXPECT_TRUE(contains(r, "spec:        " + to_string(s) + "\n")) << r;
  EXPECT_TRUE(contains(r, "target:      compute capability 9.0\n")) << r;
  EXPECT_TRUE(contains(r, "validation:  VALID\n")) << r;
  EXPECT_TRUE(contains(r,
                       "box:         64 x 128 elements, innermost first (row-major 128 x 64); "
                       "inner row 128 B\n"))
      << r;
  EXPECT_TRUE(contains(r, "transaction: 16384 B per copy")) << r;
  EXPECT_TRUE(contains(r, "smem align:  1024 B (SWIZZLE_128B repeats every 1024 B")) << r;
  EXPECT_TRUE(contains(r, "global:      base 16 B aligned, strides multiples of 16 B\n")) << r;
  EXPECT_TRUE(contains(r, "  line 1 ( 128 B)  9  8 11 10 13 12 15 14\n")) << r;
  EXPECT_TRUE(contains(r, "  line 7 ( 896 B) 63 62 61 60 59 58 57 56\n")) << r;
}

TEST(Describe, InvalidSpecListsEveryViolation) {
  TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10008), {4096, 4096}, {}, {128, 96},
                                          {.swizzle = Swizzle::k128B});
  const std::string r = describe(s);
  EXPECT_TRUE(contains(r, "validation:  INVALID, 2 violations\n")) << r;
  EXPECT_TRUE(contains(r, "  TMA010 address-aligned: address = 0x10008 is not 16 B aligned")) << r;
  EXPECT_TRUE(contains(r,
                       "  TMA019 swizzle-span: box_inner_first[0] = 96 elements x 2 B = 192 B "
                       "exceeds the 128 B span of SWIZZLE_128B: use box_inner_first[0] <= 64 "
                       "or no swizzle\n"))
      << r;
  EXPECT_TRUE(contains(r, "transaction: 24576 B per copy")) << r;
}

TEST(Describe, LargeBoxExceedsSharedMemory) {
  const TensorMapSpec s = make_tiled_spec<float>(addr(0x10000), {1024, 1024}, {}, {256, 256});
  EXPECT_TRUE(contains(describe(s),
                       "transaction: 262144 B per copy (the byte count for "
                       "arrive_expect_tx); exceeds the 232448 B of shared memory a "
                       "Hopper block can use\n"));
}

TEST(Describe, Im2colReport) {
  const TensorMapSpec s = make_im2col_spec(DataType::kBFloat16, addr(0x10000), {2, 16, 16, 64}, {},
                                           {-1, -1}, {-1, -1}, 32, 128, {.swizzle = Swizzle::k64B});
  const std::string r = describe(s);
  EXPECT_TRUE(contains(r, "validation:  VALID\n")) << r;
  EXPECT_TRUE(contains(r,
                       "box:         32 x 128 elements, innermost first (channels_per_pixel x "
                       "pixels_per_column); inner row 64 B\n"))
      << r;
  EXPECT_TRUE(contains(r, "transaction: 8192 B per copy")) << r;
  EXPECT_TRUE(contains(r, "smem align:  512 B")) << r;
}

TEST(Describe, SwizzlePictureUsesTheSharedSwizzleFunction) {
  EXPECT_EQ(swizzle_picture(Swizzle::kNone), "");
  EXPECT_EQ(swizzle_picture(Swizzle::k128BAtom32B), "");
  EXPECT_EQ(swizzle_picture(Swizzle::k32B),
            "           chunk  0  1  2  3  4  5  6  7\n"
            "  line 0 (   0 B)  0  1  2  3  4  5  6  7\n"
            "  line 1 ( 128 B)  9  8 11 10 13 12 15 14\n");
  const std::string p64 = swizzle_picture(Swizzle::k64B);
  EXPECT_TRUE(contains(p64, "  line 3 ( 384 B) 27 26 25 24 31 30 29 28\n")) << p64;
  EXPECT_FALSE(contains(p64, "line 4"));
  // Every cell agrees with swizzle_offset.
  const std::string p = swizzle_picture(Swizzle::k128B);
  for (std::uint32_t line = 0; line < 8; ++line) {
    std::string row = "  line " + std::to_string(line);
    const std::size_t at = p.find(row);
    ASSERT_NE(at, std::string::npos);
    const std::string cells = p.substr(at + 17, 24);
    for (std::uint32_t c = 0; c < 8; ++c) {
      EXPECT_EQ(std::stoi(cells.substr(c * 3, 3)),
                int(swizzle_offset(Swizzle::k128B, line * 128 + c * 16) / 16));
    }
  }
}

TEST(Describe, AtomSwizzleIsNotModelled) {
  TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10000), {64, 64}, {}, {64, 64},
                                          {.swizzle = Swizzle::k128BAtom64B});
  const std::string r = describe(s, Limits::blackwell());
  EXPECT_TRUE(contains(r, "validation:  VALID\n")) << r;
  EXPECT_TRUE(contains(r,
                       "swizzle:     SWIZZLE_128B_ATOM_64B is not modelled (compute "
                       "capability >= 10 only)\n"))
      << r;
}

TEST(Describe, GarbageEnumsStopAfterTheViolations) {
  TensorMapSpec s;
  s.dtype = static_cast<DataType>(99);
  const std::string r = describe(s);
  EXPECT_TRUE(contains(r, "TMA002 dtype-valid")) << r;
  EXPECT_FALSE(contains(r, "transaction:")) << r;
}

}  // namespace
}  // namespace tma
