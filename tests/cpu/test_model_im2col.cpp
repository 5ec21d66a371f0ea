// Im2col loads in the reference model, on small examples worked by hand from our reading of the
// PTX ISA's im2col mode (see im2col.hpp): bounding box [lower, dim + upper), filter base plus
// offsets, pixels W fastest then H, D, N, traversal strides on W/H/D and N (N's measured on an
// H200), OOB fill per element.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::get;
using testing::put;

// An im2col spec over dims {C, W, [H, [D,]] N} with dense strides (C rounded up to 16 B).
TensorMapSpec im2col_spec(DataType t, std::vector<std::uint64_t> dims, std::vector<int> lower,
                          std::vector<int> upper, std::uint32_t cpp, std::uint32_t ppc) {
  TensorMapSpec s;
  s.mode = Mode::kIm2col;
  s.dtype = t;
  s.rank = static_cast<int>(dims.size());
  const auto es = static_cast<std::uint64_t>(element_bytes(t));
  std::uint64_t stride = (dims[0] * es + 15) / 16 * 16;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    s.dims_inner_first[d] = dims[d];
    s.strides_bytes_inner_first[d] = d == 0 ? es : stride;
    if (d > 0) stride *= dims[d];
  }
  for (std::size_t j = 0; j < lower.size(); ++j) {
    s.pixel_box_lower_corner[j] = lower[j];
    s.pixel_box_upper_corner[j] = upper[j];
  }
  s.channels_per_pixel = cpp;
  s.pixels_per_column = ppc;
  return s;
}

// Global buffer where channel c of the pixel with linear id p (1-based, W fastest, then H, D, N)
// holds 100 * p + c, as uint32.
std::vector<std::byte> pixel_ids_u32(const TensorMapSpec& s) {
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0xEE);
  std::uint64_t pixels = 1;
  for (int d = 1; d < s.rank; ++d)
    pixels *= s.dims_inner_first[d];
  for (std::uint64_t p = 0; p < pixels; ++p) {
    std::uint64_t rest = p, offset = 0;
    for (int d = 1; d < s.rank; ++d) {
      offset += (rest % s.dims_inner_first[d]) * s.strides_bytes_inner_first[d];
      rest /= s.dims_inner_first[d];
    }
    for (std::uint64_t c = 0; c < s.dims_inner_first[0]; ++c)
      put<std::uint32_t>(g, offset + c * 4, static_cast<std::uint32_t>(100 * (p + 1) + c));
  }
  return g;
}

// Loads and returns, per pixel row, the pixel id read from channel `channel_slot` (0 if that
// element was zero-filled), checking that every channel of the row agrees.
std::vector<std::uint32_t> load_ids(const TensorMapSpec& s, const std::vector<std::byte>& g,
                                    std::vector<std::int32_t> coords,
                                    std::vector<std::uint16_t> offsets) {
  std::vector<std::byte> smem(smem_bytes(s));
  load_im2col(s, g, coords, offsets, smem);
  std::vector<std::uint32_t> ids;
  for (std::uint32_t p = 0; p < s.pixels_per_column; ++p) {
    const std::uint32_t v = get<std::uint32_t>(smem, smem_offset(s, p, 0));
    ids.push_back(v / 100);
    for (std::uint32_t k = 0; k < s.channels_per_pixel; ++k) {
      const std::uint32_t vk = get<std::uint32_t>(smem, smem_offset(s, p, k * 4));
      const std::uint32_t want = v == 0 ? 0 : v + k;
      EXPECT_EQ(vk, want) << "pixel " << p << " channel " << k;
    }
  }
  return ids;
}

TEST(ModelIm2col, WholeImageWithoutPadding) {
  // N=1, H=4, W=4, C=4 fp32-sized: 16 pixels, W fastest.
  const TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 4, 4, 1}, {0, 0}, {0, 0}, 4, 16);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0}, {0, 0}),
            (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
}

