// tmakit ptx/: warpgroup matrix multiply-accumulate (wgmma), which CCCL 3.0's cuda::ptx lacks.
//
// A warpgroup is 4 consecutive warps (128 threads, the first warp's index a multiple of 4). Every
// instruction here is .sync.aligned: all 128 threads of the warpgroup execute it, converged, with
// the same immediates (and, for mma_async, the same descriptors). All need sm_90a (the
// arch-specific target: the build's CMAKE_CUDA_ARCHITECTURES=90a); PTX ISA 8.0.
//
// The asynchronous contract (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
//   wgmma_fence()            before the first mma_async, and whenever the accumulator registers
//                            were touched by other instructions since the last one;
//   mma_async ...            issue; the accumulators are in flight until the group completes;
//   wgmma_commit_group()     closes a group of the mma_asyncs issued since the last commit;
//   wgmma_wait_group<N>()    waits until at most N groups are pending: only then may the
//                            accumulators be read, and the shared memory read by the completed
//                            groups be overwritten.
// The compiler does not know that the registers change asynchronously: fence_operand() on every
// accumulator register around the wait keeps it from moving register accesses across it.
// mma_async reads shared memory through the async proxy: data written there with ordinary stores
// (or cp.async) needs fence.proxy.async before an mma_async reads it; TMA writes need nothing.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// wgmma.fence.sync.aligned;                         PTX ISA 8.0, sm_90a. The whole warpgroup.
// Orders this warpgroup's earlier register (and shared-memory) accesses before the mma_asyncs
// that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

// wgmma.commit_group.sync.aligned;                  PTX ISA 8.0, sm_90a. The whole warpgroup.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// wgmma.wait_group.sync.aligned N;                  PTX ISA 8.0, sm_90a. The whole warpgroup.
// Returns when at most N of this warpgroup's committed groups are still pending.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// An empty asm that claims to read and write `r`: the compiler may not move accesses of the
// register across it (nor keep the value in another register). No instruction is emitted.
__device__ __forceinline__ void fence_operand(float& r) {
  asm volatile("" : "+f"(r)::"memory");
}

// The same for a 32-bit integer, without the memory clobber: `r` is computed before this point
// and held in a register after it (ptxas can neither sink its computation below it nor redo the
// computation later). No instruction is emitted.
__device__ __forceinline__ void fence_operand(int& r) {
  asm volatile("" : "+r"(r));
}

// The same for a 64-bit value (a wgmma descriptor computed once, outside a loop).
__device__ __forceinline__ void fence_operand(std::uint64_t& r) {
  asm volatile("" : "+l"(r));
}

}  // namespace tma::ptx

// The accumulator vector operands {%0, .., %(n-1)} of an mma_async with n f32 accumulators per
// thread (n = N / 2 for m64nNk16), and the matching "+f" operand lists.
#define TMA_WGMMA_R0_31                      \
  "%0, %1, %2, %3, %4, %5, %6, %7, "         \
  "%8, %9, %10, %11, %12, %13, %14, %15, "   \
  "%16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31"
#define TMA_WGMMA_R0_63                      \
  "%0, %1, %2, %3, %4, %5, %6, %7, "         \
  "%8, %9, %10, %11, %12, %13, %14, %15, "   \
  "%16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, " \
  "%40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63"
#define TMA_WGMMA_R64_95                     \
  "%64, %65, %66, %67, %68, %69, %70, %71, " \
  "%72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, " \
  "%88, %89, %90, %91, %92, %93, %94, %95"
#define TMA_WGMMA_R96_127                            \
  "%96, %97, %98, %99, %100, %101, %102, %103, "     \
  "%104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, " \
  "%120, %121, %122, %123, %124, %125, %126, %127"
// Tile widths that fit a wave (include/tma/ops/gemm.hpp: kGemmConfigs): 68, 72, 88, 112 and 120
// registers.
#define TMA_WGMMA_R64_67 "%64, %65, %66, %67"
#define TMA_WGMMA_R64_71 "%64, %65, %66, %67, %68, %69, %70, %71"
#define TMA_WGMMA_R64_87                     \
  "%64, %65, %66, %67, %68, %69, %70, %71, " \
  "%72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87"
#define TMA_WGMMA_R96_111                        \
  "%96, %97, %98, %99, %100, %101, %102, %103, " \
  "%104, %105, %106, %107, %108, %109, %110, %111"
#define TMA_WGMMA_R96_119                            \
  "%96, %97, %98, %99, %100, %101, %102, %103, "     \
  "%104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119"
