// launch_overhead: an experiment, not a benchmark of record. What does a launch shaped like the
// GEMM's cost on the GPU when the kernel does (almost) nothing?
// Question (docs/perf-log.md, session 29): ncu's kernel duration of our GEMM exceeds its CTAs'
// first-entry-to-last-exit span by ~2-3 us (2048^3: 26.3 against 24.3 us). How much of that is
// the launch itself (clusters, 225 KiB of shared memory, ~1.3 KiB of parameters) and how much the
// D writes draining after the last CTA?
//   launch_overhead
// Times, for each variant, 200 launches back to back between two events (after a spin kernel that
// hides the host's enqueue time) and prints the time per launch. Variants: 132 CTAs x 384 threads
// with 225 KiB / 0 KiB of dynamic shared memory, in clusters of 2 / without, with the GEMM's
// parameter size (6 x 128-byte tensor maps + 512 bytes) or 8 bytes; and the 225 KiB cluster-2
// variant writing 32 KiB per CTA (4.2 MB in all) with st.global.v4 before it exits.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "experiment.cuh"
#include "kernels.hpp"

namespace {

struct alignas(64) FakeMap {
  unsigned char bytes[128];
};
struct BigParams {
  FakeMap maps[6];
  unsigned char rest[512];
};

template <bool kWrite>
__global__ void __launch_bounds__(384, 1)
    big_kernel(const __grid_constant__ BigParams p, uint4* d) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0 && p.rest[0] == 0xEE) smem[0] = 1;  // never: keeps p and smem used
  if constexpr (kWrite) {
    uint4* tile = d + static_cast<std::size_t>(blockIdx.x) * (32 * 1024 / 16);
    if (threadIdx.x < 128) {
      for (int i = threadIdx.x; i < 32 * 1024 / 16; i += 128)
        tile[i] = make_uint4(i, blockIdx.x, 1, 2);
    }
  }
}

__global__ void __launch_bounds__(384, 1) small_kernel(int* flag) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0 && flag != nullptr && *flag == 12345) smem[0] = 1;
}

}  // namespace

int main() {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  const int clock_khz = experiment::device_attribute(cudaDevAttrClockRate, "clock");
  const int big_smem = 225 * 1024;
  experiment::check(cudaFuncSetAttribute(big_kernel<false>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem),
                    "smem attribute");
  experiment::check(
      cudaFuncSetAttribute(big_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem),
      "smem attribute");
  experiment::check(
      cudaFuncSetAttribute(small_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem),
      "smem attribute");
  uint4* d = nullptr;
  experiment::check(cudaMalloc(&d, static_cast<std::size_t>(sms) * 32 * 1024), "malloc D");
  BigParams params{};
  cudaEvent_t e0, e1;
  experiment::check(cudaEventCreate(&e0), "event");
  experiment::check(cudaEventCreate(&e1), "event");
  constexpr int kLaunches = 200;

  struct Variant {
    const char* name;
    int kind;  // 0 big params, 1 big params + writes, 2 small params
    int smem;
    int cluster;
  };
  const Variant variants[] = {
      {"big params, 225 KiB, cluster 2", 0, big_smem, 2},
      {"big params, 225 KiB, no cluster", 0, big_smem, 1},
      {"big params, 0 KiB, cluster 2", 0, 0, 2},
      {"8-byte params, 225 KiB, cluster 2", 2, big_smem, 2},
      {"8-byte params, 0 KiB, no cluster", 2, 0, 1},
      {"big params, 225 KiB, cluster 2, 32 KiB st.global per CTA", 1, big_smem, 2},
  };
  for (int rep = 0; rep < 2; ++rep) {
    for (const Variant& v : variants) {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(static_cast<unsigned>(sms / 2 * 2));
      cfg.blockDim = dim3(384);
      cfg.dynamicSmemBytes = static_cast<std::size_t>(v.smem);
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = static_cast<unsigned>(v.cluster);
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      auto launch = [&] {
        if (v.kind == 0) {
          experiment::check(cudaLaunchKernelEx(&cfg, big_kernel<false>, params, d), "launch");
        } else if (v.kind == 1) {
          experiment::check(cudaLaunchKernelEx(&cfg, big_kernel<true>, params, d), "launch");
        } else {
          experiment::check(cudaLaunchKernelEx(&cfg, small_kernel, static_cast<int*>(nullptr)),
                            "launch");
        }
      };
      for (int i = 0; i < 10; ++i)
        launch();  // warm-up
      // ~5 ms of queue ahead: tma-bench's spin kernel (tools/tma_bench/kernels.hpp).
      tma::bench::launch_spin(nullptr, static_cast<long long>(clock_khz) * 5);
      experiment::check(cudaEventRecord(e0), "record");
      for (int i = 0; i < kLaunches; ++i)
        launch();
      experiment::check(cudaEventRecord(e1), "record");
      experiment::check(cudaEventSynchronize(e1), "sync");
      float ms = 0;
      experiment::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
      std::printf("launch_overhead: %-58s %6.2f us per launch (%d back to back)\n", v.name,
                  ms * 1e3 / kLaunches, kLaunches);
    }
  }
  return 0;
}
