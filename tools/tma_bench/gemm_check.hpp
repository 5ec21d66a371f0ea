// tma-bench gemm: how a GEMM result is verified. There is no exact answer to compare with (each
// implementation sums in its own order), so a result passes when
//   1. every element of D was written: D was poisoned (kernels.hpp) before the run and no element
//      may still hold the poison, and
//   2. kGemmSamples elements at random positions are within kGemmBound of an fp64 dot product of
//      the same bf16 inputs: sqrt(sum (d - ref)^2 / sum ref^2) over the samples.
// The bound: rounding D to bf16 alone is up to 2^-8 = 3.9e-3 relative per element (about 2.3e-3
// RMS); fp32 accumulation adds far less for these K. 8e-3 passes every correct result and fails
// a wrong tile, a missed K block or a swapped operand by orders of magnitude.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "tma/ops/gemm.hpp"

namespace tma::bench {

inline constexpr int kGemmSamples = 1024;
inline constexpr double kGemmBound = 8e-3;

struct GemmVerdict {
  std::uint64_t unwritten = 0;        // elements of D still holding the poison
  std::int64_t first_unwritten = -1;  // row * n + col of the lowest; -1 when none
  double rel_error = 0;               // over the samples
  // The sample farthest from its reference.
  std::int64_t worst_row = -1, worst_col = -1;
  double worst_got = 0, worst_want = 0;
};

// Checks D of `g` (bf16 A, B and D; any layouts) as above, on `stream`, which it synchronizes.
// Sample positions depend on `seed`. Throws std::logic_error for other dtypes (a bench bug).
GemmVerdict verify_gemm(const ops::GemmArgs& g, std::uint64_t seed, cudaStream_t stream);

// What is wrong, for the mismatch line ("3 of 16777216 elements of D not written (first at row
// 5, column 17); ..."); empty when the verdict passes.
std::string gemm_failure(const GemmVerdict& v, const ops::GemmArgs& g);

}  // namespace tma::bench
