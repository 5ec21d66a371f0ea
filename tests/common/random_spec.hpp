// tmakit tests: seeded random TensorMapSpecs, valid by construction (per the driver's documented
// rules, TMA-RULES.md) or mutated to break one or more of those rules on purpose.
//
// Plain C++ (no CUDA headers): the CPU tests and the GPU test programs share it. Everything is a
// pure function of an Rng, so a run is repeated by its seed, and one case of a run by
// derive_seed(seed, index). The generator knows the documented rules only; whether the validator
// and the hardware agree with them is what the tests that use it find out.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"

namespace tma::testing {

// ---- random numbers -------------------------------------------------------------------------

// splitmix64: turns any 64-bit value into a well-mixed one (seeding, per-case seeds, hashing).
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Seed of case `index` of a run seeded with `seed`: lets one failing case be replayed alone.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(seed ^ splitmix64(index + 0x632BE59BD9B4E019ull));
}

// xoshiro256**: fast, identical on every platform, good enough for test data (not cryptographic).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : s_) {
      x = splitmix64(x);
      word = x;
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [lo, hi], both inclusive (modulo bias is negligible for test ranges).
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t n = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(next() % n);
  }

  // Integer in [lo, hi] whose logarithm is uniform: small and large sizes are equally likely.
  std::int64_t log_range(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    int bits_hi = 0;
    while ((std::int64_t{1} << bits_hi) <= hi)
      ++bits_hi;
    for (int tries = 0; tries < 8; ++tries) {
      const int b = static_cast<int>(range(0, bits_hi - 1));
      const std::int64_t v = range(std::int64_t{1} << b, (std::int64_t{1} << (b + 1)) - 1);
      if (v >= lo && v <= hi) return v;
    }
    return range(lo, hi);
  }

  // True with probability p.
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(range(0, static_cast<std::int64_t>(items.size()) - 1))];
  }

  // Fills `out` with random bytes.
  void fill(std::span<std::byte> out) {
    std::size_t i = 0;
    for (; i + 8 <= out.size(); i += 8) {
      const std::uint64_t v = next();
      std::memcpy(out.data() + i, &v, 8);
    }
    if (i < out.size()) {
      const std::uint64_t v = next();
      std::memcpy(out.data() + i, &v, out.size() - i);
    }
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

// ---- element data ---------------------------------------------------------------------------

// What random tensor data looks like. kBits: any bit pattern (NaNs, infinities and denormals
// included). kFinite: floating-point elements are finite normal numbers of moderate magnitude, so
// arithmetic reductions stay away from overflow and NaN-payload questions; integers stay random.
enum class DataKind : std::uint8_t { kBits, kFinite };

constexpr std::string_view to_string(DataKind k) {
  return k == DataKind::kBits ? "bits" : "finite";
}

// Fills `out` (a whole number of elements of `dtype`) with random data of the given kind.
inline void fill_elements(Rng& rng, DataType dtype, DataKind kind, std::span<std::byte> out) {
  rng.fill(out);
  if (kind == DataKind::kBits || !is_floating_point(dtype)) return;
  const std::size_t size = static_cast<std::size_t>(element_bytes(dtype));
  if (size == 0) return;
  // Exponent field width and bias per format; the exponent is redrawn within bias +- 12.
  int exp_bits = 8;
  int mant_bits = 23;
  if (dtype == DataType::kFloat16) exp_bits = 5, mant_bits = 10;
  if (dtype == DataType::kBFloat16) exp_bits = 8, mant_bits = 7;
  if (dtype == DataType::kFloat64) exp_bits = 11, mant_bits = 52;
  const std::int64_t bias = (std::int64_t{1} << (exp_bits - 1)) - 1;
  const std::int64_t spread = std::min<std::int64_t>(12, bias - 1);
  for (std::size_t at = 0; at + size <= out.size(); at += size) {
    std::uint64_t v = 0;
    std::memcpy(&v, out.data() + at, size);
    const std::uint64_t exp = static_cast<std::uint64_t>(rng.range(bias - spread, bias + spread));
    const std::uint64_t mant_mask = (std::uint64_t{1} << mant_bits) - 1;
    const std::uint64_t sign = (v >> (exp_bits + mant_bits)) & 1u;
    v = (sign << (exp_bits + mant_bits)) | (exp << mant_bits) | (v & mant_mask);
    std::memcpy(out.data() + at, &v, size);
  }
}

// ---- specs ----------------------------------------------------------------------------------

// The element types Hopper encodes (every type but the packed sub-byte ones).
inline std::vector<DataType> hopper_data_types() {
  std::vector<DataType> out;
  for (int i = 0; i < kNumDataTypes; ++i) {
    const auto t = static_cast<DataType>(i);
    if (!is_packed(t)) out.push_back(t);
  }
  return out;
}

// Knobs of the generator. Defaults: what the Hopper load tests want.
struct SpecOptions {
  Mode mode = Mode::kTiled;
  int min_rank = 1;  // tiled 1..5, im2col 3..5 (clamped)
  int max_rank = kMaxRank;
  std::vector<DataType> dtypes{};  // empty: hopper_data_types()
  std::vector<Swizzle> swizzles{Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};
  double interleave_chance = 0.12;      // only ranks >= 3
  double element_stride_chance = 0.25;  // per dimension >= 1 (and dim 0 when interleaved)
  // Element stride of dim 0 without interleave: the driver documents it as ignored. A few specs
  // set it anyway so the hardware shows whether it really is.
  double ignored_element_stride_chance = 0.05;
  double nan_fill_chance = 0.35;            // floating-point types only
  double full_swizzle_span_chance = 0.6;    // inner box row = the whole swizzle span
  double padded_stride_chance = 0.3;        // rows padded beyond the previous dimension's extent
  double permuted_outer_chance = 0.05;      // outer dimensions laid out in another order
  std::uint64_t max_box_bytes = 96 * 1024;  // one box's shared-memory image
  std::uint64_t max_footprint_bytes = std::uint64_t{1} << 20;
  std::uint64_t base_address = 0x7F0000000000ull;  // 32 B aligned; the spec's address
};

// Bytes dimension 0 of `s` spans: dims[0] elements, at least one interleave slice with interleave
// (im2col), or dims[0] whole interleave chunks (interleaved tiled maps count dimension 0 in chunks:
// docs/hardware-findings.md, finding 12).
inline std::uint64_t inner_span_bytes(const TensorMapSpec& s) {
  const std::uint64_t elem = static_cast<std::uint64_t>(element_bytes(s.dtype));
  const std::uint64_t slice = static_cast<std::uint64_t>(interleave_bytes(s.interleave));
  if (slice != 0 && s.mode == Mode::kTiled) return s.dims_inner_first[0] * slice;
  return std::max(s.dims_inner_first[0] * elem, slice);
}

// Bytes from spec.address to one past the last byte of the tensor (dims, strides and element size;
// inner_span_bytes for dimension 0). The test's own bound: the GPU tests allocate
// max(this, model::global_footprint_bytes(spec)).
inline std::uint64_t span_bytes(const TensorMapSpec& s) {
  if (s.rank < 1 || s.rank > kMaxRank) return 0;
  const std::uint64_t inner = inner_span_bytes(s);
  std::uint64_t total = inner;
  for (int d = 1; d < s.rank; ++d) {
    if (s.dims_inner_first[d] == 0) return 0;
    total += (s.dims_inner_first[d] - 1) * s.strides_bytes_inner_first[d];
  }
  return total;
}

namespace detail {

inline std::uint64_t round_up(std::uint64_t x, std::uint64_t a) {
  return (x + a - 1) / a * a;
}

// Elements a box traverses along `dim` before striding: boxDim (tiled), or the im2col box.
inline std::uint64_t traversed(const TensorMapSpec& s, int dim) {
  if (s.mode == Mode::kTiled) return s.box_inner_first[dim];
  return dim == 0 ? s.channels_per_pixel : 1;
}

// Strides that lay dims 0..rank-1 out one after another (outer dims optionally permuted), rows
// optionally padded, each a multiple of `align`.
inline void make_strides(Rng& rng, const SpecOptions& o, TensorMapSpec& s, std::uint64_t align) {
  s.strides_bytes_inner_first[0] = static_cast<std::uint64_t>(element_bytes(s.dtype));
  const std::uint64_t inner = inner_span_bytes(s);
  std::array<int, kMaxRank> order{0, 1, 2, 3, 4};  // memory order of the outer dims
  if (s.rank > 2 && rng.chance(o.permuted_outer_chance)) {
    for (int i = s.rank - 1; i > 1; --i)
      std::swap(order[i], order[rng.range(1, i)]);
  }
  std::uint64_t extent = round_up(inner, align);
  for (int k = 1; k < s.rank; ++k) {
    const int d = order[k];
    std::uint64_t stride = extent;
    if (rng.chance(o.padded_stride_chance))
      stride += align * static_cast<std::uint64_t>(rng.range(1, 4));
    s.strides_bytes_inner_first[d] = stride;
    extent = stride * s.dims_inner_first[d];
  }
}

// Shrinks dimension extents until the tensor's span fits the footprint budget.
inline void fit_footprint(Rng& rng, const SpecOptions& o, TensorMapSpec& s, std::uint64_t align) {
  for (int guard = 0; guard < 200 && span_bytes(s) > o.max_footprint_bytes; ++guard) {
    int widest = s.rank - 1;
    for (int d = 0; d < s.rank; ++d) {
      if (s.dims_inner_first[d] > s.dims_inner_first[widest]) widest = d;
    }
    if (s.dims_inner_first[widest] <= 1) break;
    s.dims_inner_first[widest] = (s.dims_inner_first[widest] + 1) / 2;
    make_strides(rng, o, s, align);
  }
}

// A dimension extent near `box` elements: larger (room to move) or exactly it, or, with
// probability `smaller`, below it (the box can only partly fit).
inline std::uint64_t dim_near(Rng& rng, std::uint64_t box, double smaller) {
  const auto b = static_cast<std::int64_t>(std::max<std::uint64_t>(box, 1));
  if (rng.chance(smaller)) return static_cast<std::uint64_t>(rng.range(1, b));
  if (rng.chance(0.25)) return box;
  return static_cast<std::uint64_t>(rng.range(b, b * 3 + 8));
}

// Inner row of a box: bytes a multiple of 16, within the swizzle span when swizzled.
inline std::uint32_t pick_inner_elements(Rng& rng, const SpecOptions& o, DataType dtype,
                                         Swizzle swz) {
  const std::int64_t elem = element_bytes(dtype);
  std::int64_t max_bytes = std::min<std::int64_t>(256 * elem, 1024);
  if (swz != Swizzle::kNone) max_bytes = swizzle_span_bytes(swz);
  std::int64_t bytes = 16 * rng.range(1, max_bytes / 16);
  if (swz != Swizzle::kNone && rng.chance(o.full_swizzle_span_chance)) bytes = max_bytes;
  return static_cast<std::uint32_t>(bytes / elem);
}

inline void fill_common(Rng& rng, const SpecOptions& o, TensorMapSpec& s, int min_rank) {
  s.dtype = rng.pick(o.dtypes.empty() ? hopper_data_types() : o.dtypes);
  s.rank =
      static_cast<int>(rng.range(std::max(o.min_rank, min_rank), std::min(o.max_rank, kMaxRank)));
  s.address = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(o.base_address));
  s.interleave = Interleave::kNone;
  if (s.rank >= 3 && rng.chance(o.interleave_chance)) {
    s.interleave = rng.chance(0.5) ? Interleave::k16B : Interleave::k32B;
  }
  // INTERLEAVE_32B requires SWIZZLE_32B; every other combination is open.
  s.swizzle = s.interleave == Interleave::k32B ? Swizzle::k32B : rng.pick(o.swizzles);
  s.l2_promotion = static_cast<L2Promotion>(rng.range(0, 3));
  s.oob_fill =
      is_floating_point(s.dtype) && rng.chance(o.nan_fill_chance) ? OobFill::kNan : OobFill::kZero;
  s.element_strides_inner_first = {1, 1, 1, 1, 1};
  for (int d = 1; d < s.rank; ++d) {
    if (rng.chance(o.element_stride_chance)) {
      s.element_strides_inner_first[d] = static_cast<std::uint32_t>(rng.range(2, 8));
    }
  }
  const double inner_stride_chance =
      s.interleave != Interleave::kNone ? o.element_stride_chance : o.ignored_element_stride_chance;
  if (rng.chance(inner_stride_chance)) {
    s.element_strides_inner_first[0] = static_cast<std::uint32_t>(rng.range(2, 8));
  }
}

}  // namespace detail

