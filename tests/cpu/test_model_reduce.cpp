// Reduce-stores in the reference model: the PTX ISA's op/type table, every op on every allowed
// type with hand-computed values (wrap-around, inc/dec edges, rounding ties, signed zeros, NaN,
// subnormals), the exactness of the float conversions, and reduce_box's clipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using D = DataType;
using R = ReduceOp;

std::uint64_t f32(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

// The PTX ISA's table, less the signed bitwise forms: MEASURED (H200) .and on an INT64 map faults,
// so the model leaves and / or / xor on int32 / int64 out until hardware shows they work.
TEST(ModelReduce, SupportTableMatchesPtxIsa) {
  const std::vector<D> add = {D::kUInt32,  D::kInt32,   D::kUInt64,
                              D::kFloat32, D::kFloat16, D::kBFloat16};
  const std::vector<D> minmax = {D::kUInt32, D::kInt32,   D::kUInt64,
                                 D::kInt64,  D::kFloat16, D::kBFloat16};
  const std::vector<D> incdec = {D::kUInt32};
  const std::vector<D> bits = {D::kUInt32, D::kUInt64};
  auto in = [](const std::vector<D>& v, D t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const auto t = static_cast<D>(ti);
    EXPECT_EQ(reduce_supported(R::kAdd, t), in(add, t)) << to_string(t);
    EXPECT_EQ(reduce_supported(R::kMin, t), in(minmax, t)) << to_string(t);
    EXPECT_EQ(reduce_supported(R::kMax, t), in(minmax, t)) << to_string(t);
    EXPECT_EQ(reduce_supported(R::kInc, t), in(incdec, t)) << to_string(t);
    EXPECT_EQ(reduce_supported(R::kDec, t), in(incdec, t)) << to_string(t);
    for (R op : {R::kAnd, R::kOr, R::kXor})
      EXPECT_EQ(reduce_supported(op, t), in(bits, t)) << to_string(t);
  }
}

TEST(ModelReduce, UnsupportedCombinationsAreRejected) {
  EXPECT_THROW(reduce_element(R::kAdd, D::kFloat64, 0, 0), std::invalid_argument);
  EXPECT_THROW(reduce_element(R::kAdd, D::kInt64, 0, 0), std::invalid_argument);
  EXPECT_THROW(reduce_element(R::kMin, D::kFloat32, 0, 0), std::invalid_argument);
  EXPECT_THROW(reduce_element(R::kInc, D::kInt32, 0, 0), std::invalid_argument);
  EXPECT_THROW(reduce_element(R::kXor, D::kFloat16, 0, 0), std::invalid_argument);
  EXPECT_THROW(reduce_element(R::kAdd, D::kUInt8, 0, 0), std::invalid_argument);
  const TensorMapSpec s = testing::tiled_spec(D::kFloat64, {4}, {2});
  std::vector<std::byte> g(global_footprint_bytes(s)), smem(smem_bytes(s));
  const std::int32_t c[] = {0};
  try {
    reduce_box(s, R::kAdd, smem, c, g);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("reduce_box: reduce add on element type float64"),
              std::string::npos)
        << e.what();
  }
}

TEST(ModelReduce, IntegerAddWraps) {
  EXPECT_EQ(reduce_element(R::kAdd, D::kUInt32, 0xFFFFFFFFu, 2), 1u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kInt32, 0xFFFFFFFBu /* -5 */, 3), 0xFFFFFFFEu /* -2 */);
  EXPECT_EQ(reduce_element(R::kAdd, D::kInt32, 0x7FFFFFFFu, 1), 0x80000000u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kUInt64, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull),
            0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(reduce_element(R::kAdd, D::kUInt64, 0xFFFFFFFFull, 1), 0x100000000ull);
}

