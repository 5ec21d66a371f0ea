// tmakit ptx/: register reallocation between warpgroups and named CTA barriers, which CCCL 3.0's
// cuda::ptx lacks.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// setmaxnreg.inc.sync.aligned.u32 N;                PTX ISA 8.0, sm_90a. The whole warpgroup.
// Raises this warp's register budget to N (24..256, a multiple of 8), taking registers from the
// CTA's pool; blocks until the pool has them. The kernel must be compiled with a fixed register
// count (launch bounds or maxrregcount) so that the pool is known.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0,
                "setmaxnreg takes a register count of 24..256 that is a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// setmaxnreg.dec.sync.aligned.u32 N;                PTX ISA 8.0, sm_90a. The whole warpgroup.
// Lowers this warp's register budget to N, returning the rest to the CTA's pool.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0,
                "setmaxnreg takes a register count of 24..256 that is a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

// bar.sync id, count;                               PTX ISA 2.0, sm_20. `count` threads (a
// multiple of 32, whole warps) of the CTA wait for each other on hardware barrier `id` (0..15;
// 0 is __syncthreads'). Orders their shared-memory accesses like __syncthreads.
__device__ __forceinline__ void named_barrier_sync(std::uint32_t id, std::uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// bar.arrive id, count;                             PTX ISA 2.0, sm_20. The calling warp counts
// towards barrier `id`'s `count` threads without waiting; threads that bar.sync the same id
// complete it. Signals "go" from one group of warps to another (e.g. ping-pong consumers).
// Orders this thread's earlier shared-memory writes before the waiters' later reads.
__device__ __forceinline__ void named_barrier_arrive(std::uint32_t id, std::uint32_t count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

}  // namespace tma::ptx