TEST(ModelIm2col, PaddedBoxStartsOutsideTheImage) {
  // lower = upper = -1 (3x3 filter, padding 1): bases W, H in [-1, 3). Row H=-1 and column W=-1
  // are outside the tensor and zero-filled.
  const TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 4, 4, 1}, {-1, -1}, {-1, -1}, 4, 16);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, -1, -1, 0}, {0, 0}),
            (std::vector<std::uint32_t>{0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11}));
  // Offsets (1, 1) move every access by one pixel right and down: exactly the image.
  EXPECT_EQ(load_ids(s, g, {0, -1, -1, 0}, {1, 1}),
            (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  // Offsets (2, 0): columns shift by two, the last two columns of each row fall past W = 4.
  EXPECT_EQ(load_ids(s, g, {0, -1, -1, 0}, {2, 0}),
            (std::vector<std::uint32_t>{0, 0, 0, 0, 2, 3, 4, 0, 6, 7, 8, 0, 10, 11, 12, 0}));
}

TEST(ModelIm2col, PixelsWrapIntoTheNextImage) {
  // N=2 images of 4x4; start at (n=0, h=1, w=3): pixel ids 8..23.
  const TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 4, 4, 2}, {0, 0}, {0, 0}, 4, 16);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(
      load_ids(s, g, {0, 3, 1, 0}, {0, 0}),
      (std::vector<std::uint32_t>{8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
  // Starting in the last image, pixels past it (n = 2) are out of bounds.
  EXPECT_EQ(load_ids(s, g, {0, 2, 3, 1}, {0, 0}),
            (std::vector<std::uint32_t>{31, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(ModelIm2col, TraversalStridesOnWAndH) {
  // 5x5 image, strides 2 on W and H: bases 0, 2, 4 in each. The 10th pixel is image n=1: OOB.
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 5, 5, 1}, {0, 0}, {0, 0}, 4, 10);
  s.element_strides_inner_first = {1, 2, 2, 1, 1};
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0}, {0, 0}),
            (std::vector<std::uint32_t>{1, 3, 5, 11, 13, 15, 21, 23, 25, 0}));
  // Offset W by 1: accessed columns 1, 3, 5 (past the edge).
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0}, {1, 0}),
            (std::vector<std::uint32_t>{2, 4, 0, 12, 14, 0, 22, 24, 0, 0}));
  // Upper corner -1 shrinks the W range to [0, 4): bases 0, 2 only.
  s.pixel_box_upper_corner = {-1, 0, 0};
  EXPECT_EQ(load_ids(s, g, {0, 2, 0, 0}, {0, 0}),
            (std::vector<std::uint32_t>{3, 11, 13, 21, 23, 0, 0, 0, 0, 0}));
}

// MEASURED (H200, first full gpu_im2col run: 593 boxes): when a column carries out of the last
// spatial dimension, n advances by N's traversal stride, not by 1.
TEST(ModelIm2col, NextImageIsNPlusItsTraversalStride) {
  // {C=4, W=3, N=5}, N stride 2: the column visits images 0, 2, 4 (ids 1-3, 7-9, 13-15); n = 6 is
  // past the tensor.
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 3, 5}, {0}, {0}, 4, 11);
  s.element_strides_inner_first = {1, 1, 2, 1, 1};
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0}, {0}),
            (std::vector<std::uint32_t>{1, 2, 3, 7, 8, 9, 13, 14, 15, 0, 0}));
  // Starting at (n=1, w=1): images 1 and 3, then n = 5 is past the tensor.
  EXPECT_EQ(load_ids(s, g, {0, 1, 1}, {0}),
            (std::vector<std::uint32_t>{5, 6, 10, 11, 12, 0, 0, 0, 0, 0, 0}));
}

TEST(ModelIm2col, NStridePastTheLastImageFillsEvenIfNPlusOneExists) {
  // The shape of the first hardware mismatch: {C=4, W=2, N=2}. With N stride 3 the second image
  // is n = 3, outside the tensor: the hardware fills it although n = 1 exists.
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 2, 2}, {0}, {0}, 4, 4);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0}, {0}), (std::vector<std::uint32_t>{1, 2, 3, 4}));
  s.element_strides_inner_first = {1, 1, 3, 1, 1};
  EXPECT_EQ(load_ids(s, g, {0, 0, 0}, {0}), (std::vector<std::uint32_t>{1, 2, 0, 0}));
}

TEST(ModelIm2col, NStrideAfterStridedSpatialDims) {
  // {C=4, W=3, H=2, N=3}, W stride 2 (bases 0, 2; the step from 2 overshoots the box end 3 and
  // restarts at 0), N stride 2: per image n the ids 1, 3, 4, 6 (+ 6n); images 0 and 2, then n = 4.
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 3, 2, 3}, {0, 0}, {0, 0}, 4, 9);
  s.element_strides_inner_first = {1, 2, 1, 2, 1};
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0}, {0, 0}),
            (std::vector<std::uint32_t>{1, 3, 4, 6, 13, 15, 16, 18, 0}));
}

