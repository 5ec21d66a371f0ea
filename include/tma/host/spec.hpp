// tmakit: TensorMapSpec, everything the driver needs to encode a TMA descriptor, as a plain value.
//
// One dimension order everywhere: innermost first (the driver's order). Index 0 is the contiguous
// dimension. host/builder.hpp converts row-major shapes (Triton / PyTorch order) into this form.
// Plain C++: validation (host/validate.hpp) and the reference model (model/) use it without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "tma/config.hpp"
#include "tma/host/types.hpp"

namespace tma {

struct TensorMapSpec {
  Mode mode = Mode::kTiled;
  DataType dtype = DataType::kUInt8;
  int rank = 0;                   // 1..5 (tiled), 3..5 (im2col)
  const void* address = nullptr;  // global memory base; 16 B aligned (32 B with interleave 32B)

  // Extent of each dimension in elements, innermost first; 1 .. 2^32. With interleave (tiled),
  // dimension 0 counts whole 16 / 32 B interleave chunks, not elements (MEASURED, finding 12);
  // the same holds for box_inner_first[0], element_strides_inner_first[0] and coordinate 0.
  std::array<std::uint64_t, kMaxRank> dims_inner_first{};
  // Byte distance between consecutive indices of each dimension, innermost first. Index 0 is not
  // encoded (TMA's innermost dimension is always contiguous): leave it 0 or the element size.
  // Indices 1..rank-1: multiples of 16 (32 with interleave 32B), below 2^40.
  std::array<std::uint64_t, kMaxRank> strides_bytes_inner_first{};
  // Tiled mode: elements traversed per dimension, innermost first; 1..256.
  std::array<std::uint32_t, kMaxRank> box_inner_first{};
  // Traversal step per dimension; 1..8. Index 0 is ignored unless interleaved.
  std::array<std::uint32_t, kMaxRank> element_strides_inner_first{1, 1, 1, 1, 1};

  Interleave interleave = Interleave::kNone;
  Swizzle swizzle = Swizzle::kNone;
  L2Promotion l2_promotion = L2Promotion::kNone;
  OobFill oob_fill = OobFill::kZero;

  // Im2col mode only (tensor N, D, H, W, C stored as dims {C, W, H, D, N} innermost first).
  // Offsets of the pixel bounding box, spatial dimensions innermost first (W, H, D): rank-2 values.
  std::array<int, 3> pixel_box_lower_corner{};
  std::array<int, 3> pixel_box_upper_corner{};
  std::uint32_t channels_per_pixel = 0;  // 1..256
  std::uint32_t pixels_per_column = 0;   // 1..1024

