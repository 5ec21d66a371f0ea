// tmakit device/: tensor copies between global and shared memory through a tensor map (TMA).
//
// Common rules (PTX ISA, cp.async.bulk.tensor; TMA-RULES.md):
// - One thread issues each copy; the others wait on the mbarrier (loads) or are ordered through
//   bulk-group completion (stores, reduces: commit_group / wait_group, bulk.hpp).
// - `map` is the address of a 64-byte-aligned tensor map: a `const __grid_constant__ TensorMap`
//   kernel parameter, or a descriptor in global memory made visible with the tensormap fences
//   (descriptor.hpp). Never a copy of one in local memory or registers.
// - Coordinates are signed 32-bit element indices, innermost first, one per dimension of the map
//   (the array length R must equal the map's rank). Boxes sticking out of the tensor are filled
//   with zeros (or NaN, per the map) on load and clipped on store / reduce.
// - The shared-memory side is 128-byte aligned, 256 / 512 / 1024 bytes for swizzle 32B / 64B /
//   128B (BoxStorage<Box, alignment> in box.hpp). Debug builds (TMA_DEBUG_CHECKS) check the
//   state space and the 128-byte minimum and trap with a message.
// - A load completes box bytes (out-of-bounds elements included) on `bar`; the issuing thread
//   announces them with bar.arrive_expect_tx(bytes) (or Pipeline::producer_commit) before or
//   after issuing, within the same phase.
// - Loads use the .shared::cluster destination with this CTA's own address (sm_90, PTX ISA 8.0).
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "tma/config.hpp"
#include "tma/device/barrier.hpp"
#include "tma/device/cache_hint.hpp"
#include "tma/device/debug.hpp"
#include "tma/device/tensor_map_ref.hpp"
#include "tma/model/reduce_op.hpp"
#include "tma/ptx/common.hpp"
#include "tma/ptx/prefetch.hpp"
#include "tma/ptx/tensor_copy.hpp"

namespace tma {

namespace detail {

template <int R>
__device__ __forceinline__ void check_load_args(const void* smem, const TensorMap* map,
                                                const Barrier& bar) {
  static_assert(R >= 1 && R <= 5, "a tensor copy takes 1 to 5 coordinates (the map's rank)");
  check_shared(smem, 128, "TMA load: shared-memory destination");
  check_shared(&bar, 8, "TMA load: mbarrier");
  check_aligned(map, 64, "TMA load: tensor map address");
}

// The cuda::ptx tag for a reduce-store operation.
template <model::ReduceOp Op>
__device__ __forceinline__ constexpr auto cccl_reduce_op() {
  namespace p = cuda::ptx;
  if constexpr (Op == model::ReduceOp::kAdd)
    return p::op_add;
  else if constexpr (Op == model::ReduceOp::kMin)
    return p::op_min;
  else if constexpr (Op == model::ReduceOp::kMax)
    return p::op_max;
  else if constexpr (Op == model::ReduceOp::kInc)
    return p::op_inc;
  else if constexpr (Op == model::ReduceOp::kDec)
    return p::op_dec;
  else if constexpr (Op == model::ReduceOp::kAnd)
    return p::op_and_op;
  else if constexpr (Op == model::ReduceOp::kOr)
    return p::op_or_op;
  else {
    static_assert(Op == model::ReduceOp::kXor, "ReduceOp has eight operations");
    return p::op_xor_op;
  }
}

}  // namespace detail

// Tiled load of the box at `coords` into shared memory, completing its bytes on `bar`.
//   cp.async.bulk.tensor.Rd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//       [smem], [map, {coords}], [bar];                         PTX ISA 8.0, sm_90 (cuda::ptx)
//   with a hint: the same + .L2::cache_hint [..], policy;      PTX ISA 8.0, sm_90 (ptx/ shim)
// One thread.
template <int R>
__device__ __forceinline__ void load(void* smem, const TensorMap* map, Barrier& bar,
                                     const std::int32_t (&coords)[R],
                                     CacheHint hint = CacheHint::kNone) {
  detail::check_load_args<R>(smem, map, bar);
  if (hint == CacheHint::kNone) {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, map,
                                    coords, &bar.word);
  } else {
    ptx::load_tile_hint(ptx::smem_addr(smem), map, ptx::smem_addr(&bar), coords,
                        make_cache_policy(hint));
  }
}

