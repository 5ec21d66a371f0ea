// tmakit: the validator. A pure function from a TensorMapSpec to every rule it breaks.
//
// One rule per requirement that the CUDA driver documents for cuTensorMapEncodeTiled and
// cuTensorMapEncodeIm2col (cuda.h, "Tensor Map Object Management"), so that a spec the driver
// would reject with a bare CUDA_ERROR_INVALID_VALUE is explained before the driver is called
// (TMA-RULES.md). Runs without a GPU; the target GPU is described by `Limits`.
//
// The documentation and the driver disagree in places. A sweep of encode_unchecked against
// validate over 1.5M random specs and targeted probes (H200, driver 580, CUDA 13.0) found:
//  - enforced but undocumented: box inner bytes a multiple of 16 also with interleave, im2col
//    channels_per_pixel bytes a multiple of 16, im2col spatial dimensions below 2^31, and at most
//    228 KiB traversed per copy (TMA037);
//  - documented but not enforced: interleave 32B with another swizzle (kept: the documentation
//    requires it) and the nesting of strides (moved to lint(): overlapping rows are legal and
//    useful for loads); with interleave, im2col's spatial dimensions are taken one lower;
//  - tmakit's own: a null address (the driver encodes it; every copy through it faults),
//    strides_bytes_inner_first[0] (never passed to the driver; anything but the element size
//    means the caller's layout is not the one TMA reads), and an interleaved copy whose chunks do
//    not fit in an SM's shared memory (the driver counts elements; the hardware moves whole
//    16 / 32 B chunks: docs/hardware-findings.md, finding 12; TMA038).
// After these rules, no spec the validator accepts was rejected by the driver in the last sweep;
// the specs it rejects and the driver accepts are exactly the kept/own rules above, plus boxes
// and im2col dimensions that only pass the driver's 32-bit or rounded-down arithmetic.
// Each rule's comment below names where it came from.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tma/config.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"

namespace tma {

// The GPU a spec is checked for. Some encodings (packed types, 128B_ATOM swizzles) exist only on
// compute capability >= 10.0.
struct Limits {
  int cc_major = 9;
  int cc_minor = 0;
  // Most bytes one copy may traverse (box extents after element strides). The driver rejects more
  // than 233472 B = 228 KiB, the shared memory of a Hopper SM (found by the GPU sweep on an H200;
  // undocumented). Its own count rounds box / element stride down and applies
  // element_strides[0] even without interleave, so it lets some larger boxes through; those
  // cannot fit in a block's shared memory, and tmakit rejects them too.
  std::uint64_t max_box_bytes = 233472;

