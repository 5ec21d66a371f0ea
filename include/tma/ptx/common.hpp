// tmakit ptx/: shared helpers of the inline-PTX shims.
//
// include/tma/ptx/ is the only place in tmakit where `asm` may appear (a CI check greps for it).
// Each shim wraps one PTX form that CCCL's cuda::ptx (CUDA 13.0, CCCL 3.0) does not offer; the PTX
// line, its PTX ISA version and the SM it needs are written above each one. Everything else in
// tmakit calls cuda::ptx. Shims take state-space addresses (32-bit shared, generic 64-bit for
// global and for tensor maps) exactly as the PTX operands are typed.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// 32-bit shared-memory address of a generic pointer into this CTA's shared memory (cvta.to.shared).
// A .shared::cta address is also a valid .shared::cluster address of the executing CTA (PTX ISA,
// "Shared memory state space").
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// A generic address as a 64-bit integer asm operand ("l"). Pointers are never handed to asm as
// pointers: NVVM's address-space inference may turn a generic pointer into a 32-bit shared-space
// one, and cicc (CUDA 13.0) then aborts with "Copy one register into another with a different
// width" (or crashes) on the 64-bit operand.
__device__ __forceinline__ std::uint64_t generic_addr(const void* p) {
  return reinterpret_cast<std::uint64_t>(p);
}

// Returns `p` unchanged through an opaque mov, so the compiler forgets which state space it
// points into. Code that picks the state space at run time (is_shared(p) ? shared form : global
// form) needs it: when NVVM can prove p is shared, its global-space branch (cvta.to.global of a
// shared address) makes cicc (CUDA 13.0) crash or abort with "Copy one register into another
// with a different width". Only for cold paths (descriptor edits).
__device__ __forceinline__ void* launder_generic(const void* p) {
  std::uint64_t a = generic_addr(p);
  asm volatile("mov.b64 %0, %0;" : "+l"(a));
  return reinterpret_cast<void*>(a);
}

// Tensor coordinates as asm operands %0..%4. All five are always passed (zero past the rank) so
// that the operands after them keep fixed numbers (%5 on); the PTX text names only the first R of
// them, so the unused ones never reach the instruction and ptxas drops the moves that fed them.
struct Coords5 {
  std::int32_t v[5];
};

template <int R>
__device__ __forceinline__ Coords5 pad_coords(const std::int32_t (&c)[R]) {
  static_assert(R >= 1 && R <= 5, "a tensor copy has 1 to 5 coordinates (the descriptor's rank)");
  Coords5 out{};
#pragma unroll
  for (int i = 0; i < R; ++i)
    out.v[i] = c[i];
  return out;
}

// im2col offsets (16-bit, one per spatial dimension: R - 2 of them) as asm operands %5..%7, padded
// to three in the same way.
struct Offsets3 {
  std::uint16_t v[3];
};

template <int N>
__device__ __forceinline__ Offsets3 pad_offsets(const std::uint16_t (&o)[N]) {
  static_assert(N >= 1 && N <= 3, "im2col takes 1 to 3 offsets (rank 3..5 minus 2)");
  Offsets3 out{};
#pragma unroll
  for (int i = 0; i < N; ++i)
    out.v[i] = o[i];
  return out;
}

}  // namespace tma::ptx

// Operand list for Coords5 / Offsets3 (macros because asm operand lists cannot come from a
// function).
#define TMA_PTX_COORD_OPERANDS(c) \
  "r"((c).v[0]), "r"((c).v[1]), "r"((c).v[2]), "r"((c).v[3]), "r"((c).v[4])
#define TMA_PTX_OFFSET_OPERANDS(o) "h"((o).v[0]), "h"((o).v[1]), "h"((o).v[2])

// Expands EMIT(dim, coords) for the tensor rank R, where dim is the PTX ".Nd" suffix and coords the
// vector operand naming %0..%(R-1). One asm statement per rank keeps the PTX text a literal.
#define TMA_PTX_FOR_RANK(R, EMIT)            \
  if constexpr ((R) == 1) {                  \
    EMIT(".1d", "{%0}")                      \
  } else if constexpr ((R) == 2) {           \
    EMIT(".2d", "{%0, %1}")                  \
  } else if constexpr ((R) == 3) {           \
    EMIT(".3d", "{%0, %1, %2}")              \
  } else if constexpr ((R) == 4) {           \
    EMIT(".4d", "{%0, %1, %2, %3}")          \
  } else {                                   \
    static_assert((R) == 5, "rank is 1..5"); \
    EMIT(".5d", "{%0, %1, %2, %3, %4}")      \
  }

// As above for im2col (ranks 3..5), also naming the R - 2 offsets %5.. as `offsets`.
#define TMA_PTX_FOR_IM2COL_RANK(R, EMIT)                \
  if constexpr ((R) == 3) {                             \
    EMIT(".3d", "{%0, %1, %2}", "{%5}")                 \
  } else if constexpr ((R) == 4) {                      \
    EMIT(".4d", "{%0, %1, %2, %3}", "{%5, %6}")         \
  } else {                                              \
    static_assert((R) == 5, "im2col rank is 3..5");     \
    EMIT(".5d", "{%0, %1, %2, %3, %4}", "{%5, %6, %7}") \
  }
