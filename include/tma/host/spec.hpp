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

#include "tma/host/types.hpp"

namespace tma {

struct TensorMapSpec {
  Mode mode = Mode::kTiled;
  DataType dtype = DataType::kUInt8;
  int rank = 0;                   // 1..5 (tiled), 3..5 (im2col)
  const void* address = nullptr;  // global memory base; 16 B aligned (32 B with interleave 32B)

  // Extent of each dimension in elements, innermost first; 1 .. 2^32.
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

// Bytes one load of a box delivers to shared memory and completes on its mbarrier
// (out-of-bounds elements count: they are filled, not skipped). 0 for the packed types.
constexpr std::uint64_t transaction_bytes(const TensorMapSpec& s) {
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
