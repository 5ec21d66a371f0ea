// tmakit ptx/: warp-wide 8 x 8 matrix stores and loads between registers and shared memory
// (stmatrix, ldmatrix), which CCCL 3.0's cuda::ptx lacks. The GEMM epilogue stages its tile with
// them: a thread's pair of 16-bit values in one 8 x 8 matrix is exactly a wgmma accumulator pair
// (device/wgmma_desc.hpp: accumulator_coord), so four matrices go out in one instruction.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ptx {

// stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {r0, r1, r2, r3};   PTX ISA 7.8, sm_90. The
// whole warp, converged. Stores four 8 x 8 matrices of 16-bit elements: lane l's register r_j holds
// row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix j (the lower half the first); lanes 8 j
// .. 8 j + 7 give the shared addresses of matrix j's rows 0..7 (16 bytes each, 16-byte aligned,
// anywhere: a swizzled layout is the addresses' business).
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1,
                                            std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [addr], {r0, r1, r2, r3};   PTX ISA 7.8,
// sm_90. As stmatrix_x4, each matrix stored transposed: lanes 8 j .. 8 j + 7 give the addresses of
// the rows of matrix j's transpose, so row c's 16 bytes hold column c of the registers' matrix
// (lane l's two values land in rows 2 (l % 4) and 2 (l % 4) + 1, bytes 2 (l / 4) .. + 1). The GEMM
// epilogue of a swapped-operand tile, whose accumulators hold the transpose of D's part.
__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, std::uint32_t r0,
                                                  std::uint32_t r1, std::uint32_t r2,
                                                  std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 {r0, r1, r2, r3}, [addr];   PTX ISA 6.5, sm_75. The
// whole warp, converged. The inverse of stmatrix_x4: the same addresses, the same registers.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t addr, std::uint32_t& r0,
                                            std::uint32_t& r1, std::uint32_t& r2,
                                            std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.shared.b16 [addr], {r0, r1};   PTX ISA 7.8, sm_90. The whole
// warp, converged. Matrices 0 and 1 of stmatrix_x4 alone: lanes 0..15 give the row addresses
// (the other lanes' addresses are not read). The GEMM epilogue's 8-column last block (a tile
// 136 wide).
__device__ __forceinline__ void stmatrix_x2(std::uint32_t addr, std::uint32_t r0,
                                            std::uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0),
               "r"(r1)
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x2.shared.b16 {r0, r1}, [addr];   PTX ISA 6.5, sm_75. The whole
// warp, converged. The inverse of stmatrix_x2.
__device__ __forceinline__ void ldmatrix_x2(std::uint32_t addr, std::uint32_t& r0,
                                            std::uint32_t& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(addr)
               : "memory");
}

}  // namespace tma::ptx
