// tmakit ptx/: gpu-scope flags in global memory, for handoffs between CTAs of one grid (e.g. the
// GEMM's stream-K partial tiles). CCCL's cuda::atomic_ref would do the same through a heavier
// header; these are the two instructions such a handoff needs. The flags are 64-bit so that a flag
// can hold a per-launch tag rather than 0 / 1: then no value left from before the launch reads as
// set, and nothing has to clear the flags first (the GEMM's Params::sk_epoch).
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// ld.acquire.gpu.global.u64 v, [p];   PTX ISA 7.0, sm_70. Any thread.
// Reads a flag; later memory accesses of this thread are ordered after it (at gpu scope). A
// waiter's leader polls with it; a bar.sync that follows extends the acquire to the others.
__device__ __forceinline__ std::uint64_t load_acquire_gpu(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// fence.acq_rel.gpu; st.relaxed.gpu.global.u64 [p], v;   PTX ISA 7.0, sm_70. Any thread.
// Publishes a flag after everything this thread wrote, and what other threads of its block wrote
// before a bar.sync it passed (the pattern of a grid-wide barrier).
__device__ __forceinline__ void store_release_gpu(std::uint64_t* p, std::uint64_t v) {
  asm volatile("fence.acq_rel.gpu;\n\tst.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v)
               : "memory");
}

}  // namespace tma::ptx
