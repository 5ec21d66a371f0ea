// tmakit ops (internal): the GEMM's edge kernel, D = alpha A B + beta C for the last few columns of
// D that the TMA path leaves out. Included by gemm.cu only.
//
// Why: TMA stores write dimension 0 in whole 16-byte chunks (docs/hardware-findings.md, finding
// 4), so the TMA path's D map ends at the last 16-byte boundary of a row (tma_store_columns in
// gemm_config.hpp) and the columns past it, fewer than one chunk (< 8 for 16-bit D, < 4 for fp32),
// are computed here with ordinary loads and stores: a thin m x cols x k product, so simplicity
// over speed (it reads A once more, coalesced, and cols columns of B).
//
// Block: kEdgeRows rows of D x kEdgeLanes lanes along K. Thread (r, l) sums the products of
// k = l, l + kEdgeLanes, ... for row r and every edge column in fp32; the block then adds the
// lanes' partial sums in shared memory and writes each (row, column) once. Threads map to (r, l)
// so that a warp's A loads are contiguous in either layout: row-major A, l fastest (a row's 32
// consecutive k: 64 B); column-major A, r fastest (16 consecutive rows of one k: one 32 B sector).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gemm_config.hpp"

namespace tma::ops::detail::gemm {

inline constexpr int kEdgeRows = 16;
inline constexpr int kEdgeLanes = 64;
inline constexpr int kEdgeThreads = kEdgeRows * kEdgeLanes;

// What the edge kernel gets. Strides in elements: A(i, kk) is a[i * a_row + kk * a_k], B(kk, j)
// is b[kk * b_k + j * b_col]; C and D are row-major.
struct EdgeParams {
  const void* a;
  const void* b;
  const void* c;  // null when beta == 0 (C is not read); may be d (in place)
  void* d;
  std::int64_t a_row, a_k, b_k, b_col, ldc, ldd;
  std::int32_t m, k;
  std::int32_t col0, cols;  // D's columns col0 .. col0 + cols - 1, 1 <= cols <= kMaxEdgeColumns
  float alpha, beta;
  bool a_row_major;  // picks the thread mapping (see above)
};

template <class T>
__device__ __forceinline__ float edge_to_float(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return __half2float(v);
  }
}

// Rounds to nearest, as the main kernel's epilogue does.
template <class T>
__device__ __forceinline__ T edge_from_float(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return __half(__float2half_rn(v));
  }
}

// Launched with kEdgeThreads threads and ceil(m / kEdgeRows) blocks. In: A and B's type; Out: C
// and D's type.
template <class In, class Out>
__global__ void __launch_bounds__(kEdgeThreads) gemm_edge_kernel(const EdgeParams p) {
  // (kMaxEdgeColumns, kEdgeLanes, kEdgeRows + 1): the + 1 keeps the row-major mapping's stores
  // (l fastest) on distinct banks.
  __shared__ float partial[kMaxEdgeColumns][kEdgeLanes][kEdgeRows + 1];
  const int t = static_cast<int>(threadIdx.x);
  const int r = p.a_row_major ? t / kEdgeLanes : t % kEdgeRows;
  const int l = p.a_row_major ? t % kEdgeLanes : t / kEdgeRows;
  const std::int64_t row0 = std::int64_t{blockIdx.x} * kEdgeRows;
  float acc[kMaxEdgeColumns] = {};
  if (row0 + r < p.m) {
    const In* a = static_cast<const In*>(p.a) + (row0 + r) * p.a_row;
    const In* b = static_cast<const In*>(p.b) + p.col0 * p.b_col;
    for (int kk = l; kk < p.k; kk += kEdgeLanes) {
      const float av = edge_to_float(a[kk * p.a_k]);
      const In* bk = b + kk * p.b_k;
#pragma unroll
      for (int j = 0; j < kMaxEdgeColumns; ++j) {
        if (j < p.cols) acc[j] = fmaf(av, edge_to_float(bk[j * p.b_col]), acc[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kMaxEdgeColumns; ++j)
    partial[j][l][r] = acc[j];
  __syncthreads();
  if (t >= kMaxEdgeColumns * kEdgeRows) return;
  const int j = t / kEdgeRows, rr = t % kEdgeRows;
  const std::int64_t row = row0 + rr;
  if (j >= p.cols || row >= p.m) return;
  float sum = 0.0f;
  for (int i = 0; i < kEdgeLanes; ++i)
    sum += partial[j][i][rr];
  const std::int64_t col = p.col0 + j;
  float v = p.alpha * sum;
  if (p.beta != 0.0f)
    v = fmaf(p.beta, edge_to_float(static_cast<const Out*>(p.c)[row * p.ldc + col]), v);
  static_cast<Out*>(p.d)[row * p.ldd + col] = edge_from_float<Out>(v);
}

}  // namespace tma::ops::detail::gemm
