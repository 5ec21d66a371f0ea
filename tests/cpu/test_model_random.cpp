// Seeded random property tests of the reference model over thousands of random specs:
//   * load_box equals an independent naive gather,
//   * load then store into zeros reproduces exactly the box's stored elements (in-bounds ones,
//     plus those past dims[0] in the row's last 16 B chunk, which get the load's fill),
//   * storing a loaded box back changes only those padding elements, reduce xor of a loaded box
//     clears exactly its in-bounds elements,
//   * a swizzled image is the unswizzled one, rows padded to the span, permuted by swizzle_offset,
//   * load_im2col equals an independent mixed-radix im2col oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::naive_box;
using testing::naive_load;
using testing::random_bytes;

constexpr DataType kTypes[] = {DataType::kUInt8,   DataType::kUInt16,  DataType::kFloat16,
                               DataType::kInt32,   DataType::kFloat32, DataType::kUInt64,
                               DataType::kFloat64, DataType::kBFloat16};

int pick(std::mt19937& rng, int lo, int hi) {  // inclusive
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A random tiled spec the validator would accept (rows multiple of 16 B, inner box within the
// swizzle span, strides multiple of 16 B), kept small enough for exhaustive checks.
TensorMapSpec random_tiled(std::mt19937& rng) {
  TensorMapSpec s;
  s.dtype = kTypes[pick(rng, 0, 7)];
  s.rank = pick(rng, 1, 5);
  const int es = element_bytes(s.dtype);
  const Swizzle swizzles[] = {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};
  s.swizzle = swizzles[pick(rng, 0, 3)];
  const int max_row = s.swizzle == Swizzle::kNone ? 64 : swizzle_span_bytes(s.swizzle);
  const int row_bytes = 16 * pick(rng, 1, max_row / 16);
  s.box_inner_first[0] = static_cast<std::uint32_t>(row_bytes / es);
  s.dims_inner_first[0] =
      static_cast<std::uint64_t>(pick(rng, 1, 2 * static_cast<int>(s.box_inner_first[0]) + 3));
  std::uint64_t stride = (s.dims_inner_first[0] * es + 15) / 16 * 16 + 16 * pick(rng, 0, 2);
  s.strides_bytes_inner_first[0] = static_cast<std::uint64_t>(es);
  s.element_strides_inner_first[0] = static_cast<std::uint32_t>(pick(rng, 1, 8));  // ignored
  for (int d = 1; d < s.rank; ++d) {
    s.dims_inner_first[d] = static_cast<std::uint64_t>(pick(rng, 1, 7));
    s.box_inner_first[d] = static_cast<std::uint32_t>(pick(rng, 1, 6));
    s.element_strides_inner_first[d] = static_cast<std::uint32_t>(pick(rng, 1, 3));
    s.strides_bytes_inner_first[d] = stride;
    stride = stride * s.dims_inner_first[d] + 16 * pick(rng, 0, 1);
  }
  s.oob_fill = is_floating_point(s.dtype) && pick(rng, 0, 1) ? OobFill::kNan : OobFill::kZero;
  return s;
}

// Random box start, coords[0] on a 16 B chunk (other starts fault on hardware and the model
// rejects them).
std::vector<std::int32_t> random_coords(std::mt19937& rng, const TensorMapSpec& s) {
  std::vector<std::int32_t> c(s.rank);
  for (int d = 1; d < s.rank; ++d) {
    const int box = static_cast<int>(s.box_inner_first[d]);
    c[d] = pick(rng, -box - 1, static_cast<int>(s.dims_inner_first[d]) + 1);
  }
  const int q = testing::coord0_quantum(s.dtype);
  const int box0 = static_cast<int>(s.box_inner_first[0]);
  c[0] = q * pick(rng, (-box0 - q) / q, (static_cast<int>(s.dims_inner_first[0]) + q) / q);
  if (pick(rng, 0, 9) == 0) c[pick(rng, 0, s.rank - 1)] = pick(rng, 0, 1) ? 1 << 30 : -(1 << 30);
  return c;
}

// The global buffer after storing a box loaded from `x` onto `base`: stored elements in bounds
// carry x's bytes, stored elements past dims[0] carry the load's OOB fill.
std::vector<std::byte> stored_image(const TensorMapSpec& s, std::span<const std::byte> x,
                                    std::span<const std::int32_t> c, std::vector<std::byte> base) {
  const std::size_t es = element_size(s);
  const std::uint64_t fill = oob_fill_bits(s);
  for (const auto& e : naive_box(s, c))
    if (e.stored)
      for (std::size_t b = 0; b < es; ++b)
        base[e.global + b] =
            e.in_bounds ? x[e.global + b] : static_cast<std::byte>((fill >> (8 * b)) & 0xFF);
  return base;
}

TEST(ModelRandom, TiledLoadStoreProperties) {
  std::mt19937 rng(20240601);
  for (int trial = 0; trial < 4000; ++trial) {
    const TensorMapSpec s = random_tiled(rng);
    const auto c = random_coords(rng, s);
    const std::size_t es = element_size(s);
    const auto x = random_bytes(global_footprint_bytes(s), static_cast<std::uint32_t>(trial));
    SCOPED_TRACE(to_string(s) + " trial " + std::to_string(trial));

    std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
    // Rows are at most one span wide here and padded to the span under a swizzle (MEASURED):
    // the image is exactly rows * max(row bytes, span).
    const std::size_t row_bytes = box_extent(s, 0) * es;
    const std::size_t span = static_cast<std::size_t>(swizzle_span_bytes(s.swizzle));
    const std::size_t pitch = std::max(row_bytes, span);
    ASSERT_EQ(smem.size(), transaction_bytes(s) / row_bytes * pitch);
    load_box(s, x, c, smem);
    ASSERT_EQ(smem, naive_load(s, x, c, smem.size(), oob_fill_bits(s)));

    // The poison is 0xA5, never a fill byte (0x00, 0xF7 or 0x7F), so written fill shows.
    std::vector<std::byte> poisoned = filled(x.size(), 0xA5);
    store_box(s, smem, c, poisoned);
    ASSERT_EQ(poisoned, stored_image(s, x, c, filled(x.size(), 0xA5)));

    std::vector<std::byte> same = x;
    store_box(s, smem, c, same);
    ASSERT_EQ(same, stored_image(s, x, c, x));

    if (reduce_supported(ReduceOp::kXor, s.dtype)) {
      // x ^= its own loaded box: in-bounds elements become 0, padding elements in the last chunk
      // xor the zero fill (integer types) and keep their bytes, the rest is untouched.
      std::vector<std::byte> xored = x;
      reduce_box(s, ReduceOp::kXor, smem, c, xored);
      std::vector<std::byte> want = x;
      for (const auto& e : naive_box(s, c))
        if (e.in_bounds)
          for (std::size_t b = 0; b < es; ++b)
            want[e.global + b] = std::byte{0};
      ASSERT_EQ(xored, want);
    }

    if (s.swizzle != Swizzle::kNone) {
      TensorMapSpec plain = s;
      plain.swizzle = Swizzle::kNone;
      std::vector<std::byte> flat(smem_bytes(plain));
      load_box(plain, x, c, flat);
      std::vector<bool> image(smem.size(), false);
      for (std::uint32_t i = 0; i < flat.size(); ++i) {
        const auto at = static_cast<std::uint32_t>(i / row_bytes * pitch + i % row_bytes);
        ASSERT_EQ(smem[swizzle_offset(s.swizzle, at)], flat[i]) << i;
        image[swizzle_offset(s.swizzle, at)] = true;
      }
      for (std::size_t b = 0; b < smem.size(); ++b)
        if (!image[b]) {
          ASSERT_EQ(smem[b], std::byte{0xCD}) << "padding byte " << b;
        }
    }
  }
}

TEST(ModelRandom, ReduceAddOfItselfDoublesIntegers) {
  std::mt19937 rng(77);
  int checked = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    TensorMapSpec s = random_tiled(rng);
    if (s.dtype != DataType::kInt32 && s.dtype != DataType::kUInt64) continue;
    ++checked;
    const auto c = random_coords(rng, s);
    const auto x = random_bytes(global_footprint_bytes(s), static_cast<std::uint32_t>(trial));
    std::vector<std::byte> smem(smem_bytes(s));
    load_box(s, x, c, smem);
    std::vector<std::byte> g = x;
    reduce_box(s, ReduceOp::kAdd, smem, c, g);
    std::vector<std::byte> want = x;
    const std::size_t es = element_size(s);
    for (const auto& e : naive_box(s, c))
      if (e.stored) {
        // Padding elements past dims[0] add the load's zero fill.
        const std::uint64_t v = read_element(x, e.global, es);
        write_element(want, e.global, es,
                      reduce_element(ReduceOp::kAdd, s.dtype, v, e.in_bounds ? v : 0));
      }
    ASSERT_EQ(g, want) << to_string(s);
  }
  EXPECT_GT(checked, 100);
}

// Independent im2col oracle: enumerates the filter bases of one image in W-fastest order as a
// list, finds the start in it, and maps pixel p to list[(start + p) % size] in image
// n0 + (start + p) / size.
std::vector<std::byte> naive_im2col(const TensorMapSpec& s, const std::vector<std::byte>& g,
                                    const std::vector<std::int32_t>& c,
                                    const std::vector<std::uint16_t>& off, std::size_t smem_size) {
  const int r = s.rank;
  const std::size_t es = element_size(s);
  std::vector<std::array<std::int64_t, 3>> bases;
  std::array<std::int64_t, 3> lo{0, 0, 0}, hi{1, 1, 1}, st{1, 1, 1};
  for (int j = 0; j < r - 2; ++j) {
    lo[j] = s.pixel_box_lower_corner[j];
    hi[j] = static_cast<std::int64_t>(s.dims_inner_first[1 + j]) + s.pixel_box_upper_corner[j];
    st[j] = s.element_strides_inner_first[1 + j];
  }
  for (std::int64_t d = lo[2]; d < hi[2]; d += st[2])
    for (std::int64_t h = lo[1]; h < hi[1]; h += st[1])
      for (std::int64_t w = lo[0]; w < hi[0]; w += st[0])
        bases.push_back({w, h, d});
  std::size_t start = bases.size();
  for (std::size_t i = 0; i < bases.size(); ++i) {
    bool eq = true;
    for (int j = 0; j < r - 2; ++j)
      eq = eq && bases[i][j] == c[1 + j];
    if (eq) start = i;
  }
  EXPECT_LT(start, bases.size());
  std::vector<std::byte> smem = filled(smem_size, 0xCD);
  const std::uint64_t fill = oob_fill_bits(s);
  // Pixel rows narrower than the swizzle span are padded to it, like tiled rows.
  const std::size_t pitch = testing::naive_row_pitch(s, s.channels_per_pixel * es);
  for (std::size_t p = 0; p < s.pixels_per_column; ++p) {
    const std::size_t at = start + p;
    const auto& b = bases[at % bases.size()];
    const std::int64_t n = c[r - 1] + static_cast<std::int64_t>(at / bases.size());
    for (std::size_t k = 0; k < s.channels_per_pixel; ++k) {
      std::array<std::int64_t, 5> idx{};
      idx[0] = c[0] + static_cast<std::int64_t>(k);
      for (int j = 0; j < r - 2; ++j)
        idx[1 + j] = b[j] + off[j];
      idx[r - 1] = n;
      bool in = true;
      std::uint64_t go = 0;
      for (int d = 0; d < r; ++d) {
        if (idx[d] < 0 || static_cast<std::uint64_t>(idx[d]) >= s.dims_inner_first[d])
          in = false;
        else
          go += static_cast<std::uint64_t>(idx[d]) * (d == 0 ? es : s.strides_bytes_inner_first[d]);
      }
      const auto lin = static_cast<std::uint32_t>(p * pitch + k * es);
      const std::size_t so = swizzle_offset(s.swizzle, lin);
      for (std::size_t byte = 0; byte < es; ++byte)
        smem[so + byte] = in ? g[go + byte] : static_cast<std::byte>((fill >> (8 * byte)) & 0xFF);
    }
  }
  return smem;
}

TEST(ModelRandom, Im2colAgreesWithMixedRadixOracle) {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 2500; ++trial) {
    TensorMapSpec s;
    s.mode = Mode::kIm2col;
    s.dtype = kTypes[pick(rng, 0, 7)];
    s.rank = pick(rng, 3, 5);
    const int es = element_bytes(s.dtype);
    const Swizzle swizzles[] = {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};
    s.swizzle = swizzles[pick(rng, 0, 3)];
    const int max_row = s.swizzle == Swizzle::kNone ? 64 : swizzle_span_bytes(s.swizzle);
    s.channels_per_pixel = static_cast<std::uint32_t>(16 * pick(rng, 1, max_row / 16) / es);
    s.dims_inner_first[0] =
        static_cast<std::uint64_t>(pick(rng, 1, 2 * static_cast<int>(s.channels_per_pixel)));
    std::uint64_t stride = (s.dims_inner_first[0] * es + 15) / 16 * 16;
    s.strides_bytes_inner_first[0] = static_cast<std::uint64_t>(es);
    for (int d = 1; d < s.rank; ++d) {
      s.dims_inner_first[d] = static_cast<std::uint64_t>(pick(rng, 1, d == s.rank - 1 ? 3 : 6));
      s.strides_bytes_inner_first[d] = stride;
      stride *= s.dims_inner_first[d];
    }
    std::vector<std::int32_t> c(s.rank);
    std::vector<std::uint16_t> off(s.rank - 2);
    for (int j = 0; j < s.rank - 2; ++j) {
      const int dim = static_cast<int>(s.dims_inner_first[1 + j]);
      s.pixel_box_lower_corner[j] = pick(rng, -2, 1);
      s.pixel_box_upper_corner[j] = pick(rng, -2, 2);
      if (dim + s.pixel_box_upper_corner[j] <= s.pixel_box_lower_corner[j])
        s.pixel_box_upper_corner[j] = s.pixel_box_lower_corner[j] - dim + 1;  // non-empty box
      s.element_strides_inner_first[1 + j] = static_cast<std::uint32_t>(pick(rng, 1, 3));
      // Start on the stride grid inside the box.
      const int count = (dim + s.pixel_box_upper_corner[j] - s.pixel_box_lower_corner[j] +
                         static_cast<int>(s.element_strides_inner_first[1 + j]) - 1) /
                        static_cast<int>(s.element_strides_inner_first[1 + j]);
      c[1 + j] = s.pixel_box_lower_corner[j] +
                 pick(rng, 0, count - 1) * static_cast<int>(s.element_strides_inner_first[1 + j]);
      off[j] = static_cast<std::uint16_t>(pick(rng, 0, 3));
    }
    // Any channel start: the 16 B start rule is a tiled-mode rule.
    c[0] = pick(rng, -2, static_cast<int>(s.dims_inner_first[0]));
    c[s.rank - 1] = pick(rng, 0, static_cast<int>(s.dims_inner_first[s.rank - 1]) - 1);
    s.pixels_per_column = static_cast<std::uint32_t>(pick(rng, 1, 40));
    s.oob_fill = is_floating_point(s.dtype) && pick(rng, 0, 1) ? OobFill::kNan : OobFill::kZero;
    SCOPED_TRACE(to_string(s) + " trial " + std::to_string(trial));

    const auto g = random_bytes(global_footprint_bytes(s), static_cast<std::uint32_t>(trial));
    std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
    load_im2col(s, g, c, off, smem);
    ASSERT_EQ(smem, naive_im2col(s, g, c, off, smem.size()));
  }
}

}  // namespace
}  // namespace tma::model
