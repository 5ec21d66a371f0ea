// tmakit device/: warpgroup MMA (wgmma) on shared-memory operands, the register budget of a
// warpgroup (setmaxnreg) and named barriers: what a warp-specialized Hopper GEMM needs besides
// TMA and the pipeline.
//
//   consumer warpgroup, per k-block:               fragment of D (m64nNk16, f32), thread t of
//     warpgroup_fence_accumulators(acc);           the warpgroup (warp w = t / 32, lane l):
//     warpgroup_arrive();          // wgmma.fence    acc[4 j + 2 i + c] = D[16 w + 8 i + l / 4]
//     wgmma<N, ...>(acc, da, db, accumulate)  x4                        [8 j + 2 (l % 4) + c]
//     warpgroup_commit();                          i, c in {0, 1}; j = 0 .. N / 8 - 1
//     warpgroup_wait<1>();                         (PTX ISA, "Register fragment layout for
//     warpgroup_fence_accumulators(acc);            accumulator matrix D")
//     ... release the stage the wait retired ...
//
// Descriptors come from SwizzledTile128, the fragment layout as a function from
// accumulator_coord (both wgmma_desc.hpp). Every function here is called by all
// 128 threads of a warpgroup (converged) unless it says otherwise; all need sm_90a.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/device/wgmma_desc.hpp"
#include "tma/ptx/warpgroup.hpp"
#include "tma/ptx/wgmma.hpp"

namespace tma {

// Threads in a warpgroup.
inline constexpr int kWarpgroupThreads = 128;

// wgmma.fence.sync.aligned: orders the warpgroup's earlier accesses of the accumulators (and of
// register operands) before the mma_asyncs that follow. Before the first wgmma of a tile.
__device__ __forceinline__ void warpgroup_arrive() {
  ptx::wgmma_fence();
}

// wgmma.commit_group.sync.aligned: closes the group of wgmmas issued since the last commit.
__device__ __forceinline__ void warpgroup_commit() {
  ptx::wgmma_commit_group();
}

// wgmma.wait_group.sync.aligned N: at most N committed groups of this warpgroup still run.
template <int N>
__device__ __forceinline__ void warpgroup_wait() {
  ptx::wgmma_wait_group<N>();
}

// Keeps the compiler from moving accesses of the accumulators across this point (no
// instruction): call it before warpgroup_arrive() and right after warpgroup_wait(), on the
// whole accumulator array.
template <int kRegs>
__device__ __forceinline__ void warpgroup_fence_accumulators(float (&acc)[kRegs]) {
#pragma unroll
  for (int r = 0; r < kRegs; ++r)
    ptx::fence_operand(acc[r]);
}

// One wgmma.mma_async m64nNk16 with f32 accumulators and 16-bit inputs (kF16: fp16, else bf16),
// both operands in shared memory:  acc (64 x N) = A (64 x 16) x B (16 x N) [+ acc].
// `accumulate` false overwrites acc (the first K step of a tile: no zeroing needed).
//   wgmma.mma_async.sync.aligned.m64n{256,240,224,192,176,144,136,128,64}k16.f32.{bf16,f16}.{bf16,f16}
//   (ptx/wgmma.hpp)
template <int N, bool kF16, MatrixMajor kMajorA, MatrixMajor kMajorB>
__device__ __forceinline__ void wgmma(float (&acc)[N / 2], std::uint64_t desc_a,
                                      std::uint64_t desc_b, bool accumulate) {
  constexpr int kTransA = static_cast<int>(kMajorA), kTransB = static_cast<int>(kMajorB);
  const std::uint32_t scale_d = accumulate ? 1u : 0u;
  if constexpr (N == 256) {
    ptx::wgmma_m64n256k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 240) {
    ptx::wgmma_m64n240k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 224) {
    ptx::wgmma_m64n224k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 176) {
    ptx::wgmma_m64n176k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 144) {
    ptx::wgmma_m64n144k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 136) {
    ptx::wgmma_m64n136k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 192) {
    ptx::wgmma_m64n192k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else if constexpr (N == 64) {
    ptx::wgmma_m64n64k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  } else {
    static_assert(
        N == 128,
        "tmakit wraps wgmma m64nNk16 for N = 256, 240, 224, 192, 176, 144, 136, 128 and 64");
    ptx::wgmma_m64n128k16_f32<kF16, kTransA, kTransB>(acc, desc_a, desc_b, scale_d);
  }
}

// setmaxnreg.inc.sync.aligned.u32 N: this warpgroup's register budget grows to N per thread.
// Consumer warpgroups of a warp-specialized kernel, first thing after the role split.
template <int N>
__device__ __forceinline__ void warpgroup_reg_alloc() {
  ptx::setmaxnreg_inc<N>();
}

// setmaxnreg.dec.sync.aligned.u32 N: this warpgroup's register budget shrinks to N per thread,
// freeing registers for the consumers. The producer warpgroup, first thing after the role split.
template <int N>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
  ptx::setmaxnreg_dec<N>();
}

// bar.sync id, count: the `count` threads (whole warps) using barrier `id` wait for each other.
// Barrier 0 belongs to __syncthreads; kernels name their ids as constants.
__device__ __forceinline__ void named_barrier_sync(std::uint32_t id, std::uint32_t count) {
  ptx::named_barrier_sync(id, count);
}

// bar.arrive id, count: the calling warps count towards barrier `id` without waiting for it; the
// `count` threads are those that arrive plus those that named_barrier_sync on it.
__device__ __forceinline__ void named_barrier_arrive(std::uint32_t id, std::uint32_t count) {
  ptx::named_barrier_arrive(id, count);
}

}  // namespace tma