// A tiled spec that follows every documented rule, within the options' size budgets.
inline TensorMapSpec random_tiled_spec(Rng& rng, const SpecOptions& o = {}) {
  TensorMapSpec s;
  s.mode = Mode::kTiled;
  detail::fill_common(rng, o, s, 1);
  const std::uint64_t elem = static_cast<std::uint64_t>(element_bytes(s.dtype));
  const std::uint64_t align = s.interleave == Interleave::k32B ? 32 : 16;

  if (s.interleave == Interleave::kNone) {
    s.box_inner_first[0] = detail::pick_inner_elements(rng, o, s.dtype, s.swizzle);
  } else {
    // Interleaved: the hardware counts dimension 0 in whole 16 / 32 B chunks (finding 12), but
    // the driver still wants box[0] x element size to be a multiple of 16 B: box[0] is a multiple
    // of 16 / element size chunks (2 for float64 .. 16 for uint8), mostly one such step.
    const std::int64_t q = std::max<std::int64_t>(1, 16 / static_cast<std::int64_t>(elem));
    const std::int64_t steps = rng.chance(0.7) ? 1 : rng.range(2, 256 / q);
    s.box_inner_first[0] = static_cast<std::uint32_t>(q * steps);
  }
  for (int d = 1; d < s.rank; ++d)
    s.box_inner_first[d] = static_cast<std::uint32_t>(rng.log_range(1, 256));
  // Halve the largest outer box dimension until one box fits the shared-memory budget, counted
  // both ways: the hardware's image (transaction_bytes) and the documented elements the driver
  // checks (they differ with interleave: chunks, and dimension rank - 2 not traversed).
  const auto documented_bytes = [&] {
    std::uint64_t b = box_extent(s, 0) * elem;
    for (int d = 1; d < s.rank; ++d)
      b *= box_extent(s, d);
    return b;
  };
  for (int guard = 0;
       guard < 64 && std::max(transaction_bytes(s), documented_bytes()) > o.max_box_bytes;
       ++guard) {
    int widest = 1;
    for (int d = 1; d < s.rank; ++d) {
      if (box_extent(s, d) > box_extent(s, widest)) widest = d;
    }
    if (s.rank < 2 || s.box_inner_first[widest] <= 1) break;
    s.box_inner_first[widest] = (s.box_inner_first[widest] + 1) / 2;
  }
  // A third of the tensors are "tight": some dimensions smaller than the box.
  const double smaller = rng.chance(0.3) ? 0.4 : 0.0;
  for (int d = 0; d < s.rank; ++d)
    s.dims_inner_first[d] = detail::dim_near(rng, s.box_inner_first[d], smaller);
  detail::make_strides(rng, o, s, align);
  detail::fit_footprint(rng, o, s, align);
  return s;
}