#define TMA_WGMMA_D32 "{" TMA_WGMMA_R0_31 "}"
#define TMA_WGMMA_D64 "{" TMA_WGMMA_R0_63 "}"
#define TMA_WGMMA_D68 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_67 "}"
#define TMA_WGMMA_D72 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_71 "}"
#define TMA_WGMMA_D88 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_87 "}"
#define TMA_WGMMA_D112 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_95 ", " TMA_WGMMA_R96_111 "}"
#define TMA_WGMMA_D120 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_95 ", " TMA_WGMMA_R96_119 "}"
#define TMA_WGMMA_D96 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_95 "}"
#define TMA_WGMMA_D128 "{" TMA_WGMMA_R0_63 ", " TMA_WGMMA_R64_95 ", " TMA_WGMMA_R96_127 "}"
#define TMA_WGMMA_OUT4(d, i) "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define TMA_WGMMA_OUT8(d, i)                                                                \
  "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), \
      "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define TMA_WGMMA_OUT64(d, i)                                                                \
  TMA_WGMMA_OUT8(d, (i) + 0), TMA_WGMMA_OUT8(d, (i) + 8), TMA_WGMMA_OUT8(d, (i) + 16),       \
      TMA_WGMMA_OUT8(d, (i) + 24), TMA_WGMMA_OUT8(d, (i) + 32), TMA_WGMMA_OUT8(d, (i) + 40), \
      TMA_WGMMA_OUT8(d, (i) + 48), TMA_WGMMA_OUT8(d, (i) + 56)

// One mma_async statement: `scale_d` is a run-time 0/1 turned into the predicate operand
// (0: D = A x B, 1: D = A x B + D); scale-a and scale-b are +1; the transposes are immediates.
#define TMA_WGMMA_ASM(SHAPE_TYPES, DREGS, DESC_A, DESC_B, SCALE_D, TRANS_A, TRANS_B, ...)      \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %" SCALE_D                                \
               ", 0;\n\t"                                                                      \
               "wgmma.mma_async.sync.aligned." SHAPE_TYPES " " DREGS ", %" DESC_A ", %" DESC_B \
               ", p, 1, 1, %" TRANS_A ", %" TRANS_B ";\n\t}"                                   \
               : __VA_ARGS__)

// Defines ptx::wgmma_m64n<N>k16_f32<kF16, kTransA, kTransB>(float (&d)[N / 2], desc_a, desc_b,
// scale_d) like the three written out below: DREGS names the N / 2 accumulator operands, A .. TB
// the operand numbers after them (N / 2 .. N / 2 + 4), the variadic part their "+f" list.
#define TMA_WGMMA_DEFINE_F32(N, DREGS, A, B, S, TA, TB, ...)                                 \
  template <bool kF16, int kTransA, int kTransB>                                             \
  __device__ __forceinline__ void wgmma_m64n##N##k16_f32(                                    \
      float(&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, std::uint32_t scale_d) { \
    static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1),          \
                  "the wgmma transpose immediates are 0 (K-major) or 1 (MN-major)");         \
    if constexpr (kF16) {                                                                    \
      TMA_WGMMA_ASM("m64n" #N "k16.f32.f16.f16", DREGS, A, B, S, TA, TB, __VA_ARGS__         \
                    : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));   \
    } else {                                                                                 \
      TMA_WGMMA_ASM("m64n" #N "k16.f32.bf16.bf16", DREGS, A, B, S, TA, TB, __VA_ARGS__       \
                    : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));   \
    }                                                                                        \
  }

