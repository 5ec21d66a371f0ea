// tmakit: a human-readable report on one TensorMapSpec, printed by `tma-info describe`.
//
// The spec on one line, VALID or every violation (and lint() warnings), the box, the transaction
// bytes a load completes on its mbarrier, the shared-memory alignment and a picture of the
// swizzle, drawn by the same tma::swizzle_offset the reference model and the device code use.
// Plain C++.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "tma/config.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/swizzle.hpp"

namespace tma {

// The most dynamic shared memory one Hopper block can opt in to (227 KB): a box larger than this
// cannot be loaded in one copy.
inline constexpr std::uint64_t kHopperMaxSmemPerBlock = 232448;

// Bytes one copy moves, packed types included (transaction_bytes() returns 0 for those).
inline std::uint64_t box_bytes(const TensorMapSpec& s) {
  if (!is_valid(s.dtype) || !is_packed(s.dtype)) return transaction_bytes(s);
  const int rank = s.mode == Mode::kIm2col ? 2 : std::min(s.rank, kMaxRank);
  std::uint64_t outer = 1;
  for (int d = 1; d < rank; ++d)
    outer *= box_extent(s, d);
  return rank < 1 ? 0 : inner_bytes(s.dtype, box_extent(s, 0)) * outer;
}

// ASCII picture of a swizzle: one row per 128 B line of shared memory within the pattern's
// repeat (2 / 4 / 8 lines for 32B / 64B / 128B), one column per 16 B chunk; each cell is the
// chunk of the unswizzled box (byte offset / 16) that lands there. Empty for kNone and for the
// 128B_ATOM modes, which the model does not cover.
inline std::string swizzle_picture(Swizzle sw) {
  if (sw == Swizzle::kNone || swizzle_bits(sw) == 0) return {};
  const std::uint32_t lines = static_cast<std::uint32_t>(swizzle_repeat_bytes(sw)) / 128;
  std::ostringstream o;
  o << "           chunk";
  for (int c = 0; c < 8; ++c)
    o << std::setw(3) << c;
  o << '\n';
  for (std::uint32_t line = 0; line < lines; ++line) {
    o << "  line " << line << " (" << std::setw(4) << line * 128 << " B)";
    for (std::uint32_t c = 0; c < 8; ++c) {
      // swizzle_offset is an involution: the data stored at physical offset p came from
      // logical offset swizzle_offset(p).
      o << std::setw(3) << swizzle_offset(sw, line * 128 + c * 16) / 16;
    }
    o << '\n';
  }
  return o.str();
}

// The full report for `tma-info describe`; see the file comment.
inline std::string describe(const TensorMapSpec& s, const Limits& limits = Limits::hopper()) {
  std::ostringstream o;
  const std::vector<Violation> v = validate(s, limits);
  o << "spec:        " << to_string(s) << '\n';
  o << "target:      compute capability " << limits.cc_major << '.' << limits.cc_minor << '\n';
  if (v.empty()) {
    o << "validation:  VALID\n";
  } else {
    o << "validation:  INVALID, " << v.size() << (v.size() == 1 ? " violation\n" : " violations\n");
    for (const Violation& x : v)
      o << "  " << to_string(x) << '\n';
  }
  for (const Violation& x : lint(s)) {
    o << "warning:     " << to_string(x)
      << " (the driver accepts this; loads are fine, stores and reductions race)\n";
  }
  // The geometry below needs sane enums and rank; without them it would be noise.
  const bool sane = is_valid(s.mode) && is_valid(s.dtype) && is_valid(s.swizzle) &&
                    is_valid(s.interleave) && s.rank >= 1 && s.rank <= kMaxRank;
  if (!sane) return o.str();

  const int n = s.mode == Mode::kIm2col ? 2 : s.rank;
  o << "box:         ";
  for (int d = 0; d < n; ++d)
    o << (d ? " x " : "") << box_extent(s, d);
  o << " elements, innermost first";
  if (s.mode == Mode::kIm2col) o << " (channels_per_pixel x pixels_per_column)";
  if (s.mode == Mode::kTiled && n > 1) {
    o << " (row-major ";
    for (int d = n - 1; d >= 0; --d)
      o << box_extent(s, d) << (d ? " x " : "");
    o << ')';
  }
  if (is_interleaved_tiled(s)) {
    // The copy moves whole interleave chunks and skips dimension rank - 2 (finding 12).
    o << "; interleaved: the copy moves ";
    for (int d = 0; d < n; ++d)
      o << (d ? " x " : "") << traversed_extent(s, d);
    o << " steps of " << interleave_bytes(s.interleave) << " B chunks (dimension 0 counts chunks;"
      << " dimension " << n - 2 << " is not traversed)\n";
  } else {
    o << "; inner row " << inner_bytes(s.dtype, box_extent(s, 0)) << " B\n";
  }
  const std::uint64_t bytes = box_bytes(s);
  o << "transaction: " << bytes << " B per copy (the byte count for arrive_expect_tx)";
  if (bytes > kHopperMaxSmemPerBlock) {
    o << "; exceeds the " << kHopperMaxSmemPerBlock << " B of shared memory a Hopper block can use";
  }
  o << '\n';
  o << "smem align:  " << smem_alignment(s) << " B";
  if (s.swizzle != Swizzle::kNone) {
    o << " (" << detail::swizzle_name(s.swizzle) << " repeats every " << smem_alignment(s)
      << " B; a less aligned buffer sees the pattern shifted)";
  }
  o << '\n';
  o << "global:      base " << global_address_alignment(s) << " B aligned, strides multiples of "
    << global_stride_multiple(s) << " B\n";
  if (s.swizzle == Swizzle::kNone) return o.str();
  o << "swizzle:     " << detail::swizzle_name(s.swizzle);
  const std::string picture = swizzle_picture(s.swizzle);
  if (picture.empty()) {
    o << " is not modelled (compute capability >= 10 only)\n";
    return o.str();
  }
  o << ": where each 16 B chunk of the box lands; a cell holds the chunk number (byte offset / "
       "16) of the unswizzled box\n"
    << picture;
  return o.str();
}

}  // namespace tma
