// tmakit device/: debug-build checks, and what happens when one fails.
//
// Two switches, both on by default when NDEBUG is not defined (CMake Debug, or any build without
// NDEBUG) and off in Release; define either one yourself to override the default.
//
// TMA_DEBUG_HANG_BOUND: polls of mbarrier.try_wait after which Barrier::wait (and the Pipeline
//   waits) give up, print block, warp, barrier address, pipeline stage and phase, and trap instead
//   of hanging. 0 turns it off. Each poll is one try_wait, which the hardware suspends for a
//   short, system-dependent time while the phase is incomplete; the default
//   (kDefaultHangBoundPolls) is about 8 s of waiting on an H200.
// TMA_DEBUG_CHECKS: 0 or 1. Device-side checks of the preconditions a copy cannot report itself
//   (shared-memory alignment, state space of barriers and buffers, tensor-map alignment). A
//   failed check prints what was wrong and traps.
//
// Debug builds print with printf, whose argument buffer lives in local memory: kernels compiled
// with these checks show a small stack frame (ptxas -warn-lmem-usage, tools/check_sass.sh).
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda/ptx>

#include "tma/config.hpp"
#include "tma/ptx/space.hpp"

namespace tma {

// Default TMA_DEBUG_HANG_BOUND. Measured on an H200 (driver 580, CUDA 13.0): an unsatisfied
// mbarrier.try_wait.parity returns after 1.96 us, so 2^22 polls are about 8 s, thousands of times
// the slowest legitimate TMA wait (slower execution, e.g. compute-sanitizer, slows each poll too).
inline constexpr unsigned long long kDefaultHangBoundPolls = 1ull << 22;

}  // namespace tma

#if !defined(TMA_DEBUG_HANG_BOUND) && !defined(NDEBUG)
#define TMA_DEBUG_HANG_BOUND ::tma::kDefaultHangBoundPolls
#endif

#if !defined(TMA_DEBUG_CHECKS)
#if defined(NDEBUG)
#define TMA_DEBUG_CHECKS 0
#else
#define TMA_DEBUG_CHECKS 1
#endif
#endif

namespace tma::detail {

// State-space tests (ptx/space.hpp says why not __isShared / __isGlobal).
__device__ __forceinline__ bool in_shared(const void* p) {
  return ptx::is_shared(p);
}
__device__ __forceinline__ bool in_global(const void* p) {
  return ptx::is_global(p);
}

// Prints who failed and traps. Kept out of line (noinline) so the check's cold path does not grow
// the caller's registers.
__device__ __noinline__ inline void device_fail(const char* what, unsigned long long value,
                                                const char* rule) {
  printf("tmakit: %s = 0x%llx: %s (block (%d,%d,%d), thread (%d,%d,%d))\n", what, value, rule,
         blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
  cuda::ptx::trap();
}

// Debug check: `p` points into this CTA's shared memory and is `align`-byte aligned.
__device__ __forceinline__ void check_shared(const void* p, unsigned align, const char* what) {
#if TMA_DEBUG_CHECKS
  const auto bits = reinterpret_cast<unsigned long long>(p);
  if (!in_shared(p)) {
    device_fail(what, bits, "must point to shared memory (a __shared__ variable or dynamic smem)");
  }
  if (bits % align != 0) {
    device_fail(what, bits,
                align == 1024  ? "must be 1024-byte aligned"
                : align == 512 ? "must be 512-byte aligned"
                : align == 256 ? "must be 256-byte aligned"
                : align == 128 ? "must be 128-byte aligned"
                : align == 64  ? "must be 64-byte aligned"
                : align == 16  ? "must be 16-byte aligned"
                               : "must be 8-byte aligned");
  }
#else
  (void)p;
  (void)align;
  (void)what;
#endif
}

// Debug check: `p` is `align`-byte aligned (any state space).
__device__ __forceinline__ void check_aligned(const void* p, unsigned align, const char* what) {
#if TMA_DEBUG_CHECKS
  const auto bits = reinterpret_cast<unsigned long long>(p);
  if (bits % align != 0) {
    device_fail(what, bits,
                align == 128  ? "must be 128-byte aligned"
                : align == 64 ? "must be 64-byte aligned"
                              : "must be 16-byte aligned");
  }
#else
  (void)p;
  (void)align;
  (void)what;
#endif
}

// Debug check: a bulk-copy size is a non-zero multiple of 16 bytes.
__device__ __forceinline__ void check_bulk_size(std::uint32_t bytes, const char* what) {
#if TMA_DEBUG_CHECKS
  if (bytes == 0 || bytes % 16 != 0) {
    device_fail(what, bytes, "must be a non-zero multiple of 16 bytes (cp.async.bulk)");
  }
#else
  (void)bytes;
  (void)what;
#endif
}

}  // namespace tma::detail
