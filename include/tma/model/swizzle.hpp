// tmakit: the shared-memory swizzle of TMA, as one constexpr function that the reference model,
// the tests and device code share.
//
// TMA swizzles by XOR on shared-memory address bits, so the pattern depends on the absolute
// address: a buffer aligned to swizzle_repeat_bytes() (256 / 512 / 1024 B) sees the pattern below
// from its first byte; a less aligned one sees it shifted (TMA-RULES.md, "Shared memory side").
//
//   byte offset bits:  ... 9 8 7 | 6 5 4 | 3 2 1 0
//                          row     chunk   byte in 16 B chunk
//   SWIZZLE_128B: chunk[6:4] ^= row[9:7]   (8 chunks of 16 B per 128 B row, 8 rows = 1024 B)
//   SWIZZLE_64B:  chunk[5:4] ^= row[8:7]   (4 chunks per 64 B, repeats every 512 B)
//   SWIZZLE_32B:  chunk[4]   ^= row[7]     (2 chunks per 32 B, repeats every 256 B)
//
// In CuTe's notation these are Swizzle<3,4,3>, Swizzle<2,4,3> and Swizzle<1,4,3> on byte offsets.
// The 128B_ATOM_* modes exist only on compute capability >= 10 and are not modelled: the function
// returns the offset unchanged for them, and the validator rejects them on Hopper.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/host/types.hpp"

namespace tma {

// Number of chunk-index bits a swizzle XORs (0 = no swizzle).
TMA_HOST_DEVICE constexpr std::uint32_t swizzle_bits(Swizzle s) {
  return s == Swizzle::k32B ? 1u : s == Swizzle::k64B ? 2u : s == Swizzle::k128B ? 3u : 0u;
}

// Where byte `offset` of an unswizzled box lands in a buffer aligned to swizzle_repeat_bytes(s).
// An involution: swizzle_offset(s, swizzle_offset(s, x)) == x.
TMA_HOST_DEVICE constexpr std::uint32_t swizzle_offset(Swizzle s, std::uint32_t offset) {
  const std::uint32_t bits = swizzle_bits(s);
  const std::uint32_t mask = (1u << bits) - 1u;
  return offset ^ (((offset >> 7) & mask) << 4);
}

}  // namespace tma
