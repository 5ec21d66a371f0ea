// tmakit: exact conversions between IEEE-style binary formats (fp16, bf16, fp32) and double, for
// the reference model's floating-point reductions.
//
// The model computes on bit patterns so that it can be compared byte for byte with the hardware:
// decode both operands to double (exact: every fp16/bf16/fp32 value is a double), operate in
// double, and round once to the element format with encode_rne(). Plain C++; no dependence on the
// host's rounding mode or on a half-precision type.
#pragma once

#include <cmath>
#include <cstdint>

#include "tma/config.hpp"

namespace tma::model {

// An IEEE 754 binary interchange-style format: sign, exp_bits of biased exponent, mant_bits of
// stored fraction; exponent all-ones encodes Inf (fraction 0) and NaN.
struct FloatFormat {
  int exp_bits;
  int mant_bits;
};
inline constexpr FloatFormat kFormatF16{5, 10};
inline constexpr FloatFormat kFormatBF16{8, 7};
inline constexpr FloatFormat kFormatF32{8, 23};

constexpr int total_bits(FloatFormat f) {
  return 1 + f.exp_bits + f.mant_bits;
}
constexpr int exponent_bias(FloatFormat f) {
  return (1 << (f.exp_bits - 1)) - 1;
}
constexpr std::uint64_t sign_mask(FloatFormat f) {
  return std::uint64_t{1} << (total_bits(f) - 1);
}
constexpr std::uint64_t mant_mask(FloatFormat f) {
  return (std::uint64_t{1} << f.mant_bits) - 1;
}
constexpr std::uint64_t exp_field(FloatFormat f, std::uint64_t bits) {
  return (bits >> f.mant_bits) & ((std::uint64_t{1} << f.exp_bits) - 1);
}
constexpr std::uint64_t exp_all_ones(FloatFormat f) {
  return (std::uint64_t{1} << f.exp_bits) - 1;
}

constexpr bool is_nan_bits(FloatFormat f, std::uint64_t bits) {
  return exp_field(f, bits) == exp_all_ones(f) && (bits & mant_mask(f)) != 0;
}
constexpr bool is_subnormal_bits(FloatFormat f, std::uint64_t bits) {
  return exp_field(f, bits) == 0 && (bits & mant_mask(f)) != 0;
}
constexpr bool is_zero_bits(FloatFormat f, std::uint64_t bits) {
  return (bits & ~sign_mask(f) & ((sign_mask(f) << 1) - 1)) == 0;
}
constexpr bool sign_bit(FloatFormat f, std::uint64_t bits) {
  return (bits & sign_mask(f)) != 0;
}

// The value of `bits` as a double. Exact for every finite value of the formats above; NaN maps to
// a quiet double NaN (payload not kept: callers decide NaN results on the bit patterns).
inline double decode(FloatFormat f, std::uint64_t bits) {
  const bool negative = sign_bit(f, bits);
  const std::uint64_t e = exp_field(f, bits);
  const std::uint64_t m = bits & mant_mask(f);
  double magnitude = 0.0;
  if (e == exp_all_ones(f)) {
    magnitude = m == 0 ? HUGE_VAL : std::nan("");
  } else if (e == 0) {
    magnitude = std::ldexp(static_cast<double>(m), 1 - exponent_bias(f) - f.mant_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(m | (std::uint64_t{1} << f.mant_bits)),
                           static_cast<int>(e) - exponent_bias(f) - f.mant_bits);
  }
  return negative ? -magnitude : magnitude;
}

// `v` rounded to the nearest value of format `f`, ties to even, with gradual underflow (subnormal
// results kept) and overflow to Inf, as IEEE 754 roundTiesToEven. A NaN input gives the quiet NaN
// with an all-ones fraction (callers that care pick their own NaN pattern before calling).
inline std::uint64_t encode_rne(FloatFormat f, double v) {
  const std::uint64_t sign = std::signbit(v) ? sign_mask(f) : 0;
  if (std::isnan(v)) return (exp_all_ones(f) << f.mant_bits) | mant_mask(f);
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | (exp_all_ones(f) << f.mant_bits);
  if (a == 0.0) return sign;
  // Quantum (weight of the last fraction bit) of the result: 2^q, with q clamped at the subnormal
  // quantum so that small values round on the fixed subnormal grid.
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): unbiased exponent of a is e - 1.
  const int min_normal_exp = 1 - exponent_bias(f);
  int q = (e - 1 < min_normal_exp ? min_normal_exp : e - 1) - f.mant_bits;
  // a / 2^q < 2^(mant_bits + 1) <= 2^24: integer and fraction parts are exact in double.
  const double scaled = std::ldexp(a, -q);
  const double whole = std::floor(scaled);
  const double frac = scaled - whole;
  auto n = static_cast<std::uint64_t>(whole);
  if (frac > 0.5 || (frac == 0.5 && (n & 1u) != 0)) ++n;
  const std::uint64_t hidden = std::uint64_t{1} << f.mant_bits;
  if (n < hidden) return sign | n;  // subnormal (or rounded to zero: n == 0 keeps the sign)
  if (n == 2 * hidden) {            // rounding carried into the next binade
    n = hidden;
    ++q;
  }
  const std::int64_t biased = static_cast<std::int64_t>(q) + f.mant_bits + exponent_bias(f);
  if (biased >= static_cast<std::int64_t>(exp_all_ones(f)))
    return sign | (exp_all_ones(f) << f.mant_bits);
  return sign | (static_cast<std::uint64_t>(biased) << f.mant_bits) | (n - hidden);
}

}  // namespace tma::model