TEST(ModelReduce, IntegerMinMaxSignedness) {
  EXPECT_EQ(reduce_element(R::kMin, D::kUInt32, 0x80000000u, 1), 1u);
  EXPECT_EQ(reduce_element(R::kMin, D::kInt32, 0x80000000u, 1), 0x80000000u);
  EXPECT_EQ(reduce_element(R::kMax, D::kUInt32, 0x80000000u, 1), 0x80000000u);
  EXPECT_EQ(reduce_element(R::kMax, D::kInt32, 0x80000000u, 1), 1u);
  EXPECT_EQ(reduce_element(R::kMax, D::kInt32, 0xFFFFFFFFu /* -1 */, 0xFFFFFFFEu /* -2 */),
            0xFFFFFFFFu);
  EXPECT_EQ(reduce_element(R::kMin, D::kUInt64, 0x8000000000000000ull, 7), 7u);
  EXPECT_EQ(reduce_element(R::kMin, D::kInt64, 0x8000000000000000ull, 7), 0x8000000000000000ull);
  EXPECT_EQ(reduce_element(R::kMax, D::kInt64, 0xFFFFFFFFFFFFFFFFull, 0), 0u);
  EXPECT_EQ(reduce_element(R::kMax, D::kUInt64, 0xFFFFFFFFFFFFFFFFull, 0), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(reduce_element(R::kMin, D::kUInt32, 9, 9), 9u);
}

TEST(ModelReduce, IncAndDecEdges) {
  // inc(old, src) = old >= src ? 0 : old + 1
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 4, 5), 5u);
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 5, 5), 0u);
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 7, 5), 0u);
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 0, 0), 0u);
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 0xFFFFFFFEu, 0xFFFFFFFFu), 0xFFFFFFFFu);
  EXPECT_EQ(reduce_element(R::kInc, D::kUInt32, 0xFFFFFFFFu, 0xFFFFFFFFu), 0u);
  // dec(old, src) = (old == 0 || old > src) ? src : old - 1
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 0, 9), 9u);
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 10, 9), 9u);
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 9, 9), 8u);
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 1, 9), 0u);
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 0, 0), 0u);
  EXPECT_EQ(reduce_element(R::kDec, D::kUInt32, 0xFFFFFFFFu, 0xFFFFFFFFu), 0xFFFFFFFEu);
}

TEST(ModelReduce, BitwiseOps) {
  for (D t : {D::kUInt32}) {
    EXPECT_EQ(reduce_element(R::kAnd, t, 0xF0F0FF00u, 0x0FF0F0F0u), 0x00F0F000u);
    EXPECT_EQ(reduce_element(R::kOr, t, 0xF0F0FF00u, 0x0FF0F0F0u), 0xFFF0FFF0u);
    EXPECT_EQ(reduce_element(R::kXor, t, 0xF0F0FF00u, 0x0FF0F0F0u), 0xFF000FF0u);
  }
  for (D t : {D::kUInt64}) {
    EXPECT_EQ(reduce_element(R::kAnd, t, 0xFFFF0000FFFF0000ull, 0xFF00FF00FF00FF00ull),
              0xFF000000FF000000ull);
    EXPECT_EQ(reduce_element(R::kOr, t, 0xFFFF0000FFFF0000ull, 0xFF00FF00FF00FF00ull),
              0xFFFFFF00FFFFFF00ull);
    EXPECT_EQ(reduce_element(R::kXor, t, 0xFFFF0000FFFF0000ull, 0xFF00FF00FF00FF00ull),
              0x00FFFF0000FFFF00ull);
  }
  for (D t : {D::kInt32, D::kInt64})
    for (R op : {R::kAnd, R::kOr, R::kXor})
      EXPECT_THROW(reduce_element(op, t, 1, 1), std::invalid_argument) << to_string(t);
}

TEST(ModelReduce, Float32AddRoundsToNearestEvenAndKeepsSubnormals) {
  // 1 + 2^-24 is halfway between 1 and 1 + 2^-23: ties to the even 1.
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(1.0f), f32(0x1p-24f)), 0x3F800000u);
  // 1 + 3 * 2^-24 is halfway between 1 + 2^-23 (odd) and 1 + 2^-22 (even).
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(1.0f), f32(0x1.8p-23f)), 0x3F800002u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(1.5f), f32(2.25f)), f32(3.75f));
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(1.0f), f32(-1.0f)), 0u);  // +0
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(-0.0f), f32(-0.0f)), 0x80000000u);
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(big), f32(big)), 0x7F800000u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(-big), f32(-big)), 0xFF800000u);
  // Inf + -Inf and NaN inputs give the canonical NaN (hypothesis).
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x7F800000u, 0xFF800000u), 0x7FFFFFFFu);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x7FC00001u, f32(1.0f)), 0x7FFFFFFFu);
  // MEASURED (H200): unlike atom.add.f32, the tensor reduce-add keeps subnormal inputs and
  // results exactly.
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x00000001u, 0x00000001u), 0x00000002u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x00400000u, f32(0x1p-126f)), f32(0x1.8p-126f));
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x80000003u, 0x80000000u), 0x80000003u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, 0x007FFFFFu, 0x00000001u), 0x00800000u);
  // 1.5 * 2^-126 - 2^-126 = 2^-127 is subnormal: kept.
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(0x1.8p-126f), f32(-0x1p-126f)), 0x00400000u);
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat32, f32(0x1p-126f), f32(0x1p-126f)), f32(0x1p-125f));
}