// Multicast tiled load: one read of the box, written to the same shared-memory offset in every CTA
// of the cluster whose rank bit is set in `cta_mask` (bit r = %cluster_ctarank r), completing the
// box bytes on the mbarrier at `bar`'s offset in each of them. Every receiving CTA's barrier must
// expect those bytes, and the cluster must be launched with cluster dimensions.
//   cp.async.bulk.tensor.Rd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//       .multicast::cluster [smem], [map, {coords}], [bar], ctaMask;
//                             PTX ISA 8.0; cuda::ptx enables it for sm_90a (the build's target).
// One thread (of any CTA in the cluster; it need not be in the mask).
template <int R>
__device__ __forceinline__ void load_multicast(void* smem, const TensorMap* map, Barrier& bar,
                                               const std::int32_t (&coords)[R],
                                               std::uint16_t cta_mask) {
  detail::check_load_args<R>(smem, map, bar);
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, map,
                                  coords, &bar.word, cta_mask);
}

// load_multicast with an L2 hint (.multicast::cluster.L2::cache_hint, ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void load_multicast(void* smem, const TensorMap* map, Barrier& bar,
                                               const std::int32_t (&coords)[R],
                                               std::uint16_t cta_mask, CacheHint hint) {
  if (hint == CacheHint::kNone) {
    load_multicast(smem, map, bar, coords, cta_mask);
    return;
  }
  detail::check_load_args<R>(smem, map, bar);
  ptx::load_tile_multicast_hint(ptx::smem_addr(smem), map, ptx::smem_addr(&bar), coords, cta_mask,
                                make_cache_policy(hint));
}

// im2col load (map made with cuTensorMapEncodeIm2col, rank R = 3..5): `coords` {C, W[, H[, D]], N}
// innermost first name the first pixel of the column; `offsets` (R - 2 values, 16-bit, W first)
// the filter tap added to the spatial coordinates. Completes channels_per_pixel x
// pixels_per_column elements' bytes on `bar`.
//   cp.async.bulk.tensor.Rd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
//       [smem], [map, {coords}], [bar], {offsets};            PTX ISA 8.0, sm_90 (ptx/ shim)
// One thread.
template <int R>
__device__ __forceinline__ void load_im2col(void* smem, const TensorMap* map, Barrier& bar,
                                            const std::int32_t (&coords)[R],
                                            const std::uint16_t (&offsets)[R - 2]) {
  static_assert(R >= 3 && R <= 5, "im2col copies have rank 3..5");
  detail::check_load_args<R>(smem, map, bar);
  ptx::load_im2col(ptx::smem_addr(smem), map, ptx::smem_addr(&bar), coords, offsets);
}

// load_im2col with an L2 hint (.L2::cache_hint, ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void load_im2col(void* smem, const TensorMap* map, Barrier& bar,
                                            const std::int32_t (&coords)[R],
                                            const std::uint16_t (&offsets)[R - 2], CacheHint hint) {
  if (hint == CacheHint::kNone) {
    load_im2col(smem, map, bar, coords, offsets);
    return;
  }
  detail::check_load_args<R>(smem, map, bar);
  ptx::load_im2col_hint(ptx::smem_addr(smem), map, ptx::smem_addr(&bar), coords, offsets,
                        make_cache_policy(hint));
}

// Multicast im2col load (see load_multicast and load_im2col).
//   cp.async.bulk.tensor.Rd.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
//       .multicast::cluster [smem], [map, {coords}], [bar], {offsets}, ctaMask;
//                                                  PTX ISA 8.0, sm_90 (ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void load_im2col_multicast(void* smem, const TensorMap* map,
                                                      Barrier& bar, const std::int32_t (&coords)[R],
                                                      const std::uint16_t (&offsets)[R - 2],
                                                      std::uint16_t cta_mask) {
  static_assert(R >= 3 && R <= 5, "im2col copies have rank 3..5");
  detail::check_load_args<R>(smem, map, bar);
  ptx::load_im2col_multicast(ptx::smem_addr(smem), map, ptx::smem_addr(&bar), coords, offsets,
                             cta_mask);
}