  // Hopper (sm_90), the default target.
  static constexpr Limits hopper() { return Limits{9, 0}; }
  // Blackwell (sm_100): adds the packed types and the 128B_ATOM swizzles.
  static constexpr Limits blackwell() { return Limits{10, 0}; }
  // Whether the target's compute capability is at least major.minor.
  constexpr bool at_least(int major, int minor) const {
    return cc_major > major || (cc_major == major && cc_minor >= minor);
  }
};

// Bytes that `n` consecutive elements of dimension 0 occupy in memory (global or shared).
// Packed types: 16U4_ALIGN8B packs 4-bit values with no gaps (half a byte each, rounded up); the
// ALIGN16B types put each group of 16 values in 16 B (with a gap), rounded up to whole groups.
constexpr std::uint64_t inner_bytes(DataType t, std::uint64_t n) {
  switch (t) {
    case DataType::k16U4Align8B:
      return (n + 1) / 2;
    case DataType::k16U4Align16B:
    case DataType::k16U6Align16B:
      return (n + 15) / 16 * 16;
    default:
      return n * static_cast<std::uint64_t>(element_bytes(t));
  }
}

// Whether `t` is one of the packed types whose groups are 16 B aligned with a gap.
constexpr bool is_packed_align16(DataType t) {
  return t == DataType::k16U4Align16B || t == DataType::k16U6Align16B;
}

// Global-memory alignment the base address needs: 16 B, or 32 B with interleave 32B and for the
// packed ALIGN16B types.
constexpr int global_address_alignment(const TensorMapSpec& s) {
  return s.interleave == Interleave::k32B || is_packed_align16(s.dtype) ? 32 : 16;
}

// Multiple every global stride (dimensions 1..rank-1) must be: 16 B, or 32 B as for the address.
constexpr int global_stride_multiple(const TensorMapSpec& s) {
  return global_address_alignment(s);
}

namespace detail {

inline constexpr std::uint64_t kMaxDim = std::uint64_t{1} << 32;       // globalDim <= 2^32
inline constexpr std::uint64_t kStrideLimit = std::uint64_t{1} << 40;  // globalStrides < 2^40
inline constexpr std::uint64_t kMaxIm2colSpatialDim = (std::uint64_t{1} << 31) - 1;
inline constexpr std::uint32_t kMaxBox = 256;
inline constexpr std::uint32_t kMaxElementStride = 8;
inline constexpr std::uint32_t kMaxChannelsPerPixel = 256;
inline constexpr std::uint32_t kMaxPixelsPerColumn = 1024;

template <class... A>
std::string cat(const A&... a) {
  std::ostringstream o;
  (o << ... << a);
  return o.str();
}

inline std::string at(const char* field, int i) {
  return cat(field, '[', i, ']');
}

inline std::string hex(const void* p) {
  std::ostringstream o;
  o << "0x" << std::hex << reinterpret_cast<std::uintptr_t>(p);
  return o.str();
}

inline std::uint64_t round_up(std::uint64_t v, std::uint64_t m) {
  return (v + m - 1) / m * m;
}

// a * b, saturated at UINT64_MAX (a stride below 2^40 times a dim up to 2^32 can overflow).
inline std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return a * b;
}

// "SWIZZLE_128B", "SWIZZLE_128B_ATOM_32B": the driver's names, which users search for.
inline std::string swizzle_name(Swizzle s) {
  std::string n(to_string(s));
  for (char& c : n)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "SWIZZLE_" + n;
}

// "96 elements x 2 B = 192 B" or, packed, "256 elements of 16u4_align8b = 128 B".
inline std::string elements_bytes(DataType t, std::uint64_t n) {
  if (is_packed(t)) return cat(n, " elements of ", to_string(t), " = ", inner_bytes(t, n), " B");
  return cat(n, " elements x ", element_bytes(t), " B = ", inner_bytes(t, n), " B");
}

// The most elements of dimension 0 that fit in `bytes`.
inline std::uint64_t elements_in(DataType t, std::uint64_t bytes) {
  if (t == DataType::k16U4Align8B) return bytes * 2;
  if (is_packed_align16(t)) return bytes;
  return bytes / static_cast<std::uint64_t>(element_bytes(t));
}

// The first dimension the driver treats as spatial (W) in im2col mode: 1 (after C), but 0 with
// interleave, where the GPU sweep found the driver measuring everything one dimension lower
// (corners and the signed 32-bit pixel range alike).
inline int im2col_first_spatial(const TensorMapSpec& s) {
  return s.interleave == Interleave::kNone ? 1 : 0;
}

// Collects violations; one `add` per broken rule.
struct Report {
  std::vector<Violation> out;
  void add(Rule r, std::string field, int index, std::string message) {
    out.push_back(Violation{r, std::move(field), index, std::move(message)});
  }
};

// What every check below may rely on: which enum fields hold real enumerators, and how many
// dimensions to look at.
struct Known {
  bool mode, dtype, interleave, swizzle;
  int dims;  // entries of the per-dimension arrays to check: rank clamped to 0..kMaxRank
};

inline void check_target(const Limits& lim, Report& r) {
  if (lim.at_least(9, 0)) return;
  r.add(Rule::kArchTma, "limits", -1,
        cat("compute capability ", lim.cc_major, '.', lim.cc_minor,
            " is below 9.0: TMA needs Hopper (sm_90) or newer: run on an H100/H200 or newer GPU"));
}

inline Known check_enums(const TensorMapSpec& s, Report& r) {
  if (!is_valid(s.mode)) {
    r.add(Rule::kModeValid, "mode", -1,
          cat("mode = ", int(s.mode),
              " is not a tma::Mode (0 = tiled, 1 = im2col): use Mode::kTiled or Mode::kIm2col"));
  }
  if (!is_valid(s.dtype)) {
    r.add(Rule::kDataTypeValid, "dtype", -1,
          cat("dtype = ", int(s.dtype), " is not a tma::DataType (0..", kNumDataTypes - 1,
              "): use one of DataType::kUInt8 .. DataType::k16U6Align16B"));
  }
  if (!is_valid(s.interleave)) {
    r.add(Rule::kInterleaveValid, "interleave", -1,
          cat("interleave = ", int(s.interleave),
              " is not a tma::Interleave (0..2): use Interleave::kNone, k16B or k32B"));
  }
  if (!is_valid(s.swizzle)) {
    r.add(Rule::kSwizzleValid, "swizzle", -1,
          cat("swizzle = ", int(s.swizzle),
              " is not a tma::Swizzle (0..6): use Swizzle::kNone, k32B, k64B or k128B"));
  }
  if (!is_valid(s.l2_promotion)) {
    r.add(Rule::kL2PromotionValid, "l2_promotion", -1,
          cat("l2_promotion = ", int(s.l2_promotion),
              " is not a tma::L2Promotion (0..3): use L2Promotion::kNone, k64B, k128B or k256B"));
  }
  if (!is_valid(s.oob_fill)) {
    r.add(Rule::kOobFillValid, "oob_fill", -1,
          cat("oob_fill = ", int(s.oob_fill),
              " is not a tma::OobFill (0..1): use OobFill::kZero or OobFill::kNan"));
  }
  return Known{is_valid(s.mode), is_valid(s.dtype), is_valid(s.interleave), is_valid(s.swizzle),
               std::clamp(s.rank, 0, kMaxRank)};
}

inline void check_rank(const TensorMapSpec& s, const Known& k, Report& r) {
  if (!k.mode) return;
  if (s.mode == Mode::kTiled && (s.rank < 1 || s.rank > kMaxRank)) {
    r.add(Rule::kRankRange, "rank", -1,
          s.rank < 1 ? cat("rank = ", s.rank,
                           " is outside 1..5 for tiled mode: describe at least one dimension")
                     : cat("rank = ", s.rank,
                           " is outside 1..5 for tiled mode: merge adjacent dimensions whose "
                           "strides nest so that at most 5 remain"));
  }
  if (s.mode == Mode::kIm2col && (s.rank < 3 || s.rank > kMaxRank)) {
    r.add(Rule::kRankRange, "rank", -1,
          cat("rank = ", s.rank,
              " is outside 3..5 for im2col mode: use a 3-D (NWC), 4-D (NHWC) or 5-D (NDHWC) "
              "tensor"));
  }
  if (k.interleave && s.interleave != Interleave::kNone && s.rank >= 1 && s.rank < 3) {
    r.add(Rule::kRankInterleave, "rank", -1,
          cat("rank = ", s.rank, " with interleave ", to_string(s.interleave),
              ": interleaved layouts need rank >= 3: add an outer dimension of extent 1 or use "
              "interleave none"));
  }
}

inline void check_address(const TensorMapSpec& s, const Known& k, Report& r) {
  // tmakit's own: the driver encodes a null base (GPU sweep), and every copy through it faults.
  if (s.address == nullptr) {
    r.add(Rule::kAddressNonNull, "address", -1,
          "address = null: pass the global-memory base of the tensor (a device pointer)");
    return;
  }
  const bool known = k.interleave && k.dtype;
  const std::uintptr_t align = known ? std::uintptr_t(global_address_alignment(s)) : 16;
  const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(s.address) % align;
  if (off == 0) return;
  std::string why;
  if (align == 32) {
    why = s.interleave == Interleave::k32B ? ", which interleave 32B requires"
                                           : cat(", which ", to_string(s.dtype), " requires");
  }
  r.add(Rule::kAddressAligned, "address", -1,
        cat("address = ", hex(s.address), " is not ", align, " B aligned", why, " (it is ", off,
            " B past a ", align, " B boundary): offset the base by a multiple of ", align,
            " B (cudaMalloc returns 256 B aligned memory)"));
}

inline void check_dims(const TensorMapSpec& s, const Known& k, Report& r) {
  for (int i = 0; i < k.dims; ++i) {
    const std::uint64_t d = s.dims_inner_first[i];
    if (d == 0) {
      r.add(Rule::kDimRange, "dims_inner_first", i,
            cat(at("dims_inner_first", i),
                " = 0 is outside 1..2^32: every dimension needs at least 1 element (give it "
                "extent 1 or drop it)"));
    } else if (d > kMaxDim) {
      r.add(Rule::kDimRange, "dims_inner_first", i,
            cat(at("dims_inner_first", i), " = ", d,
                " is outside 1..2^32: split the dimension into two of at most 2^32 elements each"));
    } else if (k.mode && k.interleave && s.mode == Mode::kIm2col && d > kMaxIm2colSpatialDim &&
               i >= im2col_first_spatial(s) && i < im2col_first_spatial(s) + s.rank - 2) {
      // Undocumented; found by the GPU sweep. Pixel coordinates are signed 32-bit. The driver's
      // own test is the bounding-box area computed in 32 bits, so some larger dimensions slip
      // through by wrap-around; no coordinate can reach them, so tmakit rejects them all.
      r.add(Rule::kDimRange, "dims_inner_first", i,
            cat(at("dims_inner_first", i), " = ", d,
                " is outside 1..2^31-1, the range of an im2col pixel coordinate (signed 32-bit): "
                "split the image into parts of at most ",
                kMaxIm2colSpatialDim, " pixels"));
    }
  }
  if (!k.dtype || k.dims < 1 || !is_packed(s.dtype) || s.dims_inner_first[0] == 0) return;
  const std::uint64_t m = s.dtype == DataType::k16U4Align8B ? 2 : 128;
  if (s.dims_inner_first[0] % m != 0) {
    r.add(Rule::kPackedDim0, "dims_inner_first", 0,
          cat("dims_inner_first[0] = ", s.dims_inner_first[0], " is not a multiple of ", m,
              ", which ", to_string(s.dtype), " requires: pad dimension 0 to ",
              round_up(s.dims_inner_first[0], m), " elements"));
  }
}

inline void check_strides(const TensorMapSpec& s, const Known& k, Report& r) {
  // tmakit's own: dimension 0's stride is never passed to the driver (TMA reads it contiguously);
  // a value other than the element size says the caller's layout is not the one TMA will read.
  if (k.dtype && k.dims >= 1) {
    const std::uint64_t s0 = s.strides_bytes_inner_first[0];
    if (is_packed(s.dtype) && s0 != 0) {
      r.add(Rule::kInnerStride, "strides_bytes_inner_first", 0,
            cat("strides_bytes_inner_first[0] = ", s0, " B is not 0: dimension 0 of a packed ",
                to_string(s.dtype),
                " tensor is contiguous and has no byte stride: leave strides_bytes_inner_first[0] "
                "= 0"));
    } else if (!is_packed(s.dtype) && s0 != 0 && s0 != std::uint64_t(element_bytes(s.dtype))) {
      r.add(Rule::kInnerStride, "strides_bytes_inner_first", 0,
            cat("strides_bytes_inner_first[0] = ", s0, " B is not the ", element_bytes(s.dtype),
                " B element size: TMA's dimension 0 must be contiguous: make the contiguous "
                "dimension innermost (transpose the view, or copy it contiguous) or leave "
                "strides_bytes_inner_first[0] = 0"));
    }
  }
  const std::uint64_t m = k.interleave && k.dtype ? std::uint64_t(global_stride_multiple(s)) : 16;
  for (int i = 1; i < k.dims; ++i) {
    const std::uint64_t st = s.strides_bytes_inner_first[i];
    const std::string f = at("strides_bytes_inner_first", i);
    if (st % m != 0) {
      std::string why;
      if (m == 32) {
        why = s.interleave == Interleave::k32B ? ", which interleave 32B requires"
                                               : cat(", which ", to_string(s.dtype), " requires");
      }
      r.add(Rule::kStrideMultiple, "strides_bytes_inner_first", i,
            cat(f, " = ", st, " B is not a multiple of ", m, " B", why, ": pad it to ",
                round_up(st, m), " B (allocate with a padded leading dimension)"));
    }
    if (st >= kStrideLimit) {
      r.add(Rule::kStrideMax, "strides_bytes_inner_first", i,
            cat(f, " = ", st,
                " B is not below 2^40 B: split the tensor into several tensor maps "
                "along dimension ",
                i));
    }
  }
}

// Strides that do not cover the dimension below them: rows overlap. The driver's documentation
// only hints at nesting (its example builds nested strides and asserts globalStrides[i] >=
// globalDim[i]); the GPU sweep found that the driver accepts overlapping, broadcast (stride 0) and
// permuted outer dimensions. Loads of such views are well defined (and useful: broadcasting,
// sliding windows); stores and reductions through them race. So this is a lint, not a rule.
inline void check_overlap(const TensorMapSpec& s, const Known& k, Report& r) {
  if (!k.dtype) return;
  for (int i = 1; i < k.dims; ++i) {
    const std::uint64_t st = s.strides_bytes_inner_first[i];
    const std::uint64_t below_dim = s.dims_inner_first[i - 1];
    if (below_dim == 0 || below_dim > kMaxDim) continue;  // reported by dim-range
    const std::string f = at("strides_bytes_inner_first", i);
    if (i == 1) {
      const std::uint64_t row = inner_bytes(s.dtype, below_dim);
      if (st >= row) continue;
      r.add(Rule::kStrideOverlap, "strides_bytes_inner_first", 1,
            cat(f, " = ", st, " B is smaller than one row of dimension 0 (dims_inner_first[0] = ",
                elements_bytes(s.dtype, below_dim),
                "), so consecutive rows overlap: use strides_bytes_inner_first[1] >= ", row));
    } else {
      const std::uint64_t below_stride = s.strides_bytes_inner_first[i - 1];
      const std::uint64_t need = mul_sat(below_stride, below_dim);
      if (st >= need) continue;
      r.add(Rule::kStrideOverlap, "strides_bytes_inner_first", i,
            cat(f, " = ", st, " B is smaller than ", at("strides_bytes_inner_first", i - 1), " x ",
                at("dims_inner_first", i - 1), " = ", below_stride, " B x ", below_dim, " = ", need,
                " B, so dimension ", i, " overlaps dimension ", i - 1, ": use ", f, " >= ", need,
                " or order the dimensions by increasing stride"));
    }
  }
}

inline void check_element_strides(const TensorMapSpec& s, const Known& k, Report& r) {
  for (int i = 0; i < k.dims; ++i) {
    const std::uint32_t e = s.element_strides_inner_first[i];
    if (e >= 1 && e <= kMaxElementStride) continue;
    r.add(Rule::kElementStrideRange, "element_strides_inner_first", i,
          cat(at("element_strides_inner_first", i), " = ", e,
              " is outside 1..8: use a traversal step of 1..8 (1 for a dense box)"));
  }
}

// Tiled mode: the box.
inline void check_box(const TensorMapSpec& s, const Known& k, Report& r) {
  for (int i = 0; i < k.dims; ++i) {
    const std::uint32_t b = s.box_inner_first[i];
    if (b >= 1 && b <= kMaxBox) continue;
    r.add(Rule::kBoxRange, "box_inner_first", i,
          b == 0 ? cat(at("box_inner_first", i),
                       " = 0 is outside 1..256: a box needs at least 1 element in every dimension")
                 : cat(at("box_inner_first", i), " = ", b,
                       " is outside 1..256: use at most 256 elements per dimension and issue "
                       "several copies"));
  }
  if (!k.dtype || !k.interleave || k.dims < 1) return;
  const std::uint32_t b0 = s.box_inner_first[0];
  if (b0 < 1 || b0 > kMaxBox) return;  // reported by box-range
  // Documented for interleave none; the GPU sweep found the driver enforcing it with interleave
  // too. The ALIGN16B types must use box 128 (packed-box0-is-128), which is 128 B.
  if (!is_packed_align16(s.dtype) && inner_bytes(s.dtype, b0) % 16 != 0) {
    const std::uint64_t q = elements_in(s.dtype, 16);  // elements per 16 B
    r.add(Rule::kBoxInnerBytes, "box_inner_first", 0,
          cat("box_inner_first[0] = ", elements_bytes(s.dtype, b0),
              " is not a multiple of 16 B: use box_inner_first[0] = ", round_up(b0, q),
              " (a multiple of ", q, " elements)"));
  }
  if (is_packed_align16(s.dtype) && b0 != 128) {
    r.add(Rule::kPackedBox0, "box_inner_first", 0,
          cat("box_inner_first[0] = ", b0, " is not 128, which ", to_string(s.dtype),
              " requires: use box_inner_first[0] = 128"));
  }
}

// Im2col mode: the pixel bounding box, channels per pixel and pixels per column.
inline void check_im2col(const TensorMapSpec& s, const Known& k, Report& r) {
  if (s.rank >= 3 && s.rank <= kMaxRank) {
    const int spatial = s.rank - 2;
    // Corners are stored in 16, 8 or 5 bits depending on how many spatial dimensions share them.
    const int lo = s.rank == 3 ? -32768 : s.rank == 4 ? -128 : -16;
    const int hi = s.rank == 3 ? 32767 : s.rank == 4 ? 127 : 15;
    bool in_range = true;
    auto corner = [&](const char* field, const std::array<int, 3>& c) {
      for (int i = 0; i < spatial; ++i) {
        if (c[i] >= lo && c[i] <= hi) continue;
        in_range = false;
        r.add(Rule::kIm2colCornerRange, field, i,
              cat(at(field, i), " = ", c[i], " is outside ", lo, "..", hi, ", the range of a rank-",
                  s.rank, " im2col corner: use a value in ", lo, "..", hi,
                  " (less padding, or a smaller filter)"));
      }
    };
    corner("pixel_box_lower_corner", s.pixel_box_lower_corner);
    corner("pixel_box_upper_corner", s.pixel_box_upper_corner);
    // The bounding box along spatial dimension d = i + 1 spans pixels lower[i] ..
    // dims[d] - 1 + upper[i] (the upper corner is relative to the far edge of the tensor, as in
    // the PTX ISA's im2col bounding box: lower = -pad, upper = pad - (filter - 1) * dilation).
    // "Non-zero area" is read as: that range holds at least one pixel in every spatial dimension,
    // i.e. dims[d] + upper[i] - lower[i] >= 1. The GPU sweep confirmed this reading exactly
    // without interleave. With interleave the driver measures corner i against dimension d = i
    // instead (one lower; found by the sweep on driver 580, every random spec explained); the
    // validator follows the driver, and the GPU data tests decide what the hardware walks.
    for (int i = 0; in_range && k.interleave && i < spatial; ++i) {
      const int dim = i + im2col_first_spatial(s);
      const std::uint64_t d = s.dims_inner_first[dim];
      if (d == 0 || d > kMaxDim) continue;  // reported by dim-range
      const std::int64_t lower = s.pixel_box_lower_corner[i];
      const std::int64_t upper = s.pixel_box_upper_corner[i];
      const std::int64_t last = std::int64_t(d) - 1 + upper;
      if (last >= lower) continue;
      r.add(Rule::kIm2colBoundingBox, "pixel_box_upper_corner", i,
            cat("pixel_box_lower_corner[", i, "] = ", lower, " and pixel_box_upper_corner[", i,
                "] = ", upper, " leave an empty bounding box along dims_inner_first[", dim,
                "] = ", d, " (it spans ", lower, " .. ", d, " - 1 + ", upper, " = ", last,
                "): use pixel_box_upper_corner[", i, "] >= ", lower - std::int64_t(d) + 1,
                " or pixel_box_lower_corner[", i, "] <= ", last));
    }
  }
  const std::uint32_t c = s.channels_per_pixel;
  if (c < 1 || c > kMaxChannelsPerPixel) {
    r.add(Rule::kIm2colChannelsRange, "channels_per_pixel", -1,
          c == 0 ? std::string("channels_per_pixel = 0 is outside 1..256: load at least 1 channel")
                 : cat("channels_per_pixel = ", c,
                       " is outside 1..256: load at most 256 channels per copy and issue "
                       "several copies along C"));
  }
  // Like box_inner_first[0] in tiled mode: undocumented for im2col, enforced by the driver (GPU
  // sweep), with and without interleave.
  if (k.dtype && !is_packed_align16(s.dtype) && c >= 1 && c <= kMaxChannelsPerPixel &&
      inner_bytes(s.dtype, c) % 16 != 0) {
    const std::uint64_t q = elements_in(s.dtype, 16);
    r.add(Rule::kBoxInnerBytes, "channels_per_pixel", -1,
          cat("channels_per_pixel = ",
              is_packed(s.dtype) ? cat(c, " of ", to_string(s.dtype))
                                 : cat(c, " x ", element_bytes(s.dtype), " B"),
              " = ", inner_bytes(s.dtype, c),
              " B is not a multiple of 16 B: use channels_per_pixel = ", round_up(c, q),
              " (a multiple of ", q, " channels)"));
  }
  if (k.dtype && is_packed_align16(s.dtype) && c != 128) {
    r.add(Rule::kPackedBox0, "channels_per_pixel", -1,
          cat("channels_per_pixel = ", c, " is not 128, which ", to_string(s.dtype),
              " requires: use channels_per_pixel = 128"));
  }
  const std::uint32_t p = s.pixels_per_column;
  if (p < 1 || p > kMaxPixelsPerColumn) {
    r.add(Rule::kIm2colPixelsRange, "pixels_per_column", -1,
          p == 0 ? std::string("pixels_per_column = 0 is outside 1..1024: load at least 1 pixel")
                 : cat("pixels_per_column = ", p,
                       " is outside 1..1024: load at most 1024 pixels per copy and issue several "
                       "copies"));
  }
}

// Swizzle against the inner box and the interleave; the smallest swizzle whose span holds
// `bytes`, for the fix.
inline Swizzle smallest_swizzle_for(std::uint64_t bytes) {
  return bytes <= 32 ? Swizzle::k32B : bytes <= 64 ? Swizzle::k64B : Swizzle::k128B;
}

inline void check_swizzle(const TensorMapSpec& s, const Known& k, const Limits& lim, Report& r) {
  if (!k.swizzle || !k.interleave) return;
  // Documented; the driver does not enforce it (GPU sweep). Kept: what TMA does with the other
  // swizzles on an interleaved layout is undefined by the documentation.
  if (s.interleave == Interleave::k32B && s.swizzle != Swizzle::k32B) {
    r.add(Rule::kInterleaveSwizzle, "swizzle", -1,
          cat("swizzle = ", swizzle_name(s.swizzle),
              " with interleave 32B: interleave 32B requires SWIZZLE_32B: use swizzle = "
              "Swizzle::k32B"));
  }
  if (s.swizzle != Swizzle::kNone && s.interleave == Interleave::kNone && k.dtype && k.mode) {
    const bool tiled = s.mode == Mode::kTiled;
    const std::uint64_t n = tiled ? (k.dims >= 1 ? s.box_inner_first[0] : 0) : s.channels_per_pixel;
    const std::uint64_t max_n = tiled ? kMaxBox : kMaxChannelsPerPixel;
    const std::uint64_t bytes = inner_bytes(s.dtype, n);
    const std::uint64_t span = std::uint64_t(swizzle_span_bytes(s.swizzle));
    if (n >= 1 && n <= max_n && bytes > span) {
      const std::string f = tiled ? "box_inner_first[0]" : "channels_per_pixel";
      const std::string amount =
          tiled
              ? elements_bytes(s.dtype, n)
              : (is_packed(s.dtype) ? cat(n, " of ", to_string(s.dtype), " = ", bytes, " B")
                                    : cat(n, " x ", element_bytes(s.dtype), " B = ", bytes, " B"));
      const std::string other =
          bytes <= 128 ? swizzle_name(smallest_swizzle_for(bytes)) : std::string("no swizzle");
      r.add(Rule::kSwizzleSpan, tiled ? "box_inner_first" : "channels_per_pixel", tiled ? 0 : -1,
            cat(f, " = ", amount, " exceeds the ", span, " B span of ", swizzle_name(s.swizzle),
                ": use ", f, " <= ", elements_in(s.dtype, span), " or ", other));
    }
  }
  const bool atom = s.swizzle == Swizzle::k128BAtom32B ||
                    s.swizzle == Swizzle::k128BAtom32BFlip8B || s.swizzle == Swizzle::k128BAtom64B;
  if (atom && !lim.at_least(10, 0)) {
    r.add(Rule::kSwizzleArch, "swizzle", -1,
          cat("swizzle = ", swizzle_name(s.swizzle),
              " needs compute capability >= 10.0 (the target is ", lim.cc_major, '.', lim.cc_minor,
              "): use SWIZZLE_128B on Hopper"));
  }
}

// The packed sub-byte types and the NaN fill.
inline void check_dtype(const TensorMapSpec& s, const Known& k, const Limits& lim, Report& r) {
  if (!k.dtype) return;
  if (is_packed(s.dtype) && !lim.at_least(10, 0)) {
    r.add(Rule::kDataTypeArch, "dtype", -1,
          cat("dtype = ", to_string(s.dtype), " needs compute capability >= 10.0 (the target is ",
              lim.cc_major, '.', lim.cc_minor, "): unpack the values to uint8 on Hopper"));
  }
  if (k.swizzle && is_packed_align16(s.dtype)) {
    const bool u6 = s.dtype == DataType::k16U6Align16B;
    const bool ok = s.swizzle == Swizzle::kNone || s.swizzle == Swizzle::k128B ||
                    s.swizzle == Swizzle::k128BAtom32B ||
                    (u6 && s.swizzle == Swizzle::k128BAtom64B);
    if (!ok) {
      r.add(Rule::kPackedSwizzle, "swizzle", -1,
            cat("swizzle = ", swizzle_name(s.swizzle), " is not supported with ",
                to_string(s.dtype), ": use ",
                u6 ? "SWIZZLE_NONE, SWIZZLE_128B, SWIZZLE_128B_ATOM_32B or SWIZZLE_128B_ATOM_64B "
                     "(stores only)"
                   : "SWIZZLE_NONE, SWIZZLE_128B or SWIZZLE_128B_ATOM_32B (loads only)"));
    }
  }
  if (k.interleave && s.dtype == DataType::k16U6Align16B && s.interleave != Interleave::kNone) {
    r.add(Rule::kPackedInterleave, "interleave", -1,
          cat("interleave = ", to_string(s.interleave),
              " with 16u6_align16b: 16u6_align16b requires interleave none: use "
              "Interleave::kNone"));
  }
  if (s.oob_fill == OobFill::kNan && !is_floating_point(s.dtype)) {
    r.add(
        Rule::kOobNanFloat, "oob_fill", -1,
        cat("oob_fill = nan with dtype ", to_string(s.dtype),
            is_packed(s.dtype) ? ": the NaN fill exists only for floating-point types, not packed "
                                 "integers: use OobFill::kZero"
                               : ": the NaN fill exists only for floating-point types: use "
                                 "OobFill::kZero"));
  }
}

// tmakit's own rule TMA038 (the driver does not check it): an interleaved tiled copy moves whole 16
// / 32 B chunks and skips dimension rank - 2 (MEASURED, docs/hardware-findings.md finding 12), so
// its shared-memory image, transaction_bytes(), can pass the driver's element count below and still
// not fit in an SM (uint8, box[0] = 256 chunks of 32 B is 8 KiB a row). Only called for valid
// box / element-stride ranges and ranks 3..5.
inline void check_interleaved_image(const TensorMapSpec& s, const Limits& lim, Report& r) {
  const std::uint64_t bytes = transaction_bytes(s);
  if (bytes <= lim.max_box_bytes) return;
  std::string extents;
  for (int d = 0; d < s.rank; ++d)
    extents += cat(d ? " x " : "", traversed_extent(s, d));
  int outer = s.rank - 1;
  while (outer > 0 && traversed_extent(s, outer) == 1)
    --outer;
  const std::uint64_t fit = lim.max_box_bytes / (bytes / traversed_extent(s, outer));
  const std::string fix = fit >= 1 ? cat("use ", at("box_inner_first", outer),
                                         " <= ", fit * s.element_strides_inner_first[outer])
                                   : std::string("make the box smaller");
  r.add(
      Rule::kInterleavedImageBytes, "box_inner_first", outer,
      cat("with interleave ", to_string(s.interleave), " the box moves ", extents, " chunks of ",
          interleave_bytes(s.interleave), " B (dimension 0 counts chunks, dimension ", s.rank - 2,
          " is not traversed) = ", bytes, " B of shared memory, more than the ", lim.max_box_bytes,
          " B one copy can move (the shared memory of an SM): ", fix, " or split the copy"));
}

// At most Limits::max_box_bytes traversed per copy (found by the GPU sweep; undocumented). The fix
// names the outermost dimension that still spans more than one element and how far to shrink it.
inline void check_box_bytes(const TensorMapSpec& s, const Known& k, const Limits& lim, Report& r) {
  if (!k.dtype || !k.mode || !k.interleave) return;
  const bool tiled = s.mode == Mode::kTiled;
  if (tiled) {
    if (s.rank < 1 || s.rank > kMaxRank) return;
    for (int d = 0; d < s.rank; ++d) {  // out-of-range values are reported by their own rules
      if (s.box_inner_first[d] < 1 || s.box_inner_first[d] > kMaxBox) return;
      if (s.element_strides_inner_first[d] < 1 || s.element_strides_inner_first[d] > 8) return;
    }
  } else if (s.channels_per_pixel < 1 || s.channels_per_pixel > kMaxChannelsPerPixel ||
             s.pixels_per_column < 1 || s.pixels_per_column > kMaxPixelsPerColumn) {
    return;
  }
  const int n = tiled ? s.rank : 2;
  std::uint64_t bytes = inner_bytes(s.dtype, box_extent(s, 0));
  for (int d = 1; d < n; ++d)
    bytes *= box_extent(s, d);
  if (bytes <= lim.max_box_bytes) {
    if (is_interleaved_tiled(s) && s.rank >= 3) check_interleaved_image(s, lim, r);
    return;
  }
  std::string extents;
  for (int d = 0; d < n; ++d)
    extents += cat(d ? " x " : "", box_extent(s, d));
  int outer = n - 1;
  while (outer > 0 && box_extent(s, outer) == 1)
    --outer;
  const std::uint64_t per_step = bytes / box_extent(s, outer);  // bytes of one step of `outer`
  const std::uint64_t fit = lim.max_box_bytes / per_step;       // steps of `outer` that fit
  std::string fix;
  if (tiled && fit >= 1) {
    const std::uint64_t step =
        outer == 0 && s.interleave == Interleave::kNone ? 1 : s.element_strides_inner_first[outer];
    fix = cat("use ", at("box_inner_first", outer), " <= ", fit * step);
  } else if (!tiled) {
    fix = cat("use pixels_per_column <= ", fit);
  } else {
    fix = "make the box smaller";
  }
  r.add(Rule::kBoxBytes, tiled ? "box_inner_first" : "pixels_per_column", tiled ? outer : -1,
        cat(tiled ? "the box" : "channels_per_pixel x pixels_per_column", " traverses ", extents,
            is_packed(s.dtype) ? cat(" elements of ", to_string(s.dtype))
                               : cat(" elements x ", element_bytes(s.dtype), " B"),
            " = ", bytes, " B, more than the ", lim.max_box_bytes,
            " B one copy can move (the shared memory of an SM): ", fix, " or split the copy"));
}

}  // namespace detail

