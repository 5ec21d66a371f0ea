// tmakit ptx/: the pre-Hopper asynchronous copy (cp.async, non-bulk), for the ordinary-loads
// baselines that measure what TMA gains. CCCL 3.0's cuda::ptx has only its mbarrier forms.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// cp.async.cg.shared.global [dst], [src], 16, src_bytes;    PTX ISA 7.0, sm_80. Any thread.
// Copies src_bytes (0..16) from global memory and fills the rest of the 16 bytes at `dst` with
// zeros; .cg caches in L2 only. `dst`: 32-bit shared address, 16-byte aligned; `src`: generic
// address of global memory, 16-byte aligned (even when src_bytes < 16). Completes
// asynchronously: the issuing thread commits it to a group (cp_async_commit_group) and waits for
// the group (cp_async_wait_group) before the data is visible to it.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src,
                                            std::uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory");
}

// cp.async.commit_group;                            PTX ISA 7.0, sm_80. The issuing thread.
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// cp.async.wait_group N;                            PTX ISA 7.0, sm_80. The issuing thread.
// Waits until at most N of this thread's committed cp.async groups are pending; the data of the
// completed ones is then visible to this thread (and, after a barrier, to others).
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  static_assert(N >= 0, "cp.async.wait_group takes the number of groups left pending, >= 0");
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];   PTX ISA 7.0, sm_80. Any thread.
// Arrives on the mbarrier at shared address `bar` once every cp.async this thread issued before
// it has completed (the data then visible to threads that wait on the barrier's phase). .noinc:
// the arrival counts against the barrier's expected arrivals (init with one per calling thread);
// the thread itself does not wait. The way a cp.async producer hands stages to consumers without
// stalling on cp.async.wait_group.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

}  // namespace tma::ptx
