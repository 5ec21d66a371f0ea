// tmakit: the reference model of tiled TMA stores and reduce-stores
// (cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group and
// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.tile.bulk_group).
//
// Both visit the same elements as a load of the same box (layout.hpp's traversal, element strides
// included) and read each from the same place in the swizzled shared-memory image. Elements
// outside the tensor are skipped (clipped), except that dimension 0 is written in whole 16-byte
// chunks: elements past dims_inner_first[0] in the chunk of a row's last element are written too,
// into the row's padding (layout.hpp, stored_dim0_limit; measured). Every other global byte is
// untouched.
//
// Caveats for the GPU tests:
//   * The PTX ISA ("Restriction on Tensor Copy instructions", recent versions) says that for the
//     .global.shared::cta direction "Starting co-ordinates for Bounding Box (tensorCoords) must be
//     non-negative" (an exception is made only for .tile::scatter4 on sm_107f). The model clips
//     negative starts like any other out-of-bounds part, but hardware may treat them as undefined:
//     test negative store coordinates separately from the bulk comparison.
//   * If the global strides make two box elements alias the same bytes, the model applies them in
//     traversal order (dimension 0 fastest, last write wins); the hardware order is unspecified.
//   * Interleaved maps (layout.hpp, finding 12; MEASURED on the H200): a store or reduce walks
//     the chunks exactly as a load of the same box does (dimension 0 in chunks, dimension
//     rank - 2 not traversed) and writes every in-bounds chunk from its place in the image;
//     out-of-bounds chunks are skipped whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"
#include "tma/model/layout.hpp"
#include "tma/model/reduce_op.hpp"

namespace tma::model {

// Writes every in-bounds element of the tiled box at `coords` from `smem` (exactly smem_bytes(spec)
// bytes, read through the swizzle) to `global`. Out-of-bounds elements are not written, but for
// the elements past dims_inner_first[0] that share a 16-byte chunk with the row's last element
// (stored_dim0_limit).
// Throws std::invalid_argument like load_box.
inline void store_box(const TensorMapSpec& spec, std::span<const std::byte> smem,
                      std::span<const std::int32_t> coords, std::span<std::byte> global) {
  constexpr std::string_view kWho = "store_box";
  require_modelled(spec, Mode::kTiled, kWho);
  check_coords(spec, coords, kWho);
  check_global(spec, global.size(), kWho);
  check_smem(spec, smem.size(), kWho);
  const std::size_t esize = element_size(spec);
  for_each_box_element(spec, coords, [&](const ElementAccess& e) {
    if (e.stored)
      write_element(global, e.global_offset, esize, read_element(smem, e.smem_offset, esize));
  });
}

// As store_box, but each in-bounds global element becomes reduce_element(op, dtype, global, smem).
// Throws std::invalid_argument also when reduce_supported(op, spec.dtype) is false.
inline void reduce_box(const TensorMapSpec& spec, ReduceOp op, std::span<const std::byte> smem,
                       std::span<const std::int32_t> coords, std::span<std::byte> global) {
  constexpr std::string_view kWho = "reduce_box";
  require_modelled(spec, Mode::kTiled, kWho);
  require_reduce_supported(op, spec.dtype, kWho);
  check_coords(spec, coords, kWho);
  check_global(spec, global.size(), kWho);
  check_smem(spec, smem.size(), kWho);
  const std::size_t esize = element_size(spec);
  for_each_box_element(spec, coords, [&](const ElementAccess& e) {
    if (!e.stored) return;
    const std::uint64_t old = read_element(global, e.global_offset, esize);
    const std::uint64_t src = read_element(smem, e.smem_offset, esize);
    write_element(global, e.global_offset, esize, reduce_element(op, spec.dtype, old, src));
  });
}

}  // namespace tma::model
