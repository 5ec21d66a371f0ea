// tmakit ptx/: prefetches that CCCL 3.0's cuda::ptx lacks (descriptor and non-tensor L2 prefetch).
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/ptx/common.hpp"

namespace tma::ptx {

// prefetch.tensormap [map];                       PTX ISA 8.0, sm_90. One thread.
// `map` is a generic address of a tensor map in kernel-parameter (__grid_constant__), const or
// global memory; it warms the descriptor cache so that the first copy does not wait for it.
__device__ __forceinline__ void prefetch_tensormap(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(generic_addr(map)) : "memory");
}

// cp.async.bulk.prefetch.L2.global [src], size;    PTX ISA 8.0, sm_90. One thread.
// `src` (generic address of global memory) 16-byte aligned, `bytes` a multiple of 16.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(__cvta_generic_to_global(src)),
               "r"(bytes)
               : "memory");
}

}  // namespace tma::ptx
