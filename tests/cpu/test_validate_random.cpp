// Seeded random properties of the validator:
//  1. validate() accepts a spec exactly when every requirement holds, re-derived here
//     independently (a second, plain reading of cuda.h, amended by what the GPU sweep found: see
//     validate.hpp); lint() flags exactly the specs whose strides do not nest;
//  2. breaking one field of a valid spec in a known way produces exactly that field's rule.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/validate.hpp"

namespace tma {
namespace {

constexpr std::uint64_t kTwo32 = std::uint64_t{1} << 32;
constexpr std::uint64_t kTwo40 = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxCopyBytes = 233472;  // 228 KiB, found by the GPU sweep

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  std::int64_t range(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  std::uint64_t urange(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }
  template <class T>
  T pick(std::initializer_list<T> options) {
    return *(options.begin() + range(0, std::int64_t(options.size()) - 1));
  }

 private:
  std::mt19937_64 rng_;
};

// ---- an independent reading of the driver's documented requirements --------------------------

// Bits per element of each CUtensorMapDataType, from the comments in cuda.h.
constexpr int kBits[16] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};

std::uint64_t mul_or_max(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return a * b;
}

bool documented_ok(const TensorMapSpec& s, const Limits& lim) {
  const int cc = lim.cc_major * 10 + lim.cc_minor;
  if (cc < 90) return false;
  const int mode = int(s.mode), dt = int(s.dtype), il = int(s.interleave), sw = int(s.swizzle);
  if (mode > 1 || dt > 15 || il > 2 || sw > 6 || int(s.l2_promotion) > 3 || int(s.oob_fill) > 1) {
    return false;
  }
  const bool im2col = mode == 1;
  const int r = s.rank;
  if (im2col ? (r < 3 || r > 5) : (r < 1 || r > 5)) return false;
  if (il != 0 && r < 3) return false;
  const bool packed = dt >= 13;
  const bool align16 = dt == 14 || dt == 15;
  if (packed && cc < 100) return false;
  if (sw >= 4 && cc < 100) return false;  // 128B_ATOM_*
  auto bytes_of = [&](std::uint64_t n) -> std::uint64_t {
    if (dt == 13) return (n * 4 + 7) / 8;
    if (align16) return (n + 15) / 16 * 16;
    return n * std::uint64_t(kBits[dt]) / 8;
  };
  const auto a = reinterpret_cast<std::uintptr_t>(s.address);
  const std::uint64_t align = (il == 2 || align16) ? 32 : 16;
  if (a == 0 || a % align != 0) return false;
  for (int i = 0; i < r; ++i) {
    if (s.dims_inner_first[i] < 1 || s.dims_inner_first[i] > kTwo32) return false;
    if (s.element_strides_inner_first[i] < 1 || s.element_strides_inner_first[i] > 8) return false;
  }
  if (im2col) {  // spatial dimensions: signed 32-bit pixel coordinates (GPU sweep); with
                 // interleave the driver takes them one dimension lower
    for (int i = il == 0 ? 1 : 0; i <= (il == 0 ? r - 2 : r - 3); ++i) {
      if (s.dims_inner_first[i] >= (std::uint64_t{1} << 31)) return false;
    }
  }
  if (dt == 13 && s.dims_inner_first[0] % 2 != 0) return false;
  if (align16 && s.dims_inner_first[0] % 128 != 0) return false;
  const std::uint64_t s0 = s.strides_bytes_inner_first[0];
  if (packed ? s0 != 0 : (s0 != 0 && s0 != std::uint64_t(kBits[dt] / 8))) return false;
  for (int i = 1; i < r; ++i) {
    const std::uint64_t st = s.strides_bytes_inner_first[i];
    if (st % align != 0 || st >= kTwo40) return false;
  }
  std::uint64_t inner = 0;  // the bounding box's inner dimension, in elements
  std::uint64_t copy_bytes = 0;
  if (!im2col) {
    for (int i = 0; i < r; ++i) {
      if (s.box_inner_first[i] < 1 || s.box_inner_first[i] > 256) return false;
    }
    inner = s.box_inner_first[0];
    if (!align16 && bytes_of(inner) % 16 != 0) return false;
    // Elements traversed: ceil(box / element stride); dimension 0's stride is ignored without
    // interleave.
    copy_bytes = bytes_of(il == 0 ? inner
                                  : (inner + s.element_strides_inner_first[0] - 1) /
                                        s.element_strides_inner_first[0]);
    for (int i = 1; i < r; ++i) {
      copy_bytes *= (s.box_inner_first[i] + s.element_strides_inner_first[i] - 1) /
                    s.element_strides_inner_first[i];
    }
  } else {
    const int lo = r == 3 ? -32768 : r == 4 ? -128 : -16;
    const int hi = -lo - 1;
    for (int i = 0; i < r - 2; ++i) {
      const int l = s.pixel_box_lower_corner[i], u = s.pixel_box_upper_corner[i];
      if (l < lo || l > hi || u < lo || u > hi) return false;
      // An empty box; with interleave the driver pairs corner i with dimension i (GPU sweep).
      if (std::int64_t(s.dims_inner_first[il == 0 ? i + 1 : i]) + u - l < 1) return false;
    }
    if (s.channels_per_pixel < 1 || s.channels_per_pixel > 256) return false;
    if (s.pixels_per_column < 1 || s.pixels_per_column > 1024) return false;
    inner = s.channels_per_pixel;
    if (!align16 && bytes_of(inner) % 16 != 0) return false;
    copy_bytes = bytes_of(inner) * s.pixels_per_column;
  }
  if (copy_bytes > kMaxCopyBytes) return false;
  if (!im2col && il != 0) {
    // tmakit's own: the whole 16 / 32 B chunks an interleaved copy moves (dimension 0 counts
    // chunks, dimension r - 2 is not traversed: docs/hardware-findings.md finding 12) must fit too.
    std::uint64_t chunks = 1;
    for (int i = 0; i < r; ++i) {
      if (i == r - 2) continue;
      chunks *= (s.box_inner_first[i] + s.element_strides_inner_first[i] - 1) /
                s.element_strides_inner_first[i];
    }
    if (chunks * (il == 1 ? 16u : 32u) > kMaxCopyBytes) return false;
  }
  if (align16 && inner != 128) return false;
  if (il == 2 && sw != 1) return false;
  if (il == 0 && sw != 0) {
    const std::uint64_t span = sw == 1 ? 32 : sw == 2 ? 64 : 128;
    if (bytes_of(inner) > span) return false;
  }
  if (dt == 14 && !(sw == 0 || sw == 3 || sw == 4)) return false;
  if (dt == 15 && !(sw == 0 || sw == 3 || sw == 4 || sw == 6)) return false;
  if (dt == 15 && il != 0) return false;
  const bool floating = dt >= 6 && dt <= 12;
  if (s.oob_fill == OobFill::kNan && !floating) return false;
  return true;
}

// ---- random valid specs ----------------------------------------------------------------------

DataType random_plain_dtype(Gen& g) {
  return static_cast<DataType>(g.range(0, 12));
}

// Dims, strides and address for `s` (rank, dtype, interleave set): valid and nested.
void random_layout(Gen& g, TensorMapSpec& s, bool im2col) {
  const std::uint64_t m = std::uint64_t(global_stride_multiple(s));
  for (int i = 0; i < s.rank; ++i) {
    s.dims_inner_first[i] = i == 0 ? g.urange(1, 300) : g.urange(1, im2col ? 24 : 40);
  }
  s.strides_bytes_inner_first[0] = g.coin() ? std::uint64_t(element_bytes(s.dtype)) : 0;
  std::uint64_t below = inner_bytes(s.dtype, s.dims_inner_first[0]);
  for (int i = 1; i < s.rank; ++i) {
    s.strides_bytes_inner_first[i] = (below + m - 1) / m * m + m * g.urange(0, 3);
    below = s.strides_bytes_inner_first[i] * s.dims_inner_first[i];
  }
  for (int i = 0; i < s.rank; ++i) {
    s.element_strides_inner_first[i] = static_cast<std::uint32_t>(g.range(1, 8));
  }
  s.address = reinterpret_cast<const void*>(
      std::uintptr_t(g.urange(1, 1 << 20) * 256 + m * g.urange(0, 7)));
  s.l2_promotion = static_cast<L2Promotion>(g.range(0, 3));
  s.oob_fill = is_floating_point(s.dtype) && g.coin(0.3) ? OobFill::kNan : OobFill::kZero;
}

// How many inner elements a swizzle allows (the whole range without one).
std::uint64_t max_inner(const TensorMapSpec& s, std::uint64_t cap) {
  if (s.interleave != Interleave::kNone || s.swizzle == Swizzle::kNone) return cap;
  return std::min<std::uint64_t>(
      cap, std::uint64_t(swizzle_span_bytes(s.swizzle)) / std::uint64_t(element_bytes(s.dtype)));
}

// The bytes the driver's copy-size check (TMA037) counts: the documented box (box_extent), element
// size included, also with interleave, where transaction_bytes() counts the interleave chunks the
// hardware really moves (docs/hardware-findings.md, finding 12).
std::uint64_t documented_copy_bytes(const TensorMapSpec& s) {
  std::uint64_t bytes = inner_bytes(s.dtype, box_extent(s, 0));
  const int n = s.mode == Mode::kIm2col ? 2 : s.rank;
  for (int d = 1; d < n; ++d)
    bytes *= box_extent(s, d);
  return bytes;
}

// Whether a copy fits in kMaxCopyBytes both ways: the documented count the driver checks and, for
// interleaved tiled maps, the chunks the hardware moves (transaction_bytes).
bool copy_fits(const TensorMapSpec& s) {
  const bool chunks = s.mode == Mode::kTiled && s.interleave != Interleave::kNone && s.rank >= 3;
  return documented_copy_bytes(s) <= kMaxCopyBytes &&
         (!chunks || transaction_bytes(s) <= kMaxCopyBytes);
}

// Halves random outer box extents until a copy fits in kMaxCopyBytes.
void fit_box(Gen& g, TensorMapSpec& s) {
  while (!copy_fits(s)) {
    const int d = int(g.range(1, s.rank - 1));
    s.box_inner_first[d] = std::max<std::uint32_t>(1, s.box_inner_first[d] / 2);
  }
}

TensorMapSpec random_valid_tiled(Gen& g) {
  TensorMapSpec s;
  s.mode = Mode::kTiled;
  s.dtype = random_plain_dtype(g);
  s.interleave = g.coin(0.8) ? Interleave::kNone : g.pick({Interleave::k16B, Interleave::k32B});
  s.rank = int(s.interleave == Interleave::kNone ? g.range(1, 5) : g.range(3, 5));
  s.swizzle =
      s.interleave == Interleave::k32B ? Swizzle::k32B : static_cast<Swizzle>(g.range(0, 3));
  random_layout(g, s, false);
  for (int i = 1; i < s.rank; ++i)
    s.box_inner_first[i] = static_cast<std::uint32_t>(g.range(1, 256));
  const std::uint64_t cap = max_inner(s, 256);
  const std::uint64_t q = 16 / std::uint64_t(element_bytes(s.dtype));  // elements per 16 B
  s.box_inner_first[0] = static_cast<std::uint32_t>(q * g.urange(1, cap / q));
  fit_box(g, s);
  return s;
}

TensorMapSpec random_valid_im2col(Gen& g) {
  TensorMapSpec s;
  s.mode = Mode::kIm2col;
  s.dtype = random_plain_dtype(g);
  s.interleave = g.coin(0.9) ? Interleave::kNone : Interleave::k16B;
  s.rank = int(g.range(3, 5));
  s.swizzle = static_cast<Swizzle>(g.range(0, 3));
  random_layout(g, s, true);
  const int lo = s.rank == 3 ? -32768 : s.rank == 4 ? -128 : -16;
  const int hi = -lo - 1;
  for (int i = 0; i < s.rank - 2; ++i) {
    // The dimension the driver measures corner i against (one lower with interleave).
    const int d = int(s.dims_inner_first[s.interleave == Interleave::kNone ? i + 1 : i]);
    const int lower = int(g.range(lo, hi));
    s.pixel_box_lower_corner[i] = lower;
    s.pixel_box_upper_corner[i] = int(g.range(std::max(lo, lower - d + 1), hi));
  }
  const std::uint64_t q = 16 / std::uint64_t(element_bytes(s.dtype));  // channels per 16 B
  s.channels_per_pixel = static_cast<std::uint32_t>(q * g.urange(1, max_inner(s, 256) / q));
  const std::uint64_t fit = kMaxCopyBytes / inner_bytes(s.dtype, s.channels_per_pixel);
  s.pixels_per_column = static_cast<std::uint32_t>(g.urange(1, std::min<std::uint64_t>(1024, fit)));
  return s;
}

// One field set to a value drawn from a mix of good, edge and bad values.
void perturb(Gen& g, TensorMapSpec& s, Limits& lim) {
  const int i = int(g.range(0, 4));
  switch (g.range(0, 17)) {
    case 0:
      s.mode = static_cast<Mode>(g.pick({0, 1, 1, 2}));
      break;
    case 1:
      s.dtype = static_cast<DataType>(g.range(0, 17));
      break;
    case 2:
      s.interleave = static_cast<Interleave>(g.range(0, 3));
      break;
    case 3:
      s.swizzle = static_cast<Swizzle>(g.range(0, 7));
      break;
    case 4:
      s.l2_promotion = static_cast<L2Promotion>(g.range(0, 4));
      break;
    case 5:
      s.oob_fill = static_cast<OobFill>(g.range(0, 2));
      break;
    case 6:
      s.rank = int(g.range(0, 6));
      break;
    case 7:
      s.address = reinterpret_cast<const void*>(
          std::uintptr_t(g.pick<std::uint64_t>({0, 0x1000, 0x1008, 0x1010, 0x1004, 0x1020})));
      break;
    case 8:
      s.dims_inner_first[i] =
          g.pick<std::uint64_t>({0, 1, 2, 127, 128, 256, kTwo32, kTwo32 + 1, g.urange(1, 500)});
      break;
    case 9:
      s.strides_bytes_inner_first[i] = g.pick<std::uint64_t>(
          {0, 1, 2, 4, 8, 16, 24, 32, 48, 64, s.strides_bytes_inner_first[i] / 2,
           s.strides_bytes_inner_first[i] + 16, kTwo40 - 16, kTwo40, g.urange(0, 100000)});
      break;
    case 10:
      s.box_inner_first[i] = static_cast<std::uint32_t>(
          g.pick<std::int64_t>({0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 257, g.range(1, 300)}));
      break;
    case 11:
      s.element_strides_inner_first[i] = static_cast<std::uint32_t>(g.range(0, 9));
      break;
    case 12:
      s.pixel_box_lower_corner[i % 3] = int(g.pick<std::int64_t>(
          {0, -1, 15, 16, -16, -17, 127, 128, -129, g.range(-40000, 40000), g.range(-20, 20)}));
      break;
    case 13:
      s.pixel_box_upper_corner[i % 3] = int(g.pick<std::int64_t>(
          {0, -1, 15, 16, -16, -17, 127, 128, -129, g.range(-40000, 40000), g.range(-40, 5)}));
      break;
    case 14:
      s.channels_per_pixel =
          static_cast<std::uint32_t>(g.pick<std::int64_t>({0, 1, 128, 256, 257, g.range(0, 300)}));
      break;
    case 15:
      s.pixels_per_column =
          static_cast<std::uint32_t>(g.pick<std::int64_t>({0, 1, 1024, 1025, g.range(0, 1100)}));
      break;
    case 16:
      lim = g.pick({Limits{8, 6}, Limits::hopper(), Limits::blackwell(), Limits{12, 0}});
      break;
    default:  // a packed type with the geometry it needs, on any target
      s.dtype = g.pick({DataType::k16U4Align8B, DataType::k16U4Align16B, DataType::k16U6Align16B});
      s.dims_inner_first[0] = 256;
      s.strides_bytes_inner_first[0] = 0;
      s.box_inner_first[0] = 128;
      s.channels_per_pixel = 128;
      break;
  }
}

TEST(ValidateRandom, AcceptsExactlyTheDocumentedSpecs) {
  Gen g(0x7a3c0ffee);
  int accepted = 0, rejected = 0;
  for (int n = 0; n < 12000; ++n) {
    TensorMapSpec s = g.coin() ? random_valid_tiled(g) : random_valid_im2col(g);
    Limits lim = Limits::hopper();
    ASSERT_TRUE(validate(s, lim).empty())
        << "generator made an invalid spec: " << to_string(s) << "\n"
        << to_string(validate(s, lim)[0]);
    const int perturbations = int(g.range(0, 3));
    for (int p = 0; p < perturbations; ++p)
      perturb(g, s, lim);
    const std::vector<Violation> v = validate(s, lim);
    const bool ok = documented_ok(s, lim);
    if (ok) {  // strides nest exactly when lint() is silent
      bool nested = true;
      std::uint64_t below = inner_bytes(s.dtype, s.dims_inner_first[0]);
      for (int i = 1; i < s.rank; ++i) {
        nested = nested && s.strides_bytes_inner_first[i] >= below;
        below = mul_or_max(s.strides_bytes_inner_first[i], s.dims_inner_first[i]);
      }
      EXPECT_EQ(lint(s).empty(), nested) << to_string(s);
    }
    ASSERT_EQ(v.empty(), ok) << "spec: " << to_string(s) << "\nlimits " << lim.cc_major << '.'
                             << lim.cc_minor << "\nfirst violation: "
                             << (v.empty() ? std::string("none") : to_string(v[0]));
    // Every violation names a field, an index within the rank and a one-line message.
    for (const Violation& x : v) {
      EXPECT_FALSE(x.field.empty());
      EXPECT_LT(x.index, kMaxRank);
      EXPECT_EQ(x.message.find('\n'), std::string::npos);
      EXPECT_NE(x.message.find(": "), std::string::npos) << x.message;  // value: fix
    }
    (ok ? accepted : rejected) += 1;
  }
  // Both outcomes are well represented, so the property says something.
  EXPECT_GT(accepted, 3000);
  EXPECT_GT(rejected, 3000);
}

// A known way to break one rule in a valid spec; false when it does not apply to this spec.
using Mutation = bool (*)(Gen&, TensorMapSpec&, Limits&);

struct NamedMutation {
  Rule rule;
  Mutation apply;
};

bool tiled(const TensorMapSpec& s) {
  return s.mode == Mode::kTiled;
}
bool plain(const TensorMapSpec& s) {
  return s.interleave == Interleave::kNone;
}
int any_dim(Gen& g, const TensorMapSpec& s) {
  return int(g.range(0, s.rank - 1));
}

const std::vector<NamedMutation>& mutations() {
  static const std::vector<NamedMutation> all = {
      {Rule::kModeValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.mode = static_cast<Mode>(g.range(2, 255));
         return true;
       }},
      {Rule::kDataTypeValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.dtype = static_cast<DataType>(g.range(16, 255));
         return true;
       }},
      {Rule::kInterleaveValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.interleave = static_cast<Interleave>(g.range(3, 255));
         return true;
       }},
      {Rule::kSwizzleValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.swizzle = static_cast<Swizzle>(g.range(7, 255));
         return true;
       }},
      {Rule::kL2PromotionValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.l2_promotion = static_cast<L2Promotion>(g.range(4, 255));
         return true;
       }},
      {Rule::kOobFillValid,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.oob_fill = static_cast<OobFill>(g.range(2, 255));
         return true;
       }},
      {Rule::kRankRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (!plain(s)) return false;
         s.rank = int(tiled(s) ? g.range(-3, 0) : g.range(0, 2));
         return true;
       }},
      {Rule::kRankInterleave,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (!tiled(s) || !plain(s) || s.rank > 2) return false;
         s.interleave = Interleave::k16B;
         (void)g;
         return true;
       }},
      {Rule::kAddressNonNull,
       [](Gen&, TensorMapSpec& s, Limits&) {
         s.address = nullptr;
         return true;
       }},
      {Rule::kAddressAligned,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.address = static_cast<const char*>(s.address) + g.range(1, 15);
         return true;
       }},
      {Rule::kDimRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.dims_inner_first[any_dim(g, s)] = g.coin() ? 0 : kTwo32 + g.urange(1, kTwo32);
         return true;
       }},
      {Rule::kInnerStride,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         const std::uint64_t e = std::uint64_t(element_bytes(s.dtype));
         s.strides_bytes_inner_first[0] = e + g.urange(1, 4096);
         return true;
       }},
      {Rule::kStrideMultiple,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (s.rank < 2) return false;
         const std::uint64_t m = std::uint64_t(global_stride_multiple(s));
         s.strides_bytes_inner_first[s.rank - 1] +=
             g.urange(1, m - 1);  // outermost: no nesting after it
         return true;
       }},
      {Rule::kStrideMax,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (s.rank < 2) return false;
         s.strides_bytes_inner_first[s.rank - 1] = kTwo40 + 32 * g.urange(0, 1000);
         return true;
       }},
      {Rule::kBoxRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (!tiled(s)) return false;
         s.box_inner_first[any_dim(g, s)] =
             g.coin() ? 0u : static_cast<std::uint32_t>(g.range(257, 100000));
         return true;
       }},
      {Rule::kBoxInnerBytes,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         const std::uint64_t q = 16 / std::uint64_t(element_bytes(s.dtype));
         const std::uint64_t cap = max_inner(s, 256);
         std::uint64_t b = 0;
         do
           b = g.urange(1, cap);
         while (b % q == 0);
         (tiled(s) ? s.box_inner_first[0] : s.channels_per_pixel) = static_cast<std::uint32_t>(b);
         return copy_fits(s);  // else the copy is too large as well
       }},
      {Rule::kBoxBytes,
       [](Gen&, TensorMapSpec& s, Limits&) {
         if (tiled(s)) {
           for (int d = 1; d < s.rank; ++d) {
             s.box_inner_first[d] = 256;
             s.element_strides_inner_first[d] = 1;
           }
         } else {
           s.pixels_per_column = 1024;
         }
         return documented_copy_bytes(s) > kMaxCopyBytes;
       }},
      {Rule::kElementStrideRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         s.element_strides_inner_first[any_dim(g, s)] =
             g.coin() ? 0u : static_cast<std::uint32_t>(g.range(9, 1000));
         return true;
       }},
      {Rule::kSwizzleSpan,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (!plain(s)) return false;
         const std::uint64_t n = tiled(s) ? s.box_inner_first[0] : s.channels_per_pixel;
         const std::uint64_t bytes = inner_bytes(s.dtype, n);
         if (bytes <= 32) return false;
         s.swizzle = bytes > 64 ? g.pick({Swizzle::k32B, Swizzle::k64B}) : Swizzle::k32B;
         return true;
       }},
      {Rule::kSwizzleArch,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         const std::uint64_t n = tiled(s) ? s.box_inner_first[0] : s.channels_per_pixel;
         if (!plain(s) || inner_bytes(s.dtype, n) > 128) return false;  // else the span breaks too
         s.swizzle =
             g.pick({Swizzle::k128BAtom32B, Swizzle::k128BAtom32BFlip8B, Swizzle::k128BAtom64B});
         return true;
       }},
      {Rule::kOobNanFloat,
       [](Gen&, TensorMapSpec& s, Limits&) {
         if (is_floating_point(s.dtype)) return false;
         s.oob_fill = OobFill::kNan;
         return true;
       }},
      {Rule::kArchTma,
       [](Gen& g, TensorMapSpec&, Limits& lim) {
         lim = Limits{int(g.range(1, 8)), int(g.range(0, 9))};
         return true;
       }},
      {Rule::kIm2colCornerRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (tiled(s)) return false;
         const int lo = s.rank == 3 ? -32768 : s.rank == 4 ? -128 : -16;
         const int i = int(g.range(0, s.rank - 3));
         int& c = g.coin() ? s.pixel_box_lower_corner[i] : s.pixel_box_upper_corner[i];
         c = g.coin() ? lo - int(g.range(1, 1000)) : -lo + int(g.range(0, 1000));
         return true;
       }},
      {Rule::kIm2colBoundingBox,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (tiled(s) || !plain(s)) return false;  // interleaved: measured one dimension lower
         const int lo = s.rank == 3 ? -32768 : s.rank == 4 ? -128 : -16;
         const int hi = -lo - 1;
         const int i = int(g.range(0, s.rank - 3));
         const int d = int(s.dims_inner_first[i + 1]);
         int& lower = s.pixel_box_lower_corner[i];
         int& upper = s.pixel_box_upper_corner[i];
         if (lower - d >= lo) {
           upper = int(g.range(lo, lower - d));  // last pixel = d - 1 + upper < lower
         } else if (d + upper <= hi) {
           lower = int(g.range(d + upper, hi));
         } else {
           return false;
         }
         return true;
       }},
      {Rule::kIm2colChannelsRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (tiled(s)) return false;
         s.channels_per_pixel = g.coin() ? 0u : static_cast<std::uint32_t>(g.range(257, 5000));
         return true;
       }},
      {Rule::kIm2colPixelsRange,
       [](Gen& g, TensorMapSpec& s, Limits&) {
         if (tiled(s)) return false;
         s.pixels_per_column = g.coin() ? 0u : static_cast<std::uint32_t>(g.range(1025, 100000));
         return true;
       }},
  };
  return all;
}

TEST(ValidateRandom, OneBrokenFieldGivesExactlyItsRule) {
  Gen g(20240611);
  std::set<Rule> exercised;
  int checked = 0;
  while (checked < 8000) {
    TensorMapSpec s = g.coin() ? random_valid_tiled(g) : random_valid_im2col(g);
    Limits lim = Limits::hopper();
    const NamedMutation& m =
        mutations()[std::size_t(g.range(0, std::int64_t(mutations().size()) - 1))];
    const TensorMapSpec before = s;
    if (!m.apply(g, s, lim)) continue;
    const std::vector<Violation> v = validate(s, lim);
    ASSERT_FALSE(v.empty()) << rule_code(m.rule) << " not reported for " << to_string(s)
                            << "\nmutated from " << to_string(before);
    for (const Violation& x : v) {
      ASSERT_EQ(rule_code(x.rule), rule_code(m.rule))
          << "breaking " << rule_name(m.rule) << " also reported: " << to_string(x)
          << "\nspec: " << to_string(s) << "\nmutated from " << to_string(before);
    }
    exercised.insert(m.rule);
    ++checked;
  }
  EXPECT_EQ(exercised.size(), mutations().size());
}

}  // namespace
}  // namespace tma