TEST(ModelIm2col, Rank5CarriesFromDIntoNByItsStride) {
  // {C=4, W=2, H=2, D=2, N=4}, N stride 3: image 0 (ids 1..8), then image 3 (ids 25..).
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 2, 2, 2, 4}, {0, 0, 0}, {0, 0, 0}, 4, 10);
  s.element_strides_inner_first = {1, 1, 1, 1, 3};
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0, 0}, {0, 0, 0}),
            (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 25, 26}));
  // The traversal step itself: D = 1 is the last base of the box, so the carry lands in n.
  std::array<std::int64_t, 3> base{1, 1, 1};
  std::int64_t n = 0;
  im2col_next_pixel(s, base, n);
  EXPECT_EQ(base, (std::array<std::int64_t, 3>{0, 0, 0}));
  EXPECT_EQ(n, 3);
}

TEST(ModelIm2col, Rank3WithHaloAndOffset) {
  // {C=4, W=3, N=2}; box W in [-2, 3 + 1) = [-2, 4): six bases per image. Start at w=1, n=0,
  // offset 2: accessed w = 3, 4, 5 (n=0, all OOB), then -2+2.. = 0, 1, 2 (n=1), 3, 4 (OOB).
  const TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 3, 2}, {-2}, {1}, 4, 8);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 1, 0}, {2}), (std::vector<std::uint32_t>{0, 0, 0, 4, 5, 6, 0, 0}));
}

TEST(ModelIm2col, Rank5WalksWThenHThenD) {
  const TensorMapSpec s =
      im2col_spec(DataType::kUInt32, {4, 2, 2, 2, 1}, {0, 0, 0}, {0, 0, 0}, 4, 9);
  const auto g = pixel_ids_u32(s);
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0, 0}, {0, 0, 0}),
            (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 0}));
  // D offset 1: only the d = 1 plane is in bounds, for both base planes d = 0 (-> 1) and d = 1 (->
  // 2).
  EXPECT_EQ(load_ids(s, g, {0, 0, 0, 0, 0}, {0, 0, 1}),
            (std::vector<std::uint32_t>{5, 6, 7, 8, 0, 0, 0, 0, 0}));
}

TEST(ModelIm2col, ChannelsOutOfBoundsGetTheFill) {
  // C = 6 fp16 channels, 8 per pixel (16 B rows): channels 6, 7 of every pixel are past C.
  TensorMapSpec s = im2col_spec(DataType::kFloat16, {6, 2, 1}, {0}, {0}, 8, 2);
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0);
  for (std::uint32_t w = 0; w < 2; ++w)
    for (std::uint32_t c = 0; c < 6; ++c)
      put<std::uint16_t>(g, w * 16 + c * 2, static_cast<std::uint16_t>(0x3C00 + 10 * w + c));
  s.oob_fill = OobFill::kNan;
  std::vector<std::byte> smem(smem_bytes(s));
  // Channel starts off a 16 B chunk are fine here: the 16 B start rule is a tiled-mode rule.
  const std::int32_t c1[] = {2, 0, 0};  // channels 2..9 of pixels w = 0, 1
  const std::uint16_t off[] = {0};
  load_im2col(s, g, c1, off, smem);
  for (std::uint32_t p = 0; p < 2; ++p)
    for (std::uint32_t k = 0; k < 8; ++k) {
      const std::uint32_t ch = 2 + k;
      const std::uint16_t want = ch < 6 ? static_cast<std::uint16_t>(0x3C00 + 10 * p + ch) : 0x7FF7;
      EXPECT_EQ(get<std::uint16_t>(smem, p * 16 + k * 2), want) << p << "," << k;
    }
  const std::int32_t c2[] = {-1, 0, 0};  // channel -1 is out of bounds too
  load_im2col(s, g, c2, off, smem);
  EXPECT_EQ(get<std::uint16_t>(smem, 0), 0x7FF7);
  EXPECT_EQ(get<std::uint16_t>(smem, 2), 0x3C00);
}