// An im2col spec (tensor {C, W, [H, [D,]] N} innermost first) that follows every documented rule.
inline TensorMapSpec random_im2col_spec(Rng& rng, const SpecOptions& o = {}) {
  TensorMapSpec s;
  s.mode = Mode::kIm2col;
  detail::fill_common(rng, o, s, 3);
  if (s.rank < 3) s.rank = 3;
  const std::uint64_t elem = static_cast<std::uint64_t>(element_bytes(s.dtype));
  const std::uint64_t align = s.interleave == Interleave::k32B ? 32 : 16;
  const int spatial = s.rank - 2;

  if (s.interleave == Interleave::kNone) {
    s.channels_per_pixel = detail::pick_inner_elements(rng, o, s.dtype, s.swizzle);
  } else {
    s.channels_per_pixel = static_cast<std::uint32_t>(interleave_bytes(s.interleave) / elem);
  }
  const std::uint64_t row = s.channels_per_pixel * elem;
  const std::uint64_t max_pixels =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(1024, o.max_box_bytes / row));
  s.pixels_per_column =
      static_cast<std::uint32_t>(rng.log_range(1, static_cast<std::int64_t>(max_pixels)));

  // Corner offsets: the driver's range shrinks with rank ([-32768, 32767], [-128, 127], [-16, 15]);
  // convolution-like values (padding of 0..3 below, a filter reach of 0..3 above) stay well inside.
  for (int i = 0; i < 3; ++i)
    s.pixel_box_lower_corner[i] = s.pixel_box_upper_corner[i] = 0;
  for (int i = 0; i < spatial; ++i) {
    s.pixel_box_lower_corner[i] = -static_cast<int>(rng.range(0, 3));
    s.pixel_box_upper_corner[i] = static_cast<int>(rng.range(-3, 3));
  }
  s.dims_inner_first[0] = rng.chance(0.5)
                              ? s.channels_per_pixel
                              : static_cast<std::uint64_t>(rng.range(
                                    1, 2 * static_cast<std::int64_t>(s.channels_per_pixel)));
  if (s.interleave != Interleave::kNone) s.dims_inner_first[0] = s.channels_per_pixel;
  for (int d = 1; d <= spatial; ++d) {
    // Large enough that the pixel box (extent + upper - lower) is never empty.
    const std::int64_t lo =
        1 + std::max(0, s.pixel_box_lower_corner[d - 1] - s.pixel_box_upper_corner[d - 1]);
    s.dims_inner_first[d] = static_cast<std::uint64_t>(rng.range(lo, lo + 20));
  }
  s.dims_inner_first[s.rank - 1] = static_cast<std::uint64_t>(rng.range(1, 4));  // N
  detail::make_strides(rng, o, s, align);
  detail::fit_footprint(rng, o, s, align);
  return s;
}