  bool operator==(const TensorMapSpec&) const = default;
};

// Elements one box covers along dimension `dim`, element strides included: ceil(box / stride) in
// tiled mode (the stride of dimension 0 is ignored without interleave, as the driver documents).
// The documented count, which the driver checks; what an interleaved copy really traverses is
// traversed_extent().
constexpr std::uint64_t box_extent(const TensorMapSpec& s, int dim) {
  if (s.mode == Mode::kIm2col) {
    if (dim == 0) return s.channels_per_pixel;
    return dim == 1 ? s.pixels_per_column : 1;
  }
  std::uint64_t box = s.box_inner_first[dim];
  std::uint64_t step = s.element_strides_inner_first[dim];
  if (dim == 0 && s.interleave == Interleave::kNone) step = 1;
  if (step == 0) return 0;
  return (box + step - 1) / step;
}

// Whether `s` is a tiled map with an interleaved layout (INTERLEAVE_16B / 32B), where the hardware
// counts dimension 0 in whole interleave chunks (traversed_extent, transaction_bytes).
constexpr bool is_interleaved_tiled(const TensorMapSpec& s) {
  return s.mode == Mode::kTiled &&
         (s.interleave == Interleave::k16B || s.interleave == Interleave::k32B);
}

// Steps a tiled copy really takes along dimension `dim`: box_extent(s, dim), except that with
// interleave dimension rank - 2 is not traversed (1 step, at its coordinate).
// MEASURED (H200, driver 580, tests/gpu/probes.txt groups D / D2, docs/hardware-findings.md
// finding 12): rank 3 ignores box[1] (bf16 box {8,4,2} and {8,2,4}: 8 chunks x box[2] slices),
// rank 4 ignores box[2] (box {8,2,3,2}: 8 chunks x 2 x 2 at strides[1] and strides[3]).
// Rank 5 ignores box[3] (MEASURED: probes group D3, H200 2026-11-22). box_extent() keeps the
// documented count, which is what the driver checks (TMA037 in validate.hpp).
constexpr std::uint64_t traversed_extent(const TensorMapSpec& s, int dim) {
  if (is_interleaved_tiled(s) && s.rank >= 3 && dim == s.rank - 2) return 1;
  return box_extent(s, dim);
}

// Bytes one load of a box delivers to shared memory and completes on its mbarrier
// (out-of-bounds elements count: they are filled, not skipped). 0 for the packed types.
// Interleaved tiled maps move whole chunks: interleave_bytes per step of dimension 0, times the
// steps of the other dimensions (traversed_extent); the element size does not enter.
// MEASURED (H200, probes group D2): bf16 dims {8,16,4} box {8,4,2} INTERLEAVE_16B writes 256 B
// (the element count x 2 B would be 128, and an mbarrier expecting 512 never completes).
constexpr std::uint64_t transaction_bytes(const TensorMapSpec& s) {
  if (is_interleaved_tiled(s)) {
    if (element_bytes(s.dtype) == 0) return 0;
    std::uint64_t chunks = 1;
    for (int d = 0; d < s.rank && d < kMaxRank; ++d)
      chunks *= traversed_extent(s, d);
    return chunks * static_cast<std::uint64_t>(interleave_bytes(s.interleave));
  }
  const int rank = s.mode == Mode::kIm2col ? 2 : s.rank;
  std::uint64_t elements = 1;
  for (int d = 0; d < rank && d < kMaxRank; ++d)
    elements *= box_extent(s, d);
  return elements * static_cast<std::uint64_t>(element_bytes(s.dtype));
}

// Alignment the shared-memory side of a copy needs: 128 B, or the swizzle pattern's repeat
// (256 / 512 / 1024 B) so that the hardware's address-based XOR matches the model's.
constexpr int smem_alignment(const TensorMapSpec& s) {
  return swizzle_repeat_bytes(s.swizzle);
}

// The whole spec on one line, for error messages and logs.
inline std::string to_string(const TensorMapSpec& s) {
  std::ostringstream o;
  auto list = [&](const auto& a, int n) {
    o << '{';
    for (int i = 0; i < n; ++i)
      o << (i ? "," : "") << a[i];
    o << '}';
  };
  const int n = s.rank >= 0 && s.rank <= kMaxRank ? s.rank : kMaxRank;
  o << to_string(s.mode) << ' ' << to_string(s.dtype) << " rank=" << s.rank
    << " address=" << s.address << " dims_inner_first=";
  list(s.dims_inner_first, n);
  o << " strides_bytes_inner_first=";
  list(s.strides_bytes_inner_first, n);
  if (s.mode == Mode::kTiled) {
    o << " box_inner_first=";
    list(s.box_inner_first, n);
  } else {
    const int spatial = n > 2 ? n - 2 : 0;
    o << " lower=";
    list(s.pixel_box_lower_corner, spatial);
    o << " upper=";
    list(s.pixel_box_upper_corner, spatial);
    o << " channels_per_pixel=" << s.channels_per_pixel
      << " pixels_per_column=" << s.pixels_per_column;
  }
  o << " element_strides=";
  list(s.element_strides_inner_first, n);
  o << " interleave=" << to_string(s.interleave) << " swizzle=" << to_string(s.swizzle)
    << " l2_promotion=" << to_string(s.l2_promotion) << " oob_fill=" << to_string(s.oob_fill);
  return o.str();
}

}  // namespace tma