// Tiled store of the box in shared memory to `coords` (clipped at the tensor's edges). Before it,
// every thread that wrote `smem` runs fence_proxy_async_shared(), then a barrier; after it, the
// issuing thread commit_group() and wait_group_read<0>() before `smem` is written again (and
// wait_group<0>() before the data is read from global memory by this grid).
//   cp.async.bulk.tensor.Rd.global.shared::cta.tile.bulk_group [map, {coords}], [smem];
//                                                  PTX ISA 8.0, sm_90 (cuda::ptx)
//   with a hint: + .L2::cache_hint [..], [..], policy;         (ptx/ shim)
// One thread.
template <int R>
__device__ __forceinline__ void store(const TensorMap* map, const void* smem,
                                      const std::int32_t (&coords)[R],
                                      CacheHint hint = CacheHint::kNone) {
  static_assert(R >= 1 && R <= 5, "a tensor copy takes 1 to 5 coordinates (the map's rank)");
  detail::check_shared(smem, 128, "TMA store: shared-memory source");
  detail::check_aligned(map, 64, "TMA store: tensor map address");
  if (hint == CacheHint::kNone) {
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, map, coords,
                                    smem);
  } else {
    ptx::store_tile_hint(map, ptx::smem_addr(smem), coords, make_cache_policy(hint));
  }
}

// Reduce-store: global[box at coords] = global Op smem, element-wise, atomically per element,
// clipped at the edges; same ordering rules as store(). The element type comes from the map and
// must be one the PTX ISA allows for Op (model::reduce_supported holds that table: e.g. add takes
// u32/s32/u64/f32/f16/bf16, inc/dec only u32, and/or/xor only u32 and u64); a type the
// hardware does not support for Op faults at run time.
//   cp.reduce.async.bulk.tensor.Rd.global.shared::cta.{add,min,max,inc,dec,and,or,xor}.tile
//       .bulk_group [map, {coords}], [smem];              PTX ISA 8.0, sm_90 (cuda::ptx)
// One thread.
template <model::ReduceOp Op, int R>
__device__ __forceinline__ void reduce(const TensorMap* map, const void* smem,
                                       const std::int32_t (&coords)[R]) {
  static_assert(R >= 1 && R <= 5, "a tensor copy takes 1 to 5 coordinates (the map's rank)");
  detail::check_shared(smem, 128, "TMA reduce: shared-memory source");
  detail::check_aligned(map, 64, "TMA reduce: tensor map address");
  cuda::ptx::cp_reduce_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared,
                                         detail::cccl_reduce_op<Op>(), map, coords, smem);
}

// Prefetches the box at `coords` into L2 (no shared memory, no barrier, nothing to wait for).
//   cp.async.bulk.prefetch.tensor.Rd.L2.global.tile [map, {coords}];
//                                                  PTX ISA 8.0, sm_90 (ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void prefetch_tile(const TensorMap* map,
                                              const std::int32_t (&coords)[R]) {
  detail::check_aligned(map, 64, "TMA prefetch: tensor map address");
  ptx::prefetch_tile(map, coords);
}

// prefetch_tile with an L2 hint (.L2::cache_hint [..], policy; ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void prefetch_tile(const TensorMap* map, const std::int32_t (&coords)[R],
                                              CacheHint hint) {
  if (hint == CacheHint::kNone) {
    prefetch_tile(map, coords);
    return;
  }
  detail::check_aligned(map, 64, "TMA prefetch: tensor map address");
  ptx::prefetch_tile_hint(map, coords, make_cache_policy(hint));
}

// Prefetches an im2col column into L2.
//   cp.async.bulk.prefetch.tensor.Rd.L2.global.im2col [map, {coords}], {offsets};
//                                                  PTX ISA 8.0, sm_90 (ptx/ shim). One thread.
template <int R>
__device__ __forceinline__ void prefetch_im2col(const TensorMap* map,
                                                const std::int32_t (&coords)[R],
                                                const std::uint16_t (&offsets)[R - 2]) {
  static_assert(R >= 3 && R <= 5, "im2col copies have rank 3..5");
  detail::check_aligned(map, 64, "TMA prefetch: tensor map address");
  ptx::prefetch_im2col(map, coords, offsets);
}

// Brings the descriptor itself into the descriptor cache, so the first copy does not stall on it.
// Typically one elected thread at kernel start, for each map the kernel uses.
//   prefetch.tensormap [map];                      PTX ISA 8.0, sm_90 (ptx/ shim). One thread.
__device__ __forceinline__ void prefetch_descriptor(const TensorMap* map) {
  detail::check_aligned(map, 64, "prefetch_descriptor: tensor map address");
  ptx::prefetch_tensormap(map);
}

}  // namespace tma