// A valid spec of the mode the options ask for.
inline TensorMapSpec random_spec(Rng& rng, const SpecOptions& o = {}) {
  return o.mode == Mode::kIm2col ? random_im2col_spec(rng, o) : random_tiled_spec(rng, o);
}

// ---- deliberately invalid specs ---------------------------------------------------------------

// One documented rule broken on purpose. Stable names: they appear in the GPU tests' JSONL.
enum class Mutation : std::uint8_t {
  kRankZero,
  kRankTooLarge,
  kInterleaveRankBelow3,
  kAddressMisaligned,
  kAddressMisaligned32,  // 16 B aligned but not 32 B, with INTERLEAVE_32B
  kDimZero,
  kDimTooLarge,  // > 2^32
  kStrideNotMultipleOf16,
  kStrideNotMultipleOf32,  // with INTERLEAVE_32B
  kStrideTooLarge,         // >= 2^40
  kBoxZero,
  kBoxTooLarge,  // > 256
  kBoxInnerBytesNotMultipleOf16,
  kElementStrideZero,
  kElementStrideTooLarge,  // > 8
  kSwizzleSpanExceeded,
  kInterleave32WithoutSwizzle32,
  kNanFillOnInteger,
  kPackedTypeOnHopper,   // 16U4 / 16U6 need compute capability >= 10
  kAtomSwizzleOnHopper,  // SWIZZLE_128B_ATOM_* need compute capability >= 10
  kEnumOutOfRange,
  kIm2colCornerOutOfRange,
  kIm2colChannelsZero,
  kIm2colChannelsTooLarge,  // > 256
  kIm2colPixelsZero,
  kIm2colPixelsTooLarge,  // > 1024
  kCount
};

