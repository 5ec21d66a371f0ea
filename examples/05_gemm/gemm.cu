// Example 05: a matrix product with tma::ops::gemm, the library's TMA + wgmma GEMM.
//
// D = A B^T as a linear layer computes it: activations A (M x K, row-major) times a weight matrix
// stored as PyTorch's nn.Linear stores it (N x K, row-major), which is B (K x N) column-major.
// bf16 in, fp32 accumulation, bf16 out. The shape is ragged (no extent a multiple of a tile):
// TMA zero-fills the partial tiles on load and clips them on store.
//
// What the example shows:
//   1. bad input is refused before anything runs: a leading dimension that breaks TMA's 16-byte
//      rule throws tma::Error naming the argument, its value and the fix, and D stays untouched;
//   2. the product itself, with the plan gemm chose (tile, cluster, stream-K, plain kernel);
//   3. a check against an fp64 reference of sampled outputs, ||D - ref|| / ||ref|| within
//      bf16's rounding (2^-8), after D was filled with NaN so that an unwritten output fails;
//   4. tuning: the plans tma::ops::gemm_candidates offers (the first is the one gemm ran), each
//      timed with CUDA events, the fastest kept, as one would time cuBLASLt's heuristic
//      algorithms. (Timed here back to back on the same, L2-resident buffers; time them the way
//      the product runs in the application.)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.hpp"
#include "tma/host/error.hpp"
#include "tma/ops/gemm.hpp"

namespace {

constexpr std::int64_t kM = 1000, kN = 777, kK = 1000;  // ragged: no extent a multiple of 64

std::vector<__nv_bfloat16> random_bf16(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<__nv_bfloat16> v(n);
  for (auto& x : v)
    x = __float2bfloat16(dist(gen));
  return v;
}

}  // namespace

