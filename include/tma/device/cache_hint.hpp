// tmakit device/: L2 eviction hints for tensor copies (the .L2::cache_hint forms).
//
// A hint is a run-time argument so that one kernel can stream one operand (kEvictFirst) and keep
// another (kEvictLast); when it is a constant at the call site, the branch on it folds away.
// kNone issues the plain instruction (through cuda::ptx); every other value creates a 64-bit policy
// with createpolicy.fractional (fraction 1.0) and issues the .L2::cache_hint form with it.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/ptx/cache_policy.hpp"

namespace tma {

enum class CacheHint : std::uint8_t {
  kNone = 0,     // no hint: the plain instruction
  kEvictNormal,  // createpolicy.fractional.L2::evict_normal
  kEvictFirst,   // createpolicy.fractional.L2::evict_first: data read once (streaming)
  kEvictLast,    // createpolicy.fractional.L2::evict_last: data many CTAs read again
};

// The 64-bit L2 cache policy for `hint` (createpolicy.fractional.L2::evict_*.b64 p, 1.0;
// PTX ISA 7.4, sm_80). Any thread. Not meaningful for kNone (returns the evict_normal policy).
__device__ __forceinline__ std::uint64_t make_cache_policy(CacheHint hint) {
  switch (hint) {
    case CacheHint::kEvictFirst:
      return ptx::createpolicy_evict_first();
    case CacheHint::kEvictLast:
      return ptx::createpolicy_evict_last();
    default:
      return ptx::createpolicy_evict_normal();
  }
}

}  // namespace tma