constexpr std::string_view to_string(Mutation m) {
  switch (m) {
    case Mutation::kRankZero:
      return "rank-zero";
    case Mutation::kRankTooLarge:
      return "rank-too-large";
    case Mutation::kInterleaveRankBelow3:
      return "interleave-rank-below-3";
    case Mutation::kAddressMisaligned:
      return "address-misaligned";
    case Mutation::kAddressMisaligned32:
      return "address-misaligned-32";
    case Mutation::kDimZero:
      return "dim-zero";
    case Mutation::kDimTooLarge:
      return "dim-too-large";
    case Mutation::kStrideNotMultipleOf16:
      return "stride-not-multiple-of-16";
    case Mutation::kStrideNotMultipleOf32:
      return "stride-not-multiple-of-32";
    case Mutation::kStrideTooLarge:
      return "stride-too-large";
    case Mutation::kBoxZero:
      return "box-zero";
    case Mutation::kBoxTooLarge:
      return "box-too-large";
    case Mutation::kBoxInnerBytesNotMultipleOf16:
      return "box-inner-bytes-not-multiple-of-16";
    case Mutation::kElementStrideZero:
      return "element-stride-zero";
    case Mutation::kElementStrideTooLarge:
      return "element-stride-too-large";
    case Mutation::kSwizzleSpanExceeded:
      return "swizzle-span-exceeded";
    case Mutation::kInterleave32WithoutSwizzle32:
      return "interleave-32b-without-swizzle-32b";
    case Mutation::kNanFillOnInteger:
      return "nan-fill-on-integer";
    case Mutation::kPackedTypeOnHopper:
      return "packed-type-on-hopper";
    case Mutation::kAtomSwizzleOnHopper:
      return "atom-swizzle-on-hopper";
    case Mutation::kEnumOutOfRange:
      return "enum-out-of-range";
    case Mutation::kIm2colCornerOutOfRange:
      return "im2col-corner-out-of-range";
    case Mutation::kIm2colChannelsZero:
      return "im2col-channels-zero";
    case Mutation::kIm2colChannelsTooLarge:
      return "im2col-channels-too-large";
    case Mutation::kIm2colPixelsZero:
      return "im2col-pixels-zero";
    case Mutation::kIm2colPixelsTooLarge:
      return "im2col-pixels-too-large";
    case Mutation::kCount:
      break;
  }
  return "invalid";
}

struct MutatedSpec {
  TensorMapSpec spec;
  std::vector<Mutation> mutations;  // every rule broken on purpose, in the order applied
};