namespace tma::ptx {

// wgmma.mma_async.sync.aligned.m64n256k16.f32.{bf16,f16}.{bf16,f16}
//     {d0..d127}, descA, descB, scale-d, 1, 1, tnspA, tnspB;   PTX ISA 8.0, sm_90a.
// The whole warpgroup. A (64 x 16) and B (16 x 256) both in shared memory, named by matrix
// descriptors (device/wgmma_desc.hpp); D (64 x 256, f32) in 128 registers per thread, fragment
// layout of the PTX ISA's "wgmma .m64nNk16 register fragment layout for accumulator matrix D".
// kTransA / kTransB: 0 = K-major, 1 = M- / N-major (allowed for 16-bit types only).
// kF16: false = bf16 inputs, true = fp16 inputs.
template <bool kF16, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n256k16_f32(float (&d)[128], std::uint64_t desc_a,
                                                     std::uint64_t desc_b, std::uint32_t scale_d) {
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1),
                "the wgmma transpose immediates are 0 (K-major) or 1 (MN-major)");
  if constexpr (kF16) {
    TMA_WGMMA_ASM("m64n256k16.f32.f16.f16", TMA_WGMMA_D128, "128", "129", "130", "131", "132",
                  TMA_WGMMA_OUT64(d, 0), TMA_WGMMA_OUT64(d, 64)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    TMA_WGMMA_ASM("m64n256k16.f32.bf16.bf16", TMA_WGMMA_D128, "128", "129", "130", "131", "132",
                  TMA_WGMMA_OUT64(d, 0), TMA_WGMMA_OUT64(d, 64)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
}

// wgmma.mma_async.sync.aligned.m64n192k16.f32.{bf16,f16}.{bf16,f16}
//     {d0..d95}, descA, descB, scale-d, 1, 1, tnspA, tnspB;    PTX ISA 8.0, sm_90a.
// As above with B 16 x 192 and D 64 x 192 (96 registers per thread).
template <bool kF16, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n192k16_f32(float (&d)[96], std::uint64_t desc_a,
                                                     std::uint64_t desc_b, std::uint32_t scale_d) {
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1),
                "the wgmma transpose immediates are 0 (K-major) or 1 (MN-major)");
  if constexpr (kF16) {
    TMA_WGMMA_ASM("m64n192k16.f32.f16.f16", TMA_WGMMA_D96, "96", "97", "98", "99", "100",
                  TMA_WGMMA_OUT64(d, 0), TMA_WGMMA_OUT8(d, 64), TMA_WGMMA_OUT8(d, 72),
                  TMA_WGMMA_OUT8(d, 80), TMA_WGMMA_OUT8(d, 88)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    TMA_WGMMA_ASM("m64n192k16.f32.bf16.bf16", TMA_WGMMA_D96, "96", "97", "98", "99", "100",
                  TMA_WGMMA_OUT64(d, 0), TMA_WGMMA_OUT8(d, 64), TMA_WGMMA_OUT8(d, 72),
                  TMA_WGMMA_OUT8(d, 80), TMA_WGMMA_OUT8(d, 88)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
}

// wgmma.mma_async.sync.aligned.m64n128k16.f32.{bf16,f16}.{bf16,f16}
//     {d0..d63}, descA, descB, scale-d, 1, 1, tnspA, tnspB;    PTX ISA 8.0, sm_90a.
// As above with B 16 x 128 and D 64 x 128 (64 registers per thread).
template <bool kF16, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n128k16_f32(float (&d)[64], std::uint64_t desc_a,
                                                     std::uint64_t desc_b, std::uint32_t scale_d) {
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1),
                "the wgmma transpose immediates are 0 (K-major) or 1 (MN-major)");
  if constexpr (kF16) {
    TMA_WGMMA_ASM("m64n128k16.f32.f16.f16", TMA_WGMMA_D64, "64", "65", "66", "67", "68",
                  TMA_WGMMA_OUT64(d, 0)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    TMA_WGMMA_ASM("m64n128k16.f32.bf16.bf16", TMA_WGMMA_D64, "64", "65", "66", "67", "68",
                  TMA_WGMMA_OUT64(d, 0)
                  : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
}

// wgmma.mma_async.sync.aligned.m64n{240,224,176,144,136}k16.f32.{bf16,f16}.{bf16,f16}
//     {d0..d(N/2-1)}, descA, descB, scale-d, 1, 1, tnspA, tnspB;   PTX ISA 8.0, sm_90a.
// As above with B 16 x N and D 64 x N (N / 2 registers per thread): the tile widths that fit a
// wave of 132 SMs on the LLM shapes (ops/gemm.hpp: kGemmConfigs).
TMA_WGMMA_DEFINE_F32(240, TMA_WGMMA_D120, "120", "121", "122", "123", "124", TMA_WGMMA_OUT64(d, 0),
                     TMA_WGMMA_OUT8(d, 64), TMA_WGMMA_OUT8(d, 72), TMA_WGMMA_OUT8(d, 80),
                     TMA_WGMMA_OUT8(d, 88), TMA_WGMMA_OUT8(d, 96), TMA_WGMMA_OUT8(d, 104),
                     TMA_WGMMA_OUT8(d, 112))
TMA_WGMMA_DEFINE_F32(224, TMA_WGMMA_D112, "112", "113", "114", "115", "116", TMA_WGMMA_OUT64(d, 0),
                     TMA_WGMMA_OUT8(d, 64), TMA_WGMMA_OUT8(d, 72), TMA_WGMMA_OUT8(d, 80),
                     TMA_WGMMA_OUT8(d, 88), TMA_WGMMA_OUT8(d, 96), TMA_WGMMA_OUT8(d, 104))
TMA_WGMMA_DEFINE_F32(176, TMA_WGMMA_D88, "88", "89", "90", "91", "92", TMA_WGMMA_OUT64(d, 0),
                     TMA_WGMMA_OUT8(d, 64), TMA_WGMMA_OUT8(d, 72), TMA_WGMMA_OUT8(d, 80))
TMA_WGMMA_DEFINE_F32(144, TMA_WGMMA_D72, "72", "73", "74", "75", "76", TMA_WGMMA_OUT64(d, 0),
                     TMA_WGMMA_OUT8(d, 64))
TMA_WGMMA_DEFINE_F32(136, TMA_WGMMA_D68, "68", "69", "70", "71", "72", TMA_WGMMA_OUT64(d, 0),
                     TMA_WGMMA_OUT4(d, 64))

// wgmma.mma_async.sync.aligned.m64n64k16.f32.{bf16,f16}.{bf16,f16}
//     {d0..d31}, descA, descB, scale-d, 1, 1, tnspA, tnspB;    PTX ISA 8.0, sm_90a.
// As above with B 16 x 64 and D 64 x 64 (32 registers per thread): the narrow side of a 256 x 64
// tile (bench/experiments/wgmma_rate measures its rate; no GEMM configuration uses it).
TMA_WGMMA_DEFINE_F32(64, TMA_WGMMA_D32, "32", "33", "34", "35", "36", TMA_WGMMA_OUT8(d, 0),
                     TMA_WGMMA_OUT8(d, 8), TMA_WGMMA_OUT8(d, 16), TMA_WGMMA_OUT8(d, 24))

}  // namespace tma::ptx