TEST(ModelReduce, Float16Add) {
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x3C00, 0x3C00), 0x4000u);  // 1 + 1 = 2
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x3C00, 0x1000), 0x3C00u);  // 1 + 2^-11: tie to 1
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x3C00, 0x1600), 0x3C02u);  // 1 + 3*2^-11: tie up
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x3C00, 0x1601), 0x3C02u);  // just above the tie
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x7BFF, 0x4C00), 0x7C00u);  // 65504 + 16 -> Inf
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x7BFF, 0x4BFF), 0x7BFFu);  // 65504 + 15.99 stays
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x0001, 0x0001), 0x0002u);  // subnormals kept
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x03FF, 0x0001), 0x0400u);  // into the normals
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x8001, 0x0001), 0x0000u);  // x + -x = +0
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0x7C00, 0xFC00), 0x7FFFu);  // Inf - Inf: NaN
  EXPECT_EQ(reduce_element(R::kAdd, D::kFloat16, 0xC000, 0x3C00), 0xBC00u);  // -2 + 1 = -1
}

TEST(ModelReduce, BFloat16Add) {
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x3F80, 0x3F80), 0x4000u);  // 1 + 1 = 2
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x3F80, 0x3B80), 0x3F80u);  // 1 + 2^-8: tie to 1
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x3F80, 0x3C40), 0x3F82u);  // 1 + 3*2^-8: tie up
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x0001, 0x0001), 0x0002u);  // subnormals kept
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x7F7F, 0x7F7F), 0x7F80u);  // max + max = Inf
  EXPECT_EQ(reduce_element(R::kAdd, D::kBFloat16, 0x7FC1, 0x3F80), 0x7FFFu);  // NaN in
}

TEST(ModelReduce, FloatMinMaxSignedZeroAndNan) {
  for (D t : {D::kFloat16, D::kBFloat16}) {
    const std::uint64_t one = t == D::kFloat16 ? 0x3C00 : 0x3F80;
    const std::uint64_t two = t == D::kFloat16 ? 0x4000 : 0x4000;
    const std::uint64_t minus_one = one | 0x8000;
    const std::uint64_t nan = t == D::kFloat16 ? 0x7E00 : 0x7FC0;
    EXPECT_EQ(reduce_element(R::kMin, t, 0x8000, 0x0000), 0x8000u) << to_string(t);  // -0 < +0
    EXPECT_EQ(reduce_element(R::kMin, t, 0x0000, 0x8000), 0x8000u) << to_string(t);
    EXPECT_EQ(reduce_element(R::kMax, t, 0x8000, 0x0000), 0x0000u) << to_string(t);
    EXPECT_EQ(reduce_element(R::kMax, t, 0x0000, 0x8000), 0x0000u) << to_string(t);
    EXPECT_EQ(reduce_element(R::kMin, t, one, two), one);
    EXPECT_EQ(reduce_element(R::kMax, t, one, two), two);
    EXPECT_EQ(reduce_element(R::kMin, t, minus_one, one), minus_one);
    EXPECT_EQ(reduce_element(R::kMax, t, minus_one, one), one);
    EXPECT_EQ(reduce_element(R::kMin, t, nan, one), one);  // NaN loses (minNum)
    EXPECT_EQ(reduce_element(R::kMax, t, minus_one, nan), minus_one);
    EXPECT_EQ(reduce_element(R::kMin, t, nan, nan | 1), 0x7FFFu);    // both NaN: canonical
    EXPECT_EQ(reduce_element(R::kMin, t, 0x0001, 0x0002), 0x0001u);  // subnormals kept
    EXPECT_EQ(reduce_element(R::kMax, t, 0x7C00 | (t == D::kBFloat16 ? 0x0380 : 0), one),
              t == D::kFloat16 ? 0x7C00u : 0x7F80u);  // +Inf
  }
}

TEST(ModelReduce, EncodeMatchesHardwareFloatConversion) {
  // encode_rne(fp32) against the host's IEEE double -> float conversion (round to nearest even).
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t bits = rng();
    double v = std::bit_cast<double>(bits);
    if (std::isnan(v)) continue;
    // Pull most samples into fp32's range, including its subnormals.
    int unused = 0;
    v = std::ldexp(std::frexp(v, &unused), static_cast<int>(rng() % 300) - 160);
    if (i % 2) v = -v;
    EXPECT_EQ(encode_rne(kFormatF32, v), std::bit_cast<std::uint32_t>(static_cast<float>(v))) << v;
  }
}

TEST(ModelReduce, DecodeEncodeRoundTripsAndMidpointsTieToEven) {
  for (FloatFormat f : {kFormatF16, kFormatBF16}) {
    for (std::uint64_t b = 0; b < 0x10000; ++b) {
      if (is_nan_bits(f, b)) continue;
      EXPECT_EQ(encode_rne(f, decode(f, b)), b);
      // Midpoint with the next representable value (same sign, finite): ties to the even one.
      const std::uint64_t next = b + 1;
      if ((b & 0x7FFF) >= (exp_all_ones(f) << f.mant_bits) - 1) continue;
      const double mid = (decode(f, b) + decode(f, next)) / 2;
      EXPECT_EQ(encode_rne(f, mid), (b & 1) ? next : b) << std::hex << b;
    }
  }
}