// Applies `m` to `s` if it applies to this spec (returns false otherwise, leaving `s` unchanged).
inline bool apply_mutation(Rng& rng, Mutation m, TensorMapSpec& s) {
  const bool tiled = s.mode == Mode::kTiled;
  const bool rank_ok = s.rank >= 1 && s.rank <= kMaxRank;
  const int any_dim = rank_ok ? static_cast<int>(rng.range(0, s.rank - 1)) : 0;
  const int outer_dim = rank_ok && s.rank > 1 ? static_cast<int>(rng.range(1, s.rank - 1)) : -1;
  const auto address = reinterpret_cast<std::uintptr_t>(s.address);
  switch (m) {
    case Mutation::kRankZero:
      s.rank = 0;
      return true;
    case Mutation::kRankTooLarge:
      s.rank = static_cast<int>(rng.range(6, 9));
      return true;
    case Mutation::kInterleaveRankBelow3:
      if (!tiled || !rank_ok || s.rank > 2 || s.interleave != Interleave::kNone) return false;
      s.interleave = Interleave::k16B;
      return true;
    case Mutation::kAddressMisaligned:
      s.address =
          reinterpret_cast<const void*>(address + static_cast<std::uintptr_t>(rng.range(1, 15)));
      return true;
    case Mutation::kAddressMisaligned32:
      if (s.interleave != Interleave::k32B || address % 32 != 0) return false;
      s.address = reinterpret_cast<const void*>(address + 16);
      return true;
    case Mutation::kDimZero:
      if (!rank_ok) return false;
      s.dims_inner_first[any_dim] = 0;
      return true;
    case Mutation::kDimTooLarge:
      if (!rank_ok) return false;
      s.dims_inner_first[any_dim] =
          (std::uint64_t{1} << 32) + static_cast<std::uint64_t>(rng.range(1, 1000));
      return true;
    case Mutation::kStrideNotMultipleOf16:
      if (outer_dim < 0) return false;
      s.strides_bytes_inner_first[outer_dim] += static_cast<std::uint64_t>(rng.range(1, 15));
      return true;
    case Mutation::kStrideNotMultipleOf32:
      if (outer_dim < 0 || s.interleave != Interleave::k32B) return false;
      s.strides_bytes_inner_first[outer_dim] += 16;
      return true;
    case Mutation::kStrideTooLarge:
      if (outer_dim < 0) return false;
      s.strides_bytes_inner_first[outer_dim] =
          (std::uint64_t{1} << 40) + 16 * static_cast<std::uint64_t>(rng.range(0, 4));
      return true;
    case Mutation::kBoxZero:
      if (!tiled || !rank_ok) return false;
      s.box_inner_first[any_dim] = 0;
      return true;
    case Mutation::kBoxTooLarge:
      if (!tiled || !rank_ok) return false;
      s.box_inner_first[any_dim] = static_cast<std::uint32_t>(rng.range(257, 1024));
      return true;
    case Mutation::kBoxInnerBytesNotMultipleOf16: {
      if (!tiled || !rank_ok || s.interleave != Interleave::kNone) return false;
      const std::uint32_t elem = static_cast<std::uint32_t>(element_bytes(s.dtype));
      if (elem == 0 || elem >= 16) return false;
      // One element more than a multiple of 16 bytes; stays within 256 and any swizzle span check
      // is a second rule, so keep it below the span where possible.
      const std::uint32_t per16 = 16 / elem;
      std::uint32_t box = s.box_inner_first[0];
      box = box > per16 ? box - 1 : box + 1;
      if ((box * elem) % 16 == 0) return false;
      s.box_inner_first[0] = box;
      return true;
    }
    case Mutation::kElementStrideZero:
      if (!rank_ok) return false;
      s.element_strides_inner_first[outer_dim > 0 ? outer_dim : 0] = 0;
      return true;
    case Mutation::kElementStrideTooLarge:
      if (!rank_ok) return false;
      s.element_strides_inner_first[outer_dim > 0 ? outer_dim : 0] =
          static_cast<std::uint32_t>(rng.range(9, 16));
      return true;
    case Mutation::kSwizzleSpanExceeded: {
      if (s.interleave != Interleave::kNone || s.swizzle == Swizzle::kNone || !is_valid(s.swizzle))
        return false;
      const std::uint32_t elem = static_cast<std::uint32_t>(element_bytes(s.dtype));
      if (elem == 0 || !is_valid(s.dtype)) return false;  // after a packed-type or enum mutation
      const std::uint32_t span_elems =
          static_cast<std::uint32_t>(swizzle_span_bytes(s.swizzle)) / elem;
      const std::uint32_t bigger = span_elems + std::max<std::uint32_t>(1, 16 / elem);
      if (bigger > 256) return false;
      if (tiled) {
        s.box_inner_first[0] = bigger;
      } else {
        s.channels_per_pixel = bigger;
      }
      return true;
    }
    case Mutation::kInterleave32WithoutSwizzle32:
      if (!rank_ok || s.rank < 3) return false;
      s.interleave = Interleave::k32B;
      s.swizzle = rng.chance(0.5) ? Swizzle::kNone : Swizzle::k128B;
      return true;
    case Mutation::kNanFillOnInteger:
      // Only on integer specs: swapping the type would also change the inner row's bytes.
      if (is_floating_point(s.dtype)) return false;
      s.oob_fill = OobFill::kNan;
      return true;
    case Mutation::kPackedTypeOnHopper:
      s.dtype = static_cast<DataType>(rng.range(static_cast<int>(DataType::k16U4Align8B),
                                                static_cast<int>(DataType::k16U6Align16B)));
      return true;
    case Mutation::kAtomSwizzleOnHopper:
      if (s.interleave == Interleave::k32B) return false;
      s.swizzle = static_cast<Swizzle>(rng.range(static_cast<int>(Swizzle::k128BAtom32B),
                                                 static_cast<int>(Swizzle::k128BAtom64B)));
      return true;
    case Mutation::kEnumOutOfRange:
      switch (rng.range(0, 4)) {
        case 0:
          s.dtype = static_cast<DataType>(rng.range(kNumDataTypes, 40));
          break;
        case 1:
          s.interleave = static_cast<Interleave>(rng.range(3, 9));
          break;
        case 2:
          s.swizzle = static_cast<Swizzle>(rng.range(7, 15));
          break;
        case 3:
          s.l2_promotion = static_cast<L2Promotion>(rng.range(4, 9));
          break;
        default:
          s.oob_fill = static_cast<OobFill>(rng.range(2, 9));
          break;
      }
      return true;
    case Mutation::kIm2colCornerOutOfRange: {
      if (tiled || !rank_ok || s.rank < 3) return false;
      const int limit = s.rank == 3 ? 32768 : s.rank == 4 ? 128 : 16;
      const int i = static_cast<int>(rng.range(0, s.rank - 3));
      auto& corner = rng.chance(0.5) ? s.pixel_box_lower_corner : s.pixel_box_upper_corner;
      corner[i] = rng.chance(0.5) ? -limit - static_cast<int>(rng.range(1, 5))
                                  : limit + static_cast<int>(rng.range(0, 5));
      return true;
    }
    case Mutation::kIm2colChannelsZero:
      if (tiled) return false;
      s.channels_per_pixel = 0;
      return true;
    case Mutation::kIm2colChannelsTooLarge:
      if (tiled) return false;
      s.channels_per_pixel = 256 + 16 * static_cast<std::uint32_t>(rng.range(1, 8));
      return true;
    case Mutation::kIm2colPixelsZero:
      if (tiled) return false;
      s.pixels_per_column = 0;
      return true;
    case Mutation::kIm2colPixelsTooLarge:
      if (tiled) return false;
      s.pixels_per_column = static_cast<std::uint32_t>(rng.range(1025, 4096));
      return true;
    case Mutation::kCount:
      break;
  }
  return false;
}