int main() {
  if (!example::have_hopper()) return example::kExitSkip;

  // Leading dimensions in elements: rows of A and of the weights padded to a multiple of 8
  // (16 bytes of bf16), as TMA needs; D likewise.
  const std::int64_t lda = 1000, ldw = 1000, ldd = 784;
  const auto a = random_bf16(static_cast<std::size_t>(kM * lda), 1);
  const auto w = random_bf16(static_cast<std::size_t>(kN * ldw), 2);  // N x K: B column-major

  __nv_bfloat16 *d_a = nullptr, *d_w = nullptr, *d_d = nullptr;
  const std::size_t d_bytes = static_cast<std::size_t>(kM * ldd) * sizeof(__nv_bfloat16);
  EXAMPLE_CHECK(cudaMalloc(&d_a, a.size() * sizeof(__nv_bfloat16)));
  EXAMPLE_CHECK(cudaMalloc(&d_w, w.size() * sizeof(__nv_bfloat16)));
  EXAMPLE_CHECK(cudaMalloc(&d_d, d_bytes));
  EXAMPLE_CHECK(
      cudaMemcpy(d_a, a.data(), a.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  EXAMPLE_CHECK(
      cudaMemcpy(d_w, w.data(), w.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  EXAMPLE_CHECK(cudaMemset(d_d, 0xFF, d_bytes));  // NaN in bf16: an unwritten output shows

  tma::ops::GemmArgs g;
  g.m = kM, g.n = kN, g.k = kK;
  g.a = d_a, g.a_dtype = tma::DataType::kBFloat16;
  g.a_layout = tma::ops::MatrixLayout::kRowMajor, g.lda = lda;
  g.b = d_w, g.b_dtype = tma::DataType::kBFloat16;
  g.b_layout = tma::ops::MatrixLayout::kColMajor, g.ldb = ldw;
  g.d = d_d, g.d_dtype = tma::DataType::kBFloat16, g.ldd = ldd;

  // 1. A leading dimension of 1001 elements (2002 bytes) breaks TMA's 16-byte rule: refused.
  bool refused = false;
  {
    tma::ops::GemmArgs bad = g;
    bad.lda = 1001;
    try {
      tma::ops::gemm(bad);
    } catch (const tma::Error& e) {
      refused = true;
      std::printf("refused as expected: %s\n", e.what());
    }
  }
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> untouched(static_cast<std::size_t>(kM * ldd));
  EXAMPLE_CHECK(cudaMemcpy(untouched.data(), d_d, d_bytes, cudaMemcpyDeviceToHost));
  bool still_poisoned = true;
  for (std::uint16_t bits : untouched)
    still_poisoned = still_poisoned && bits == 0xFFFF;

  // 2. The product, with the plan it ran (gemm_tuned with default tuning is gemm plus the plan).
  tma::ops::GemmPlan plan{};
  try {
    tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, tma::ops::GemmTuning{}, &plan);
  } catch (const tma::Error& e) {
    std::printf("FAIL: gemm threw: %s\n", e.what());
    return 1;
  }
  EXAMPLE_CHECK_LAUNCH();
  const tma::ops::GemmConfig& cfg = tma::ops::kGemmConfigs[plan.config];
  std::printf(
      "D = A W^T, %lld x %lld x %lld: tile 128 x %d%s, cluster %d, %d CTAs, %d stream-K "
      "tiles, %d edge columns, %s kernel\n",
      static_cast<long long>(kM), static_cast<long long>(kN), static_cast<long long>(kK),
      cfg.block_n, cfg.pingpong ? " ping-pong" : "", plan.cluster_m, plan.ctas, plan.stream_k_tiles,
      plan.edge_columns, plan.plain_epilogue ? "plain" : "general");

  // 3. Sampled outputs against fp64 dot products of the same bf16 inputs.
  std::vector<__nv_bfloat16> d(static_cast<std::size_t>(kM * ldd));
  EXAMPLE_CHECK(cudaMemcpy(d.data(), d_d, d_bytes, cudaMemcpyDeviceToHost));
  std::mt19937 pick(3);
  double err2 = 0, ref2 = 0;
  bool finite = true;
  for (int s = 0; s < 4096; ++s) {
    const std::int64_t i = static_cast<std::int64_t>(pick() % kM);
    const std::int64_t j = static_cast<std::int64_t>(pick() % kN);
    double ref = 0;
    for (std::int64_t k = 0; k < kK; ++k)
      ref += static_cast<double>(__bfloat162float(a[static_cast<std::size_t>(i * lda + k)])) *
             static_cast<double>(__bfloat162float(w[static_cast<std::size_t>(j * ldw + k)]));
    const double got = __bfloat162float(d[static_cast<std::size_t>(i * ldd + j)]);
    finite = finite && std::isfinite(got);
    err2 += (got - ref) * (got - ref);
    ref2 += ref * ref;
  }
  // Every element of D written (none left NaN) and nothing in the row padding past column n.
  std::size_t unwritten = 0, padding_written = 0;
  for (std::int64_t i = 0; i < kM; ++i)
    for (std::int64_t j = 0; j < ldd; ++j) {
      const float v = __bfloat162float(d[static_cast<std::size_t>(i * ldd + j)]);
      if (j < kN && std::isnan(v)) ++unwritten;
      if (j >= kN && !std::isnan(v)) ++padding_written;
    }
  const double rel = std::sqrt(err2 / ref2);
  const double bound = std::ldexp(1.0, -8);
  std::printf(
      "||D - ref|| / ||ref|| = %.2e over 4096 sampled outputs (bound %.1e); %zu unwritten, "
      "%zu padding elements written\n",
      rel, bound, unwritten, padding_written);

  // 4. The candidate plans, each timed over 20 launches after 3 untimed ones; the fastest kept.
  std::vector<tma::ops::GemmTuning> candidates;
  try {
    candidates = tma::ops::gemm_candidates(g, tma::ops::Path::kTma);
  } catch (const tma::Error& e) {
    std::printf("FAIL: gemm_candidates threw: %s\n", e.what());
    return 1;
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  EXAMPLE_CHECK(cudaEventCreate(&start));
  EXAMPLE_CHECK(cudaEventCreate(&stop));
  std::size_t fastest = 0;
  float fastest_ms = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const tma::ops::GemmTuning& t = candidates[i];
    try {
      for (int r = 0; r < 3; ++r)
        tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, t);
      EXAMPLE_CHECK(cudaEventRecord(start));
      for (int r = 0; r < 20; ++r)
        tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, t);
      EXAMPLE_CHECK(cudaEventRecord(stop));
    } catch (const tma::Error& e) {
      std::printf("FAIL: candidate %zu threw: %s\n", i, e.what());
      return 1;
    }
    EXAMPLE_CHECK_LAUNCH();
    EXAMPLE_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EXAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));
    ms /= 20;
    // (config is -1 only where no main kernel runs: D's rows under 16 bytes.)
    const tma::ops::GemmConfig& c = tma::ops::kGemmConfigs[t.config >= 0 ? t.config : 0];
    std::printf("candidate %zu: config %d (%d x %d%s%s), cluster %d, %s: %.2f us\n", i, t.config,
                tma::ops::gemm_config_block_m(c), c.block_n, c.swap_ab ? " swapped" : "",
                c.pingpong ? " ping-pong" : "", t.cluster_m,
                t.stream_k == 2 ? "split along K" : "data-parallel", 1e3 * ms);
    if (i == 0 || ms < fastest_ms) {
      fastest = i;
      fastest_ms = ms;
    }
  }
  std::printf("fastest: candidate %zu of %zu\n", fastest, candidates.size());
  EXAMPLE_CHECK(cudaEventDestroy(start));
  EXAMPLE_CHECK(cudaEventDestroy(stop));

  EXAMPLE_CHECK(cudaFree(d_a));
  EXAMPLE_CHECK(cudaFree(d_w));
  EXAMPLE_CHECK(cudaFree(d_d));
  const bool ok =
      refused && still_poisoned && finite && rel <= bound && unwritten == 0 && padding_written == 0;
  if (!refused) std::printf("the bad leading dimension was not refused\n");
  if (!still_poisoned) std::printf("the refused call wrote D\n");
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
