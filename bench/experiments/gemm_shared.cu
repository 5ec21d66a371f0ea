// gemm_shared: an experiment, not a benchmark of record (docs/perf-log.md, session 18). The GEMM
// on a GPU it shares: another stream's kernel ("hog": one block per SM, held by its shared memory,
// spinning for `hog_us`) occupies `hog_sms` SMs when the GEMM is launched, so the persistent
// grid's CTAs on those SMs start late. With the static tile order their whole share of the tiles
// waits; with dynamic claims (GemmTuning::dynamic_tiles = 2) the other clusters take them. Prints
// the time from the hog's launch to the GEMM's end for both, alternating, median of `reps`.
//   gemm_shared [m=8192] [n=7168] [k=2048] [hog_us=100] [reps=30] [hog_sms list=0,16,33,66]
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "experiment.cuh"
#include "tma/ops/gemm.hpp"

namespace {

constexpr int kHogSmem = 200 * 1024;  // one block per SM, and no GEMM CTA beside it

__global__ void hog_kernel(long long ns) {
  extern __shared__ unsigned char smem[];
  const unsigned long long t0 = cuda::ptx::get_sreg_globaltimer();
  while (cuda::ptx::get_sreg_globaltimer() - t0 < static_cast<unsigned long long>(ns)) {
  }
  if (threadIdx.x == 0) smem[0] = 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 8192;
  const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 7168;
  const std::int64_t k = argc > 3 ? std::atoll(argv[3]) : 2048;
  const double hog_us = argc > 4 ? std::atof(argv[4]) : 100.0;
  const int reps = argc > 5 ? std::atoi(argv[5]) : 30;
  std::vector<int> hogs{0, 16, 33, 66};
  if (argc > 6) {
    hogs.clear();
    std::stringstream ss(argv[6]);
    for (std::string item; std::getline(ss, item, ',');)
      hogs.push_back(std::atoi(item.c_str()));
  }
  experiment::check(
      cudaFuncSetAttribute(hog_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kHogSmem),
      "hog smem");
  const experiment::Operands ops = experiment::make_operands(m, n, k, 2);
  tma::ops::GemmArgs g = experiment::rc_args(ops, m, n, k);
  tma::ops::GemmTuning dyn;
  dyn.dynamic_tiles = 2;
  dyn.pdl = false;
  tma::ops::GemmTuning fixed;
  fixed.dynamic_tiles = 1;
  fixed.pdl = false;
  // One workspace for both (the dynamic one needs it; the static one only if it splits).
  const std::size_t ws_bytes =
      std::max(tma::ops::gemm_workspace_bytes(g, tma::ops::Path::kTma, dyn),
               tma::ops::gemm_workspace_bytes(g, tma::ops::Path::kTma, fixed));
  void* ws = nullptr;
  experiment::check(cudaMalloc(&ws, ws_bytes), "workspace");
  g.workspace = ws;
  g.workspace_bytes = ws_bytes;
  cudaStream_t s_hog, s_gemm;
  experiment::check(cudaStreamCreateWithFlags(&s_hog, cudaStreamNonBlocking), "stream");
  experiment::check(cudaStreamCreateWithFlags(&s_gemm, cudaStreamNonBlocking), "stream");
  cudaEvent_t e0, e1;
  experiment::check(cudaEventCreate(&e0), "event");
  experiment::check(cudaEventCreate(&e1), "event");
  tma::ops::GemmPlan plan{};
  tma::ops::gemm_tuned(g, s_gemm, tma::ops::Path::kTma, dyn, &plan);
  tma::ops::gemm_tuned(g, s_gemm, tma::ops::Path::kTma, fixed, nullptr);
  experiment::check(cudaStreamSynchronize(s_gemm), "warm-up");
  std::printf(
      "gemm_shared %lldx%lldx%lld: config %d cluster %d, %d CTAs, stream-K tiles %d, hog %.0f us\n",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), plan.config,
      plan.cluster_m, plan.ctas, plan.stream_k_tiles, hog_us);
  for (const int hog : hogs) {
    std::vector<float> t[2];
    for (int rep = 0; rep < reps; ++rep) {
      for (int mode = 0; mode < 2; ++mode) {
        experiment::check(cudaEventRecord(e0, s_hog), "record");
        if (hog > 0) {
          hog_kernel<<<hog, 128, kHogSmem, s_hog>>>(static_cast<long long>(hog_us * 1e3));
          experiment::check(cudaGetLastError(), "hog launch");
        }
        experiment::check(cudaStreamWaitEvent(s_gemm, e0), "wait");
        tma::ops::gemm_tuned(g, s_gemm, tma::ops::Path::kTma, mode == 0 ? fixed : dyn, nullptr);
        experiment::check(cudaEventRecord(e1, s_gemm), "record");
        experiment::check(cudaDeviceSynchronize(), "sync");
        float ms = 0;
        experiment::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        t[mode].push_back(ms * 1e3f);
      }
    }
    for (auto& v : t)
      std::sort(v.begin(), v.end());
    const float st = t[0][t[0].size() / 2], dy = t[1][t[1].size() / 2];
    std::printf("hog %3d SMs: static %7.1f us  dynamic %7.1f us  dynamic / static %.3f\n", hog, st,
                dy, dy / st);
  }
  experiment::check(cudaFree(ws), "free");
  return 0;
}