TEST(ModelReduce, ReduceBoxAppliesOpToInBoundsElementsOnly) {
  const TensorMapSpec s = testing::tiled_spec(D::kUInt32, {8, 3}, {4, 2});
  std::vector<std::byte> g = testing::filled(global_footprint_bytes(s), 0);
  for (std::uint32_t y = 0; y < 3; ++y)
    for (std::uint32_t x = 0; x < 8; ++x)
      testing::put<std::uint32_t>(g, y * 32 + x * 4, 10 * y + x);
  const std::vector<std::byte> before = g;
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::uint32_t i = 0; i < 8; ++i)
    testing::put<std::uint32_t>(smem, i * 4, 1000 * (i + 1));
  const std::int32_t c[] = {4, 2};  // x = 4..7, y = 2..3: row y = 3 is outside
  reduce_box(s, R::kAdd, smem, c, g);
  for (std::uint32_t k = 0; k < 4; ++k)
    EXPECT_EQ(testing::get<std::uint32_t>(g, 2 * 32 + 16 + k * 4), 24u + k + 1000 * (k + 1));
  for (std::size_t b = 0; b < g.size(); ++b)
    if (b < 2 * 32 + 16) {
      EXPECT_EQ(g[b], before[b]) << b;
    }
  reduce_box(s, R::kMin, smem, c, g);
  EXPECT_EQ(testing::get<std::uint32_t>(g, 2 * 32 + 16), 1000u);
  EXPECT_EQ(testing::get<std::uint32_t>(g, 2 * 32 + 28), 4000u);
}

TEST(ModelReduce, ReduceBoxWritesDimension0InWhole16ByteChunks) {
  // MEASURED (H200) for stores, and the model applies it to reduces: elements past dims[0] in the
  // row's last 16 B chunk are reduced too, nothing past it is. Rows are exactly one chunk-rounded
  // row apart, so an element past the chunk would alias the next row's first elements.
  struct Case {
    D t;
    R op;
    std::uint64_t dim0;
    std::uint32_t box0;
    std::uint64_t limit;  // first element index not reduced, by hand
  };
  const Case cases[] = {
      {D::kUInt32, R::kAdd, 5, 16, 8},    // 20 B rows -> 32 B
      {D::kUInt64, R::kXor, 3, 8, 4},     // 24 B -> 32 B
      {D::kUInt32, R::kMax, 12, 16, 12},  // 48 B: whole chunks, exact clipping
  };
  for (const Case& k : cases) {
    const std::size_t es = static_cast<std::size_t>(element_bytes(k.t));
    const TensorMapSpec s = testing::tiled_spec(k.t, {k.dim0, 3}, {k.box0, 2});
    SCOPED_TRACE(to_string(s));
    const std::uint64_t pitch = s.strides_bytes_inner_first[1];
    ASSERT_EQ(pitch, k.limit * es);
    ASSERT_EQ(global_footprint_bytes(s), 3 * pitch);
    // Element (x, y) holds 10 * y + x (row padding included); 64 poison bytes follow the tensor.
    std::vector<std::byte> g = testing::filled(3 * pitch + 64, 0xAA);
    for (std::uint64_t y = 0; y < 3; ++y)
      for (std::uint64_t x = 0; x < k.limit; ++x)
        write_element(g, y * pitch + x * es, es, 10 * y + x);
    const std::vector<std::byte> before = g;
    // smem element (k0, r) holds 1000 * (r + 1) + k0.
    std::vector<std::byte> smem(smem_bytes(s));
    for (std::uint64_t r = 0; r < 2; ++r)
      for (std::uint64_t k0 = 0; k0 < k.box0; ++k0)
        write_element(smem, smem_offset(s, r, k0 * es), es, 1000 * (r + 1) + k0);
    const std::int32_t c[] = {0, 1};  // rows 1 and 2, x = 0..box0-1
    reduce_box(s, k.op, smem, c, g);
    for (std::uint64_t y = 1; y < 3; ++y)
      for (std::uint64_t x = 0; x < k.limit; ++x) {
        const std::uint64_t old = 10 * y + x, src = 1000 * y + x;
        const std::uint64_t want = k.op == R::kAdd   ? old + src
                                   : k.op == R::kXor ? old ^ src
                                                     : std::max(old, src);
        EXPECT_EQ(read_element(g, y * pitch + x * es, es), want) << x << "," << y;
      }
    for (std::size_t b = 0; b < g.size(); ++b)
      if (b < pitch || b >= 3 * pitch) {
        EXPECT_EQ(g[b], before[b]) << "byte " << b;
      }
  }
}

}  // namespace
}  // namespace tma::model
