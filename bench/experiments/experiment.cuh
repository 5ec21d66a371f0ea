// Helpers shared by the GEMM experiments (gemm_overhead, gemm_trace): not a library, not a
// benchmark of record.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tma/ops/gemm.hpp"

namespace experiment {

// Exits with the call's name and the CUDA error string unless e is cudaSuccess.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Device 0's attribute `a` (exits through check on failure, naming `what`).
inline int device_attribute(cudaDeviceAttr a, const char* what) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, a, 0), what);
  return v;
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

// The GEMM experiments' operands: A (m x k) and B (n x k) bf16 filled by fill (seeds 1 and 2), D
// of m x n elements of d_bytes each; never freed (the programs exit).
struct Operands {
  unsigned short* a = nullptr;
  unsigned short* b = nullptr;
  void* d = nullptr;
};
inline Operands make_operands(std::int64_t m, std::int64_t n, std::int64_t k, int d_bytes) {
  Operands o;
  check(cudaMalloc(&o.a, m * k * 2), "cudaMalloc(A)");
  check(cudaMalloc(&o.b, n * k * 2), "cudaMalloc(B)");
  check(cudaMalloc(&o.d, m * n * d_bytes), "cudaMalloc(D)");
  fill<<<1024, 256>>>(o.a, static_cast<std::size_t>(m * k), 1);
  fill<<<1024, 256>>>(o.b, static_cast<std::size_t>(n * k), 2);
  check(cudaGetLastError(), "fill");
  return o;
}

// D (m x n, row-major, `out`) = A B with A row-major (lda = k) and B column-major (ldb = k): the
// "rc" layout every GEMM experiment times (tma-bench's default).
inline tma::ops::GemmArgs rc_args(const Operands& o, std::int64_t m, std::int64_t n, std::int64_t k,
                                  tma::DataType out = tma::DataType::kBFloat16) {
  tma::ops::GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = o.a, g.a_layout = tma::ops::MatrixLayout::kRowMajor, g.lda = k;
  g.b = o.b, g.b_layout = tma::ops::MatrixLayout::kColMajor, g.ldb = k;
  g.d = o.d, g.d_dtype = out, g.ldd = n;
  return g;
}

}  // namespace experiment
