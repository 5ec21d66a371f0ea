// tmakit: the reference model of a multicast tiled load
// (cp.async.bulk.tensor.Nd.shared::cluster.global.tile.multicast::cluster): one box read from
// global memory lands at the same shared-memory offset in every CTA of the cluster whose rank bit
// is set in ctaMask (PTX ISA, cp.async.bulk.tensor: "each bit position in the 16-bit ctaMask
// operand corresponds to the %cluster_ctarank of the destination CTA").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"
#include "tma/model/layout.hpp"
#include "tma/model/load.hpp"

namespace tma::model {

// The most CTAs a cluster may hold (8 portable, 16 with the non-portable cluster size opt-in).
inline constexpr int kMaxClusterSize = 16;

// Throws std::invalid_argument unless 1 <= cluster_size <= 16 and `cta_mask` names at least one
// rank and no rank >= cluster_size.
inline void check_cta_mask(std::uint16_t cta_mask, int cluster_size, std::string_view who) {
  if (cluster_size < 1 || cluster_size > kMaxClusterSize) {
    detail::fail(who, "cluster_size = " + std::to_string(cluster_size) +
                          " is outside 1..16: launch with a cluster of 1 to 16 CTAs");
  }
  const std::uint32_t valid = (1u << cluster_size) - 1u;
  if ((cta_mask & ~valid) != 0) {
    detail::fail(
        who, "cta_mask = 0x" +
                 [&] {
                   std::ostringstream o;
                   o << std::hex << cta_mask;
                   return o.str();
                 }() +
                 " sets bits for ranks >= cluster_size = " + std::to_string(cluster_size) +
                 ": clear them (bit r is CTA rank r of the cluster)");
  }
  if (cta_mask == 0) {
    detail::fail(who, "cta_mask = 0 sends the box to no CTA: set the bit of at least one rank");
  }
}

// What each CTA rank 0..cluster_size-1 holds in the destination buffer after one multicast load of
// the box at `coords`: ranks in `cta_mask` hold load_box's image (bytes outside the image keep
// `before[rank]`'s), the others keep `before[rank]` unchanged. `before` has one buffer per rank,
// each smem_bytes(spec) long. Throws std::invalid_argument for bad masks, sizes or arguments
// load_box rejects.
inline std::vector<std::vector<std::byte>> multicast_load(
    const TensorMapSpec& spec, std::span<const std::byte> global,
    std::span<const std::int32_t> coords, std::uint16_t cta_mask, int cluster_size,
    const std::vector<std::vector<std::byte>>& before) {
  constexpr std::string_view kWho = "multicast_load";
  check_cta_mask(cta_mask, cluster_size, kWho);
  if (before.size() != static_cast<std::size_t>(cluster_size)) {
    detail::fail(kWho, "before holds " + std::to_string(before.size()) +
                           " buffers but cluster_size = " + std::to_string(cluster_size) +
                           ": pass one buffer per CTA rank");
  }
  require_modelled(spec, Mode::kTiled, kWho);
  for (int rank = 0; rank < cluster_size; ++rank) {
    if (before[rank].size() != smem_bytes(spec)) {
      detail::fail(kWho, "before[" + std::to_string(rank) + "] has " +
                             std::to_string(before[rank].size()) +
                             " bytes but the box image needs " + std::to_string(smem_bytes(spec)) +
                             " (smem_bytes(spec)): size every rank's buffer with smem_bytes");
    }
  }
  std::vector<std::vector<std::byte>> after = before;
  for (int rank = 0; rank < cluster_size; ++rank) {
    if ((cta_mask >> rank) & 1u) load_box(spec, global, coords, after[rank]);
  }
  return after;
}

}  // namespace tma::model
