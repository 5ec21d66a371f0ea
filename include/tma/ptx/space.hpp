// tmakit ptx/: state-space tests of generic addresses.
//
// Why not __isShared / __isGlobal: nvcc 13.0 emits broken NVVM IR for them ("Call parameter type
// does not match function signature!", llvm.nvvm.isspacep.shared called with a struct pointer)
// when the tested pointer is a typed pointer parameter of a non-inlined function converted to
// void*, e.g. tma::make_descriptor(..., DescriptorScratch& scratch) compiled out of line. Found
// by tests/gpu/compile/device_compile_check.cu, which takes every device function's address.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/ptx/common.hpp"

namespace tma::ptx {

// isspacep.shared::cta p, a;      PTX ISA 7.8, sm_90. Any thread.
// True when the generic address `a` is in the executing CTA's shared memory window.
__device__ __forceinline__ bool is_shared(const void* a) {
  std::uint32_t r;
  asm("{\n\t.reg .pred p;\n\tisspacep.shared::cta p, %1;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(r)
      : "l"(generic_addr(a)));
  return r != 0;
}

// isspacep.global p, a;           PTX ISA 2.0, sm_20. Any thread.
__device__ __forceinline__ bool is_global(const void* a) {
  std::uint32_t r;
  asm("{\n\t.reg .pred p;\n\tisspacep.global p, %1;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(r)
      : "l"(generic_addr(a)));
  return r != 0;
}

// %clusterid.x read by a volatile asm: each call reads it anew, so the compiler does not merge
// two reads (cuda::ptx::get_sreg_clusterid_x is a plain asm, which it may) and keep the value in a
// register between them (the GEMM's producer re-reads it after its setmaxnreg.dec).
__device__ __forceinline__ std::uint32_t cluster_id_x_fresh() {
  std::uint32_t c;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
  return c;
}

}  // namespace tma::ptx
