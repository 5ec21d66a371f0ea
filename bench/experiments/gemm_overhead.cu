// gemm_overhead: an experiment, not a benchmark of record. How much time does tma::ops::gemm
// spend per output tile outside the k-loop (epilogue, pipeline drain and refill)? Times
// M = N = 8192 (2048 tiles of 128 x 256 or 4096 of 128 x 128: 15.5 or 31 waves on 132 SMs) at K =
// 64 .. 4096, data-parallel, config 0, cluster 2, bf16 and fp32 output (fp32: twice the epilogue's
// bytes), and fits time per wave = a K + b: b is the per-tile overhead, a the k-block rate.
//   gemm_overhead [reps=20] [config=0]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "experiment.cuh"
#include "tma/ops/gemm.hpp"

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int config = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::int64_t m = 8192, n = 8192, kmax = 4096;
  // D as fp32 (the larger of the two outputs timed).
  const experiment::Operands ops = experiment::make_operands(m, n, kmax, 4);
  cudaEvent_t e0, e1;
  experiment::check(cudaEventCreate(&e0), "event");
  experiment::check(cudaEventCreate(&e1), "event");
  if (config < 0 || config >= tma::ops::kNumGemmConfigs) {
    std::fprintf(stderr, "config %d is not in kGemmConfigs (0..%d)\n", config,
                 tma::ops::kNumGemmConfigs - 1);
    return 2;
  }
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SM count");
  // Cluster tiles (2 tile rows) over the clusters (one CTA per SM): waves of tiles per CTA.
  const double cluster_tiles = (m / 128) * (n / tma::ops::kGemmConfigs[config].block_n) / 2.0;
  const double waves = cluster_tiles / (sms / 2);
  std::printf("M = N = 8192, config %d, cluster 2, data-parallel; %.2f waves; %d reps, median\n",
              config, waves, reps);
  for (const tma::DataType out : {tma::DataType::kBFloat16, tma::DataType::kFloat32}) {
    std::vector<double> ks, per_wave;
    for (const std::int64_t k : {64, 128, 256, 512, 1024, 2048, 4096}) {
      // A and B hold kmax columns; with lda = ldb = k the product reads their first m k / n k.
      const tma::ops::GemmArgs g = experiment::rc_args(ops, m, n, k, out);
      tma::ops::GemmTuning t;
      t.config = config;
      t.cluster_m = 2;
      t.stream_k = 1;
      std::vector<float> ms;
      for (int r = -3; r < reps; ++r) {
        experiment::check(cudaEventRecord(e0), "record");
        tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, t, nullptr);
        experiment::check(cudaEventRecord(e1), "record");
        experiment::check(cudaEventSynchronize(e1), "sync");
        float x = 0;
        experiment::check(cudaEventElapsedTime(&x, e0, e1), "elapsed");
        if (r >= 0) ms.push_back(x);
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      ks.push_back(static_cast<double>(k));
      per_wave.push_back(med * 1e3 / std::ceil(waves));
      std::printf("  %s K = %5lld: %8.1f us, %6.1f TFLOP/s, %7.2f us per wave\n",
                  out == tma::DataType::kFloat32 ? "fp32" : "bf16", static_cast<long long>(k),
                  med * 1e3, 2.0 * m * n * k / (med * 1e-3) / 1e12, per_wave.back());
    }
    // Least squares per_wave = a K + b over K >= 256 (the smallest K are launch-bound).
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int cnt = 0;
    for (std::size_t i = 0; i < ks.size(); ++i) {
      if (ks[i] < 256) continue;
      sx += ks[i], sy += per_wave[i], sxx += ks[i] * ks[i], sxy += ks[i] * per_wave[i];
      ++cnt;
    }
    const double slope = (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx);
    const double icpt = (sy - slope * sx) / cnt;
    std::printf(
        "  fit: per wave = %.4f us x K + %.2f us (a k-block of 64: %.3f us; overhead = %.1f "
        "k-blocks)\n",
        slope, icpt, slope * 64, icpt / (slope * 64));
  }
  return 0;
}