// A valid spec (random_spec) with 1..max_mutations documented rules broken on purpose.
inline MutatedSpec random_invalid_spec(Rng& rng, const SpecOptions& o = {}, int max_mutations = 3) {
  MutatedSpec out{random_spec(rng, o), {}};
  const int wanted = static_cast<int>(rng.range(1, std::max(1, max_mutations)));
  for (int tries = 0; tries < 64 && static_cast<int>(out.mutations.size()) < wanted; ++tries) {
    const auto m = static_cast<Mutation>(rng.range(0, static_cast<int>(Mutation::kCount) - 1));
    // A rank change first would make later per-dimension mutations meaningless; rank ones go last.
    const bool rank_change = m == Mutation::kRankZero || m == Mutation::kRankTooLarge;
    if (rank_change && static_cast<int>(out.mutations.size()) + 1 < wanted) continue;
    if (std::find(out.mutations.begin(), out.mutations.end(), m) != out.mutations.end()) continue;
    if (apply_mutation(rng, m, out.spec)) out.mutations.push_back(m);
  }
  return out;
}

// ---- coordinates ------------------------------------------------------------------------------

// Where a box sits relative to the tensor.
enum class Placement : std::uint8_t { kInside, kPartial, kOutside };

constexpr std::string_view to_string(Placement p) {
  return p == Placement::kInside ? "inside" : p == Placement::kPartial ? "partial" : "outside";
}

// Classifies a tiled box at `coords` (element strides included).
inline Placement tiled_placement(const TensorMapSpec& s, std::span<const std::int32_t> coords) {
  bool all_inside = true;
  for (int d = 0; d < s.rank; ++d) {
    const std::int64_t step =
        d == 0 && s.interleave == Interleave::kNone ? 1 : s.element_strides_inner_first[d];
    const std::int64_t n = static_cast<std::int64_t>(traversed_extent(s, d));
    const std::int64_t first = coords[static_cast<std::size_t>(d)];
    const std::int64_t last = first + (n - 1) * step;
    const std::int64_t dim = static_cast<std::int64_t>(s.dims_inner_first[d]);
    if (first < 0 || last >= dim) all_inside = false;
    bool any_inside = false;  // some k with 0 <= first + k*step < dim
    for (std::int64_t k = 0; k < n && !any_inside; ++k) {
      const std::int64_t c = first + k * step;
      any_inside = c >= 0 && c < dim;
    }
    if (!any_inside) return Placement::kOutside;
  }
  return all_inside ? Placement::kInside : Placement::kPartial;
}

// How a start coordinate relates to a dimension of `dim` elements that a box reaches `reach`
// elements into.
enum class Side : std::uint8_t { kInside, kBefore, kAfter, kWhollyBefore, kWhollyAfter, kFar };

// A start coordinate on `side`. kFar stays within +-2^30 so that coordinate + box never overflows.
inline std::int32_t coord_on(Rng& rng, Side side, std::int64_t dim, std::int64_t reach) {
  switch (side) {
    case Side::kInside:
      return static_cast<std::int32_t>(rng.range(0, std::max<std::int64_t>(0, dim - reach)));
    case Side::kBefore:
      return static_cast<std::int32_t>(rng.range(-reach + 1, -1));
    case Side::kAfter:
      return static_cast<std::int32_t>(
          rng.range(std::max<std::int64_t>(0, dim - reach + 1), dim - 1));
    case Side::kWhollyBefore:
      return static_cast<std::int32_t>(rng.range(-reach - 64, -reach));
    case Side::kWhollyAfter:
      return static_cast<std::int32_t>(rng.range(dim, dim + 64));
    case Side::kFar:
      break;
  }
  return static_cast<std::int32_t>(rng.range(-(std::int64_t{1} << 30), std::int64_t{1} << 30));
}

// Where random_tiled_coords may put a box.
enum class Where : std::uint8_t {
  kAnywhere,     // inside, sticking out on either side, wholly outside, rarely far away
  kInside,       // wholly inside the tensor where the box fits (else starting at 0)
  kNonNegative,  // start coordinates >= 0 (what the PTX ISA requires of tensor stores), may stick
                 // out past the end or lie wholly beyond it
};

