// tmakit: the reference model of a tiled TMA load (cp.async.bulk.tensor.Nd.shared::cluster.global
// .tile): what the box's shared-memory image holds after the copy completes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"
#include "tma/model/layout.hpp"

namespace tma::model {

// Writes the image of the tiled box at `coords` (signed, innermost first) into `smem`, a buffer of
// exactly smem_bytes(spec) bytes standing for shared memory aligned to smem_alignment(spec).
// In-bounds elements are copied from `global` (the memory at spec.address); out-of-bounds elements
// get oob_fill_bits(spec). Bytes of `smem` outside the image are left as they were. Interleaved
// maps move whole 16 / 32 B chunks (layout.hpp; MEASURED, docs/hardware-findings.md finding 12).
// Throws std::invalid_argument for a spec the model does not cover, a coords length != rank, a
// global buffer smaller than global_footprint_bytes(spec) or a wrong smem size.
inline void load_box(const TensorMapSpec& spec, std::span<const std::byte> global,
                     std::span<const std::int32_t> coords, std::span<std::byte> smem) {
  constexpr std::string_view kWho = "load_box";
  require_modelled(spec, Mode::kTiled, kWho);
  check_coords(spec, coords, kWho);
  check_global(spec, global.size(), kWho);
  check_smem(spec, smem.size(), kWho);
  const std::size_t esize = element_size(spec);
  const std::uint64_t fill = oob_fill_bits(spec);
  for_each_box_element(spec, coords, [&](const ElementAccess& e) {
    const std::uint64_t bits =
        e.in_bounds ? loaded_bits(spec.dtype, read_element(global, e.global_offset, esize)) : fill;
    write_element(smem, e.smem_offset, esize, bits);
  });
}

}  // namespace tma::model
