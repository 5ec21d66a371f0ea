// tmakit: the reference model of an im2col TMA load
// (cp.async.bulk.tensor.Nd.shared::cluster.global.im2col, N = 3..5).
//
// Sources: PTX ISA "Tensors" > "Im2col mode" ("Bounding Box", "Traversal Stride", "Out of Boundary
// Access"), cp.async.bulk.tensor (im2colInfo), cuTensorMapEncodeIm2col (cuda.h), and the
// hardware-checked examples of Triton's Gluon TMA im2col tutorial (their access boundaries and
// batch wrap-around). Our reading, with each uncertain point marked HYPOTHESIS:
//
//   * The tensor is N(D)(H)WC, dims innermost first {C, W, [H, [D,]] N}: rank R = 3..5, spatial
//     dimensions j = 0..R-3 are tensor dimensions 1..R-2 (W first), N is dimension R-1.
//     spec.pixel_box_lower_corner[j] / upper_corner[j] belong to spatial dimension j (W first).
//   * coords = {c, w, [h, [d,]] n}: c and n are start offsets like in tiled mode; w/h/d give the
//     "convolution filter base" position of the first pixel, which must lie in the bounding box.
//     offsets (im2colInfo, one unsigned 16-bit value per spatial dimension, W first) are added to
//     the filter base to get the accessed location, and do not move the bounding box.
//   * Bounding box of the filter base along spatial dimension j (im2col_box_begin / _end):
//     [lower_j, dims[1+j] + upper_j), half-open. E.g. dims W = 4, lower = upper = -1 gives bases
//     -1..2 (the Triton example loads exactly those four); a 3-wide filter with padding 1 uses
//     lower = -1, upper = 1 - (3 - 1) = -1 and produces W output pixels.
//   * Pixels: pixels_per_column of them, in order W fastest, then H, D, N (im2col_next_pixel):
//     the base advances by the traversal stride of the dimension (element_strides_inner_first[1+j]:
//     "The number of elements traversed along the D, H and W dimensions is strided by the traversal
//     stride"); when it reaches the box end it restarts at the box begin and the next dimension
//     advances; after the last spatial dimension, n advances by N's traversal stride
//     (element_strides_inner_first[R-1], MEASURED: see im2col_next_pixel). Pixels past the last
//     image (n >= dims[N]) are out of bounds.
//   * Channels: channels_per_pixel elements per pixel, c + k * traversal_step(0) (step 1 without
//     interleave, as in tiled mode).
//   * An element is out of bounds when its channel, its accessed spatial position (base + offset)
//     or its n is outside the tensor; out-of-bounds elements get the OOB fill (zero or OOB-NaN).
//   * Shared memory: row p holds pixel p's channels_per_pixel elements (smem_row_bytes), rows
//     laid out like tiled rows and swizzled the same way (layout.hpp), including the padding of a
//     swizzled row narrower than the span to the span (smem_row_pitch). Consistent with the first
//     full gpu_im2col run on an H200: its 2,431 matching boxes with such padded rows, and every
//     one of its 623 mismatches reproduced with this layout (tests/gpu/replay/im2col_replay.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"
#include "tma/model/layout.hpp"