// Every rule `spec` breaks for a GPU described by `limits`, in a stable order (target, enums,
// rank, address, dims, strides, box or im2col geometry, element strides, box bytes, swizzle,
// dtype).
// Empty means the driver should accept the spec. Pure: no GPU, no driver call.
inline std::vector<Violation> validate(const TensorMapSpec& spec,
                                       const Limits& limits = Limits::hopper()) {
  detail::Report r;
  detail::check_target(limits, r);
  const detail::Known k = detail::check_enums(spec, r);
  detail::check_rank(spec, k, r);
  detail::check_address(spec, k, r);
  detail::check_dims(spec, k, r);
  detail::check_strides(spec, k, r);
  if (k.mode && spec.mode == Mode::kTiled) detail::check_box(spec, k, r);
  if (k.mode && spec.mode == Mode::kIm2col) detail::check_im2col(spec, k, r);
  detail::check_element_strides(spec, k, r);
  detail::check_box_bytes(spec, k, limits, r);
  detail::check_swizzle(spec, k, limits, r);
  detail::check_dtype(spec, k, limits, r);
  return std::move(r.out);
}

// Findings the driver accepts but that are likely mistakes, in validate()'s format: strides that
// do not cover the dimension below them (TMA015: overlapping, broadcast or permuted dimensions).
// Loads through such a map are fine; stores and reductions race. describe() prints them as
// warnings; make_tensor_map() does not reject them.
inline std::vector<Violation> lint(const TensorMapSpec& spec) {
  detail::Report r;
  const detail::Known k{is_valid(spec.mode), is_valid(spec.dtype), is_valid(spec.interleave),
                        is_valid(spec.swizzle), std::clamp(spec.rank, 0, kMaxRank)};
  detail::check_overlap(spec, k, r);
  return std::move(r.out);
}

// Whether `spec` breaks no rule.
inline bool is_valid(const TensorMapSpec& spec, const Limits& limits = Limits::hopper()) {
  return validate(spec, limits).empty();
}

// Throws tma::Error listing every violation when `spec` breaks a rule.
inline void check(const TensorMapSpec& spec, const Limits& limits = Limits::hopper()) {
  std::vector<Violation> v = validate(spec, limits);
  if (v.empty()) return;
  std::string headline =
      detail::cat("invalid tensor map (", v.size(),
                  v.size() == 1 ? " violation): " : " violations): ", to_string(spec));
  throw Error(std::move(v), std::move(headline));
}

}  // namespace tma
