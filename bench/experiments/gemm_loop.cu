// gemm_loop: an experiment, not a benchmark of record. Runs one bf16 product (A row-major, B
// column-major, D bf16) back to back for a number of seconds and prints its sustained TFLOP/s, so
// that the SM clock and power under a long run can be sampled beside it (nvidia-smi) and set
// against another library's loop on the same shape (docs/perf-log.md, GEMM v1.5).
//   gemm_loop [m=8192] [n=7168] [k=2048] [seconds=3] [cluster=0: the heuristic's] [config=-1]
//             [pdl=1: GemmTuning::pdl] [workspace=0: 1 = a caller's stream-K workspace]
//             [raster=0: GemmTuning::raster_group, 0 = the default]
//             [stream_k=0: GemmTuning::stream_k, 0 = the heuristic's, 1 off, 2 on]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "experiment.cuh"
#include "tma/ops/gemm.hpp"

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 8192;
  const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 7168;
  const std::int64_t k = argc > 3 ? std::atoll(argv[3]) : 2048;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 3.0;
  tma::ops::GemmTuning tuning;
  tuning.cluster_m = argc > 5 ? std::atoi(argv[5]) : 0;
  tuning.config = argc > 6 ? std::atoi(argv[6]) : -1;
  tuning.pdl = argc > 7 ? std::atoi(argv[7]) != 0 : true;
  tuning.raster_group = argc > 9 ? std::atoi(argv[9]) : 0;
  tuning.stream_k = argc > 10 ? std::atoi(argv[10]) : 0;
  const experiment::Operands ops = experiment::make_operands(m, n, k, 2);
  tma::ops::GemmArgs g = experiment::rc_args(ops, m, n, k);
  void* workspace = nullptr;
  if (argc > 8 && std::atoi(argv[8]) != 0) {
    g.workspace_bytes = tma::ops::gemm_workspace_bytes(g, tma::ops::Path::kTma, tuning);
    if (g.workspace_bytes > 0) {
      experiment::check(cudaMalloc(&workspace, g.workspace_bytes), "workspace");
      g.workspace = workspace;
    }
  }
  cudaEvent_t e0, e1;
  experiment::check(cudaEventCreate(&e0), "event");
  experiment::check(cudaEventCreate(&e1), "event");
  tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, tuning, nullptr);
  experiment::check(cudaDeviceSynchronize(), "warm-up");
  const auto t0 = std::chrono::steady_clock::now();
  long runs = 0;
  experiment::check(cudaEventRecord(e0), "record");
  for (;;) {
    for (int i = 0; i < 20; ++i, ++runs)
      tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, tuning, nullptr);
    experiment::check(cudaEventRecord(e1), "record");
    experiment::check(cudaEventSynchronize(e1), "sync");
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    if (dt.count() >= seconds) break;
  }
  float ms = 0;
  experiment::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
  std::printf("tmakit %lldx%lldx%lld pdl %d workspace %s: %ld runs, %.1f us each, %.1f TFLOP/s\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              tuning.pdl ? 1 : 0, workspace != nullptr ? "caller" : "own", runs, 1e3 * ms / runs,
              2.0 * m * n * k * runs / (ms * 1e-3) / 1e12);
  if (workspace != nullptr) experiment::check(cudaFree(workspace), "free workspace");
  return 0;
}