namespace tma::model {

// Spatial dimensions of an im2col map (rank - 2: W, H, D innermost first).
constexpr int im2col_spatial_dims(const TensorMapSpec& s) {
  return s.rank - 2;
}

// First filter-base position of the bounding box along spatial dimension j (0 = W).
inline std::int64_t im2col_box_begin(const TensorMapSpec& s, int j) {
  return s.pixel_box_lower_corner[static_cast<std::size_t>(j)];
}

// One past the last filter-base position along spatial dimension j, dims[1 + j] +
// upper_corner[j]. Half-open end: Triton's hardware examples (stride 1); consistent with the
// 11,377 matching boxes of the first full gpu_im2col run (ranks 3..5, spatial strides 1..8).
inline std::int64_t im2col_box_end(const TensorMapSpec& s, int j) {
  return static_cast<std::int64_t>(s.dims_inner_first[1 + j]) +
         s.pixel_box_upper_corner[static_cast<std::size_t>(j)];
}

// The filter base of the next pixel. W advances by its traversal stride; a position at or past the
// box end restarts at the box begin (not at begin + the overshoot) and carries into H, then D; a
// carry out of the last spatial dimension advances n by N's traversal stride
// (element_strides_inner_first[rank - 1]), like the spatial dimensions. A start position outside
// the box (undefined per the PTX ISA) is simply advanced by the same rule.
// MEASURED (H200, driver 580, first full gpu_im2col run, 12,000 boxes): with an N stride of 2..8
// the next image is n + stride, not n + 1: 593 boxes whose column left its first image differed
// from a model that added 1 (the hardware filled zeros for n + stride >= dims[N], or loaded image
// n + stride: 58 boxes), and all 593 match with the stride; no other box's image changes.
// The restart at the box begin is consistent with the 3,306 matching boxes whose spatial step
// overshot the box end (HYPOTHESIS left: not probed in isolation).
inline void im2col_next_pixel(const TensorMapSpec& s, std::array<std::int64_t, 3>& base,
                              std::int64_t& n) {
  for (int j = 0; j < im2col_spatial_dims(s); ++j) {
    base[j] += traversal_step(s, 1 + j);
    if (base[j] < im2col_box_end(s, j)) return;
    base[j] = im2col_box_begin(s, j);
  }
  n += traversal_step(s, s.rank - 1);
}

// Calls f(const ElementAccess&) for every element of an im2col load: pixel by pixel, channels
// fastest. Preconditions (load_im2col checks them): require_modelled(s, kIm2col, ...),
// coords.size() == s.rank, offsets.size() == s.rank - 2.
template <class F>
void for_each_im2col_element(const TensorMapSpec& s, std::span<const std::int32_t> coords,
                             std::span<const std::uint16_t> offsets, F&& f) {
  const int rank = s.rank;
  const int spatial = im2col_spatial_dims(s);
  const std::size_t esize = element_size(s);
  std::array<std::int64_t, 3> base{};
  for (int j = 0; j < spatial; ++j)
    base[j] = coords[1 + j];
  std::int64_t n = coords[rank - 1];
  ElementAccess e{};
  for (std::size_t pixel = 0; pixel < s.pixels_per_column; ++pixel) {
    bool outer_in = n >= 0 && static_cast<std::uint64_t>(n) < s.dims_inner_first[rank - 1];
    std::uint64_t outer_offset =
        outer_in ? static_cast<std::uint64_t>(n) * global_stride_bytes(s, rank - 1) : 0;
    e.index[rank - 1] = n;
    for (int j = 0; j < spatial; ++j) {
      const std::int64_t i = base[j] + offsets[j];
      e.index[1 + j] = i;
      if (i < 0 || static_cast<std::uint64_t>(i) >= s.dims_inner_first[1 + j]) {
        outer_in = false;
      } else {
        outer_offset += static_cast<std::uint64_t>(i) * global_stride_bytes(s, 1 + j);
      }
    }
    for (std::size_t k = 0; k < s.channels_per_pixel; ++k) {
      const std::int64_t c = coords[0] + static_cast<std::int64_t>(k) * traversal_step(s, 0);
      e.index[0] = c;
      e.in_bounds = outer_in && c >= 0 && static_cast<std::uint64_t>(c) < s.dims_inner_first[0];
      e.global_offset =
          e.in_bounds
              ? static_cast<std::size_t>(outer_offset + static_cast<std::uint64_t>(c) * esize)
              : 0;
      e.smem_offset = smem_offset(s, pixel, k * esize);
      f(static_cast<const ElementAccess&>(e));
    }
    im2col_next_pixel(s, base, n);
  }
}

// Writes the image of one im2col load into `smem` (exactly smem_bytes(spec) bytes:
// pixels_per_column rows of channels_per_pixel elements, swizzled). `coords` = {c, w, [h, [d,]] n},
// `offsets` = the im2col offsets, W first (rank - 2 values). In-bounds elements come from `global`,
// the others get oob_fill_bits(spec); bytes of `smem` outside the image are left as they were.
// Throws std::invalid_argument for a non-im2col or unmodelled spec, wrong coords / offsets counts,
// a global buffer smaller than global_footprint_bytes(spec) or a wrong smem size.
inline void load_im2col(const TensorMapSpec& spec, std::span<const std::byte> global,
                        std::span<const std::int32_t> coords,
                        std::span<const std::uint16_t> offsets, std::span<std::byte> smem) {
  constexpr std::string_view kWho = "load_im2col";
  require_modelled(spec, Mode::kIm2col, kWho);
  check_coords(spec, coords, kWho);
  if (offsets.size() != static_cast<std::size_t>(im2col_spatial_dims(spec))) {
    detail::fail(kWho, "offsets has " + std::to_string(offsets.size()) +
                           " values but spec.rank = " + std::to_string(spec.rank) +
                           " needs rank - 2 = " + std::to_string(im2col_spatial_dims(spec)) +
                           ": pass one offset per spatial dimension (W first)");
  }
  check_global(spec, global.size(), kWho);
  check_smem(spec, smem.size(), kWho);
  const std::size_t esize = element_size(spec);
  const std::uint64_t fill = oob_fill_bits(spec);
  for_each_im2col_element(spec, coords, offsets, [&](const ElementAccess& e) {
    const std::uint64_t bits =
        e.in_bounds ? loaded_bits(spec.dtype, read_element(global, e.global_offset, esize)) : fill;
    write_element(smem, e.smem_offset, esize, bits);
  });
}

}  // namespace tma::model