TEST(ModelIm2col, RowsAreSwizzledLikeTiledRows) {
  // 32 bf16 channels = 64 B rows with SWIZZLE_64B: pixel 2 starts at byte 128 = span-row 1, so its
  // chunk 0 moves to chunk 1 (byte 144) and chunk 1 to chunk 0 (byte 128).
  TensorMapSpec s = im2col_spec(DataType::kBFloat16, {32, 4, 1}, {0}, {0}, 32, 4);
  s.swizzle = Swizzle::k64B;
  std::vector<std::byte> g(global_footprint_bytes(s));
  for (std::uint32_t w = 0; w < 4; ++w)
    for (std::uint32_t c = 0; c < 32; ++c)
      put<std::uint16_t>(g, w * 64 + c * 2, static_cast<std::uint16_t>(w * 100 + c));
  std::vector<std::byte> smem(smem_bytes(s));
  ASSERT_EQ(smem.size(), 256u);
  const std::int32_t c[] = {0, 0, 0};
  const std::uint16_t off[] = {0};
  load_im2col(s, g, c, off, smem);
  EXPECT_EQ(get<std::uint16_t>(smem, 0), 0);           // pixel 0, channel 0
  EXPECT_EQ(get<std::uint16_t>(smem, 64), 100);        // pixel 1 (span-row 0): unmoved
  EXPECT_EQ(get<std::uint16_t>(smem, 144), 200);       // pixel 2, channel 0 -> chunk 1
  EXPECT_EQ(get<std::uint16_t>(smem, 128), 208);       // pixel 2, channel 8 -> chunk 0
  EXPECT_EQ(get<std::uint16_t>(smem, 192 + 16), 300);  // pixel 3, channel 0: byte 192 -> 208
}

TEST(ModelIm2col, NarrowPixelRowsArePaddedToTheSwizzleSpan) {
  // 8 uint32 channels = 32 B rows under SWIZZLE_128B: like tiled rows (MEASURED there), pixel p
  // starts at p * 128 and its chunk j moves to chunk j ^ (p % 8); the rest of the 128 B is padding.
  TensorMapSpec s = im2col_spec(DataType::kUInt32, {8, 4, 3, 1}, {0, 0}, {0, 0}, 8, 10);
  s.swizzle = Swizzle::k128B;
  const auto g = pixel_ids_u32(s);
  std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
  ASSERT_EQ(smem.size(), 10u * 128);
  const std::int32_t c[] = {0, 0, 0, 0};
  const std::uint16_t off[] = {0, 0};
  load_im2col(s, g, c, off, smem);
  std::vector<bool> image(smem.size(), false);
  for (std::uint32_t p = 0; p < 10; ++p)
    for (std::uint32_t k = 0; k < 8; ++k) {
      const std::size_t at = p * 128 + (((k / 4) ^ (p % 8)) * 16) + (k % 4) * 4;
      EXPECT_EQ(get<std::uint32_t>(smem, at), 100 * (p + 1) + k) << p << "," << k;
      for (std::size_t b = 0; b < 4; ++b)
        image[at + b] = true;
    }
  for (std::size_t b = 0; b < smem.size(); ++b)
    if (!image[b]) {
      EXPECT_EQ(smem[b], std::byte{0xCD}) << "padding byte " << b;
    }
}

TEST(ModelIm2col, RejectsWrongArguments) {
  const TensorMapSpec s = im2col_spec(DataType::kUInt32, {4, 4, 4, 1}, {0, 0}, {0, 0}, 4, 16);
  const auto g = pixel_ids_u32(s);
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t c[] = {0, 0, 0, 0};
  const std::uint16_t one[] = {0};
  const std::uint16_t two[] = {0, 0};
  EXPECT_THROW(load_im2col(s, g, c, one, smem), std::invalid_argument);
  const std::int32_t c3[] = {0, 0, 0};
  EXPECT_THROW(load_im2col(s, g, c3, two, smem), std::invalid_argument);
  TensorMapSpec tiled = s;
  tiled.mode = Mode::kTiled;
  EXPECT_THROW(load_im2col(tiled, g, c, two, smem), std::invalid_argument);
  TensorMapSpec rank2 = s;
  rank2.rank = 2;
  EXPECT_THROW(load_im2col(rank2, g, c, two, smem), std::invalid_argument);
  EXPECT_NO_THROW(load_im2col(s, g, c, two, smem));
  // A channel start off a 16 B chunk is accepted in im2col mode (the rule is tiled-only).
  const std::int32_t odd[] = {1, 0, 0, 0};
  EXPECT_NO_THROW(load_im2col(s, g, odd, two, smem));
}

}  // namespace
}  // namespace tma::model
