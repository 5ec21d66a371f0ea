// tmakit ptx/: L2 cache-eviction policies for the .L2::cache_hint forms of the bulk copies.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// createpolicy.fractional.L2::evict_first.b64 policy, 1.0;   PTX ISA 7.4, sm_80. Any thread.
// Pure (no side effects): plain asm, so the compiler may hoist it out of loops.
// Data this policy touches is the first to leave L2 (streamed once).
__device__ __forceinline__ std::uint64_t createpolicy_evict_first() {
  std::uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// createpolicy.fractional.L2::evict_last.b64 policy, 1.0;    PTX ISA 7.4, sm_80. Any thread.
// Data this policy touches stays in L2 longest (reused by many CTAs).
__device__ __forceinline__ std::uint64_t createpolicy_evict_last() {
  std::uint64_t policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// createpolicy.fractional.L2::evict_normal.b64 policy, 1.0;  PTX ISA 7.4, sm_80. Any thread.
__device__ __forceinline__ std::uint64_t createpolicy_evict_normal() {
  std::uint64_t policy;
  asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

}  // namespace tma::ptx