// Box coordinates for a tiled spec (innermost first; entries past rank are 0). kAnywhere picks a
// plan per box, whatever the rank: 35% wholly inside, 45% sticking out along one or two
// dimensions, 15% wholly outside along one dimension, 5% far away along one dimension.
inline std::array<std::int32_t, kMaxRank> random_tiled_coords(Rng& rng, const TensorMapSpec& s,
                                                              Where where = Where::kAnywhere) {
  std::array<std::int32_t, kMaxRank> c{};
  const int rank = std::clamp(s.rank, 0, kMaxRank);
  std::array<Side, kMaxRank> side{};
  side.fill(Side::kInside);
  if (where != Where::kInside && rank > 0) {
    const std::int64_t plan = rng.range(0, 99);
    const bool non_negative = where == Where::kNonNegative;
    auto some_dim = [&] { return static_cast<std::size_t>(rng.range(0, rank - 1)); };
    if (plan >= 35 && plan < 80) {
      const int n = rank > 1 && rng.chance(0.4) ? 2 : 1;
      for (int k = 0; k < n; ++k)
        side[some_dim()] = non_negative || rng.chance(0.5) ? Side::kAfter : Side::kBefore;
    } else if (plan >= 80 && plan < 95) {
      side[some_dim()] = non_negative || rng.chance(0.5) ? Side::kWhollyAfter : Side::kWhollyBefore;
    } else if (plan >= 95) {
      side[some_dim()] = non_negative ? Side::kWhollyAfter : Side::kFar;
    }
  }
  for (int d = 0; d < rank; ++d) {
    const std::int64_t reach =
        static_cast<std::int64_t>(std::max<std::uint32_t>(1, s.box_inner_first[d]));
    const std::int64_t dim = static_cast<std::int64_t>(s.dims_inner_first[d]);
    c[static_cast<std::size_t>(d)] = coord_on(rng, side[static_cast<std::size_t>(d)], dim, reach);
  }
  // A box must start on a 16-byte boundary of dimension 0: the hardware faults otherwise
  // (model::check_coords). Round the start down to one. Interleaved maps count dimension 0 in
  // chunks, so any start is a chunk boundary (HYPOTHESIS, probes D3c); until the probe confirms
  // it they are rounded the same way.
  if (rank > 0 && element_bytes(s.dtype) > 0) {
    const std::int64_t unit = std::max(1, 16 / element_bytes(s.dtype));
    const std::int64_t c0 = c[0];
    c[0] = static_cast<std::int32_t>((c0 >= 0 ? c0 : c0 - unit + 1) / unit * unit);
  }
  return c;
}

// Im2col coordinates {c, w, [h, [d,]] n}: the channel start (sometimes sticking out of the tensor)
// and the filter base of the column's first pixel (in the padding the corners allow, too).
inline std::array<std::int32_t, kMaxRank> random_im2col_coords(Rng& rng, const TensorMapSpec& s) {
  std::array<std::int32_t, kMaxRank> c{};
  const std::int64_t channels = static_cast<std::int64_t>(s.dims_inner_first[0]);
  const std::int64_t cpp = s.channels_per_pixel;
  const Side channel_side = rng.chance(0.8)   ? Side::kInside
                            : rng.chance(0.5) ? Side::kBefore
                                              : Side::kAfter;
  c[0] = coord_on(rng, channel_side, channels, std::max<std::int64_t>(cpp, 1));
  // As in tiled mode, start on a 16-byte boundary of the channel dimension (see
  // random_tiled_coords).
  if (element_bytes(s.dtype) > 0) {
    const std::int64_t unit = std::max(1, 16 / element_bytes(s.dtype));
    const std::int64_t c0 = c[0];
    c[0] = static_cast<std::int32_t>((c0 >= 0 ? c0 : c0 - unit + 1) / unit * unit);
  }
  // The filter base must lie in the pixel bounding box [lower, dim + upper) (outside it the PTX ISA
  // leaves the result undefined), so the pixel coordinates stay there.
  for (int d = 1; d < s.rank - 1; ++d) {
    const std::int64_t dim = static_cast<std::int64_t>(s.dims_inner_first[d]);
    const std::int64_t lower = s.pixel_box_lower_corner[static_cast<std::size_t>(d - 1)];
    const std::int64_t end = dim + s.pixel_box_upper_corner[static_cast<std::size_t>(d - 1)];
    c[static_cast<std::size_t>(d)] =
        static_cast<std::int32_t>(rng.range(lower, std::max(lower, end - 1)));
  }
  const std::int64_t n = static_cast<std::int64_t>(s.dims_inner_first[s.rank - 1]);
  c[static_cast<std::size_t>(s.rank - 1)] = static_cast<std::int32_t>(rng.range(0, n - 1));
  return c;
}

// Im2col offsets (one per spatial dimension, innermost first): filter taps within a 4-wide window.
inline std::array<std::uint16_t, kMaxRank - 2> random_im2col_offsets(Rng& rng,
                                                                     const TensorMapSpec& s) {
  std::array<std::uint16_t, kMaxRank - 2> o{};
  for (int i = 0; i < s.rank - 2; ++i)
    o[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(rng.range(0, 3));
  return o;
}

}  // namespace tma::testing
