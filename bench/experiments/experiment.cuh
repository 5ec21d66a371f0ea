// Helpers shared by the GEMM experiments (gemm_overhead, gemm_trace): not a library, not a
// benchmark of record.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace experiment {

// Exits with the call's name and the CUDA error string unless e is cudaSuccess.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// n bf16 values between 2^-7 and 2 (bit patterns 0x3C00 .. 0x3FFF from a hash of the index and
// the seed): non-zero, varied inputs; the experiments time, they do not verify.
__global__ void fill(unsigned short* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    p[i] = static_cast<unsigned short>(0x3C00u | (x & 0x3FFu));
  }
}

}  // namespace experiment
