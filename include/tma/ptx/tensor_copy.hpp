// tmakit ptx/: the cp.async.bulk.tensor forms that CCCL 3.0's cuda::ptx lacks: L2 cache hints,
// im2col, and the L2 prefetch of a tile.
//
// Operands, for every shim here: `dst`, `src` and `bar` are 32-bit shared-memory addresses
// (ptx::smem_addr); `map` is the generic address of a 64-byte-aligned tensor map in global, const
// or kernel-parameter (__grid_constant__) memory; coordinates are signed 32-bit element indices,
// innermost first; `policy` comes from createpolicy (cache_policy.hpp). One thread issues each.
// Loads write to .shared::cluster with the executing CTA's own address, the form sm_90 has had
// since PTX ISA 8.0 (the .shared::cta destination needs PTX ISA 8.6); the mbarrier completes with
// complete_tx::bytes.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/ptx/common.hpp"

namespace tma::ptx {

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint
//     [dst], [map, {c0..}], [bar], policy;                     PTX ISA 8.0, sm_90. One thread.
template <int R>
__device__ __forceinline__ void load_tile_hint(std::uint32_t dst, const void* map,
                                               std::uint32_t bar, const std::int32_t (&coords)[R],
                                               std::uint64_t policy) {
  const Coords5 c = pad_coords(coords);
#define TMA_EMIT(DIM, COORDS)                                                             \
  asm volatile("cp.async.bulk.tensor" DIM                                                 \
               ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint" \
               " [%5], [%6, " COORDS "], [%7], %8;" ::TMA_PTX_COORD_OPERANDS(c),          \
               "r"(dst), "l"(generic_addr(map)), "r"(bar), "l"(policy)                    \
               : "memory");
  TMA_PTX_FOR_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     .multicast::cluster.L2::cache_hint [dst], [map, {c0..}], [bar], ctaMask, policy;
//                                                PTX ISA 8.0, sm_90 (fast on sm_90a). One thread.
template <int R>
__device__ __forceinline__ void load_tile_multicast_hint(std::uint32_t dst, const void* map,
                                                         std::uint32_t bar,
                                                         const std::int32_t (&coords)[R],
                                                         std::uint16_t cta_mask,
                                                         std::uint64_t policy) {
  const Coords5 c = pad_coords(coords);
#define TMA_EMIT(DIM, COORDS)                                                                 \
  asm volatile("cp.async.bulk.tensor" DIM                                                     \
               ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" \
               ".L2::cache_hint [%5], [%6, " COORDS                                           \
               "], [%7], %8, %9;" ::TMA_PTX_COORD_OPERANDS(c),                                \
               "r"(dst), "l"(generic_addr(map)), "r"(bar), "h"(cta_mask), "l"(policy)         \
               : "memory");
  TMA_PTX_FOR_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.tensor.Nd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
//     [dst], [map, {c0..}], [bar], {off0..};     PTX ISA 8.0, sm_90. N = 3..5. One thread.
// The R - 2 offsets are 16-bit: the filter tap (W, H, D innermost first) inside the kernel window.
template <int R>
__device__ __forceinline__ void load_im2col(std::uint32_t dst, const void* map, std::uint32_t bar,
                                            const std::int32_t (&coords)[R],
                                            const std::uint16_t (&offsets)[R - 2]) {
  const Coords5 c = pad_coords(coords);
  const Offsets3 o = pad_offsets(offsets);
#define TMA_EMIT(DIM, COORDS, OFFSETS)                                                     \
  asm volatile("cp.async.bulk.tensor" DIM                                                  \
               ".shared::cluster.global.im2col.mbarrier::complete_tx::bytes"               \
               " [%8], [%9, " COORDS "], [%10], " OFFSETS ";" ::TMA_PTX_COORD_OPERANDS(c), \
               TMA_PTX_OFFSET_OPERANDS(o), "r"(dst), "l"(generic_addr(map)), "r"(bar)      \
               : "memory");
  TMA_PTX_FOR_IM2COL_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.tensor.Nd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint
//     [dst], [map, {c0..}], [bar], {off0..}, policy;       PTX ISA 8.0, sm_90. One thread.
template <int R>
__device__ __forceinline__ void load_im2col_hint(std::uint32_t dst, const void* map,
                                                 std::uint32_t bar, const std::int32_t (&coords)[R],
                                                 const std::uint16_t (&offsets)[R - 2],
                                                 std::uint64_t policy) {
  const Coords5 c = pad_coords(coords);
  const Offsets3 o = pad_offsets(offsets);
#define TMA_EMIT(DIM, COORDS, OFFSETS)                                                             \
  asm volatile("cp.async.bulk.tensor" DIM                                                          \
               ".shared::cluster.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint"        \
               " [%8], [%9, " COORDS "], [%10], " OFFSETS ", %11;" ::TMA_PTX_COORD_OPERANDS(c),    \
               TMA_PTX_OFFSET_OPERANDS(o), "r"(dst), "l"(generic_addr(map)), "r"(bar), "l"(policy) \
               : "memory");
  TMA_PTX_FOR_IM2COL_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.tensor.Nd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
//     .multicast::cluster [dst], [map, {c0..}], [bar], {off0..}, ctaMask;
//                                                PTX ISA 8.0, sm_90 (fast on sm_90a). One thread.
template <int R>
__device__ __forceinline__ void load_im2col_multicast(std::uint32_t dst, const void* map,
                                                      std::uint32_t bar,
                                                      const std::int32_t (&coords)[R],
                                                      const std::uint16_t (&offsets)[R - 2],
                                                      std::uint16_t cta_mask) {
  const Coords5 c = pad_coords(coords);
  const Offsets3 o = pad_offsets(offsets);
#define TMA_EMIT(DIM, COORDS, OFFSETS)                                                          \
  asm volatile("cp.async.bulk.tensor" DIM                                                       \
               ".shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster" \
               " [%8], [%9, " COORDS "], [%10], " OFFSETS ", %11;" ::TMA_PTX_COORD_OPERANDS(c), \
               TMA_PTX_OFFSET_OPERANDS(o), "r"(dst), "l"(generic_addr(map)), "r"(bar),          \
               "h"(cta_mask)                                                                    \
               : "memory");
  TMA_PTX_FOR_IM2COL_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group.L2::cache_hint
//     [map, {c0..}], [src], policy;              PTX ISA 8.0, sm_90. One thread.
template <int R>
__device__ __forceinline__ void store_tile_hint(const void* map, std::uint32_t src,
                                                const std::int32_t (&coords)[R],
                                                std::uint64_t policy) {
  const Coords5 c = pad_coords(coords);
#define TMA_EMIT(DIM, COORDS)                                              \
  asm volatile("cp.async.bulk.tensor" DIM                                  \
               ".global.shared::cta.tile.bulk_group.L2::cache_hint"        \
               " [%5, " COORDS "], [%6], %7;" ::TMA_PTX_COORD_OPERANDS(c), \
               "l"(generic_addr(map)), "r"(src), "l"(policy)               \
               : "memory");
  TMA_PTX_FOR_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.prefetch.tensor.Nd.L2.global.tile [map, {c0..}];
//                                                PTX ISA 8.0, sm_90. One thread.
// Brings the box into L2 without touching shared memory or any mbarrier.
template <int R>
__device__ __forceinline__ void prefetch_tile(const void* map, const std::int32_t (&coords)[R]) {
  const Coords5 c = pad_coords(coords);
#define TMA_EMIT(DIM, COORDS)                                                     \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.tile [%5, " COORDS \
               "];" ::TMA_PTX_COORD_OPERANDS(c),                                  \
               "l"(generic_addr(map))                                             \
               : "memory");
  TMA_PTX_FOR_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.prefetch.tensor.Nd.L2.global.tile.L2::cache_hint [map, {c0..}], policy;
//                                                PTX ISA 8.0, sm_90. One thread.
template <int R>
__device__ __forceinline__ void prefetch_tile_hint(const void* map, const std::int32_t (&coords)[R],
                                                   std::uint64_t policy) {
  const Coords5 c = pad_coords(coords);
#define TMA_EMIT(DIM, COORDS)                                                                    \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.tile.L2::cache_hint [%5, " COORDS \
               "], %6;" ::TMA_PTX_COORD_OPERANDS(c),                                             \
               "l"(generic_addr(map)), "l"(policy)                                               \
               : "memory");
  TMA_PTX_FOR_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

// cp.async.bulk.prefetch.tensor.Nd.L2.global.im2col [map, {c0..}], {off0..};
//                                                PTX ISA 8.0, sm_90. N = 3..5. One thread.
template <int R>
__device__ __forceinline__ void prefetch_im2col(const void* map, const std::int32_t (&coords)[R],
                                                const std::uint16_t (&offsets)[R - 2]) {
  const Coords5 c = pad_coords(coords);
  const Offsets3 o = pad_offsets(offsets);
#define TMA_EMIT(DIM, COORDS, OFFSETS)                                                            \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.im2col [%8, " COORDS "], " OFFSETS \
               ";" ::TMA_PTX_COORD_OPERANDS(c),                                                   \
               TMA_PTX_OFFSET_OPERANDS(o), "l"(generic_addr(map))                                 \
               : "memory");
  TMA_PTX_FOR_IM2COL_RANK(R, TMA_EMIT)
#undef TMA_EMIT
}

}  // namespace tma::ptx
