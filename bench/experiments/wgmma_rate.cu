// wgmma_rate: an experiment, not a benchmark of record. How fast do the tensor cores of one SM
// run wgmma m64nNk16 (bf16, f32 accumulators, both operands in shared memory, SWIZZLE_128B
// K-major tiles) when 1, 2 or 3 warpgroups issue them, the way the GEMM's k-loop does (per
// k-block: fence, 4 K steps x `halves` wgmma, commit, wait for the previous k-block's group)?
// Question it answered (docs/perf-log.md, GEMM v1.5): can one warpgroup alone keep the tensor
// cores busy, i.e. can a second warpgroup's epilogue hide under the first one's math?
//   wgmma_rate [k-blocks per warpgroup = 4096] [variant: run only it, 2 warpgroups]
//   wgmma_rate K copy [N]  session 21: one warpgroup's m64n256k16 x1 and m64n128k16 x2 A halves
//                          k-loops alone and with one more warp streaming 32 KiB bulk copies (4
//                          in flight; cp.async.bulk, an L2-resident 16 MiB source) into another
//                          part of shared memory as fast as they complete, as the GEMM's TMA loads
//                          write its stages: do those writes slow the wgmma's shared-memory reads?
//                          N: only the first N CTAs copy (default all SMs).
// One CTA per SM (132 on an H100 / H200), no loads: the operands are random bf16 in shared memory.
// Prints, per variant, cycles per k-block per warpgroup and the SM's dense FLOP per cycle
// (H100 / H200 datasheet peak: 989.4 TFLOP/s / (132 SMs x 1.83 GHz) = 4,096).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "experiment.cuh"
#include "tma/device.cuh"
#include "tma/device/wgmma.hpp"

namespace {

constexpr int kAtomBytes = 64 * 128;

constexpr std::uint32_t kCopyChunk = 32 * 1024;   // one GEMM stage of 128 x 128
constexpr std::uint32_t kCopyRing = 64 * 1024;    // the copy buffers start here
constexpr std::uint32_t kCopyDepth = 4;           // copies in flight (4 x 32 KiB after 64 KiB)
constexpr std::uint32_t kCopySource = 16u << 20;  // L2-resident source

// copy_src != nullptr: warp 11 (the last of warpgroup 2) streams kCopyChunk bulk copies from
// copy_src into kCopyDepth buffers at kCopyRing, each issued when the copy kCopyDepth before it
// has landed, until warpgroup 0 is done; it records the bytes and cycles in copied[2 * block].
template <int kN, int kHalves, bool kSplitB = false>
__global__ void __launch_bounds__(384, 1)
    rate_kernel(const unsigned short* fill, int warpgroups, int k_blocks, long long* cycles,
                float* sink, const unsigned char* copy_src = nullptr, long long* copied = nullptr,
                int copy_ctas = 0) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tma::Barrier copy_bar[kCopyDepth];
  __shared__ volatile int done;
  // A: kHalves atoms (64 rows each), B: kN / 64 atoms (rounded up); random bf16 from `fill`.
  constexpr int kBytes = (kHalves + kHalves * ((kN + 63) / 64)) * kAtomBytes;
  for (int i = static_cast<int>(threadIdx.x); i < kBytes / 2; i += static_cast<int>(blockDim.x))
    reinterpret_cast<unsigned short*>(smem)[i] = fill[i];
  if (threadIdx.x == 0) {
    for (tma::Barrier& b : copy_bar)
      b.init(1);
    done = 0;
    tma::fence_barrier_init();
  }
  tma::fence_proxy_async_shared();
  __syncthreads();
  const int wg = static_cast<int>(threadIdx.x) / 128;
  if (copy_src != nullptr && static_cast<int>(blockIdx.x) < copy_ctas && threadIdx.x == 352) {
    tma::Phase phase[kCopyDepth];
    const long long c0 = clock64();
    long long bytes = 0;
    std::uint32_t i = 0;
    for (; done == 0; ++i) {
      const std::uint32_t b = i % kCopyDepth;
      if (i >= kCopyDepth) copy_bar[b].wait_next(phase[b]);
      const std::uint32_t chunk = (blockIdx.x * 37u + i) % (kCopySource / kCopyChunk);
      copy_bar[b].arrive_expect_tx(kCopyChunk);
      tma::bulk_load(smem + kCopyRing + b * kCopyChunk, copy_src + chunk * kCopyChunk, kCopyChunk,
                     copy_bar[b]);
      bytes += kCopyChunk;
    }
    for (std::uint32_t j = i >= kCopyDepth ? i - kCopyDepth : 0; j < i; ++j)
      copy_bar[j % kCopyDepth].wait_next(phase[j % kCopyDepth]);
    copied[2 * blockIdx.x] = bytes;
    copied[2 * blockIdx.x + 1] = clock64() - c0;
    return;
  }
  if (wg >= warpgroups) return;
  using Tile = tma::SwizzledTile128<tma::MatrixMajor::kK>;
  const std::uint32_t a = tma::ptx::smem_addr(smem);
  const std::uint32_t b = a + kHalves * kAtomBytes;
  float acc[kHalves][kN / 2];
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
#pragma unroll
    for (int r = 0; r < kN / 2; ++r)
      acc[h][r] = 0.0f;
  }
  tma::named_barrier_sync(1, static_cast<std::uint32_t>(128 * warpgroups));
  const long long t0 = clock64();
  for (int kb = 0; kb < k_blocks; ++kb) {
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
      tma::warpgroup_fence_accumulators(acc[h]);
    tma::warpgroup_arrive();
#pragma unroll
    for (int kk = 0; kk < Tile::kKSteps; ++kk) {
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        // kSplitB: every half the same A atom and its own kN columns of B (a 64 x (kHalves kN)
        // tile); else its own A atom and the same B (a (64 kHalves) x kN tile).
        const std::uint32_t at = kSplitB ? a : a + h * kAtomBytes;
        const std::uint32_t bt = kSplitB ? b + h * (kN / 64) * kAtomBytes : b;
        tma::wgmma<kN, false, tma::MatrixMajor::kK, tma::MatrixMajor::kK>(
            acc[h], Tile::descriptor(at, kk), Tile::descriptor(bt, kk), true);
      }
    }
    tma::warpgroup_commit();
    tma::warpgroup_wait<1>();
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
      tma::warpgroup_fence_accumulators(acc[h]);
  }
  tma::warpgroup_wait<0>();
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
    tma::warpgroup_fence_accumulators(acc[h]);
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
#pragma unroll
    for (int r = 0; r < kN / 2; ++r)
      s += acc[h][r];
  }
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 3 + wg] = t1 - t0;
  if (threadIdx.x == 0) done = 1;
  if (s == 1234.5f) *sink = s;  // keeps the math alive
}

template <int kN, int kHalves, bool kSplitB = false>
void run(const char* name, int warpgroups, int k_blocks, int sms, const unsigned short* fill,
         long long* cycles, float* sink, const unsigned char* copy_src = nullptr,
         long long* copied = nullptr, int copy_ctas = 0) {
  constexpr int kSmem = (kHalves + kHalves * ((kN + 63) / 64)) * kAtomBytes;
  auto kernel = rate_kernel<kN, kHalves, kSplitB>;
  // Ask for more shared memory than the kernel uses: one CTA per SM.
  const int smem = 200 * 1024;
  static_assert(kSmem <= static_cast<int>(kCopyRing), "operands fit below the copy buffers");
  static_assert(kCopyRing + kCopyDepth * kCopyChunk <= 200 * 1024, "copy buffers fit");
  experiment::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                    "cudaFuncSetAttribute");
  experiment::check(cudaMemset(cycles, 0, sizeof(long long) * 3 * sms), "cudaMemset");
  if (copied != nullptr)
    experiment::check(cudaMemset(copied, 0, sizeof(long long) * 2 * sms), "cudaMemset");
  kernel<<<sms, 384, smem>>>(fill, warpgroups, k_blocks, cycles, sink, copy_src, copied, copy_ctas);
  experiment::check(cudaGetLastError(), "launch");
  experiment::check(cudaDeviceSynchronize(), "kernel");
  std::vector<long long> c(3 * static_cast<std::size_t>(sms));
  experiment::check(
      cudaMemcpy(c.data(), cycles, c.size() * sizeof(long long), cudaMemcpyDeviceToHost),
      "cudaMemcpy");
  double sum = 0;
  long long worst = 0;
  for (int i = 0; i < sms; ++i) {
    for (int w = 0; w < warpgroups; ++w) {
      sum += static_cast<double>(c[3 * i + w]);
      if (c[3 * i + w] > worst) worst = c[3 * i + w];
    }
  }
  const double mean = sum / (sms * warpgroups);
  const double flop_per_kb = 4.0 * kHalves * 64.0 * kN * 16 * 2;  // one warpgroup's k-block
  std::printf(
      "%-22s warpgroups %d: %7.1f cycles per k-block per warpgroup, SM %6.0f FLOP/cycle "
      "(worst CTA %6.0f)",
      name, warpgroups, mean / k_blocks, flop_per_kb * k_blocks * warpgroups / mean,
      flop_per_kb * k_blocks * warpgroups / static_cast<double>(worst));
  if (copied != nullptr) {
    std::vector<long long> cp(2 * static_cast<std::size_t>(sms));
    experiment::check(
        cudaMemcpy(cp.data(), copied, cp.size() * sizeof(long long), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
    double b = 0, t = 0;
    for (int i = 0; i < copy_ctas && i < sms; ++i)
      b += static_cast<double>(cp[2 * i]), t += static_cast<double>(cp[2 * i + 1]);
    std::printf(", with bulk copies on %d SMs of %.1f B per cycle each (%.0f B per k-block)",
                copy_ctas, b / t, b / t * mean / k_blocks);
  }
  std::printf("\n");
}

// The instruction shapes measured, by index.
constexpr int kVariants = 8;
void run_variant(int v, int warpgroups, int k_blocks, int sms, const unsigned short* fill,
                 long long* cycles, float* sink) {
  switch (v) {
    case 0:
      return run<256, 1>("m64n256k16 x1", warpgroups, k_blocks, sms, fill, cycles, sink);
    case 1:
      return run<192, 1>("m64n192k16 x1", warpgroups, k_blocks, sms, fill, cycles, sink);
    case 2:
      return run<128, 1>("m64n128k16 x1", warpgroups, k_blocks, sms, fill, cycles, sink);
    case 3:
      return run<128, 2>("m64n128k16 x2 A halves", warpgroups, k_blocks, sms, fill, cycles, sink);
    case 4:
      return run<128, 2, true>("m64n128k16 x2 B halves", warpgroups, k_blocks, sms, fill, cycles,
                               sink);
    // Session 30: the per-warpgroup shapes of the 128 x 136 and 128 x 144 tiles, and of a
    // 256 x 64 tile (cuBLASLt's pick at 1024 x 2112 x 7168): with 128 rows per warpgroup, two
    // m64n64k16 sharing B (variant 7); with the operands swapped (D^T = B^T A^T), one m64n128k16
    // per warpgroup (variant 2).
    case 5:
      return run<136, 1>("m64n136k16 x1", warpgroups, k_blocks, sms, fill, cycles, sink);
    case 6:
      return run<144, 1>("m64n144k16 x1", warpgroups, k_blocks, sms, fill, cycles, sink);
    default:
      return run<64, 2>("m64n64k16 x2 A halves", warpgroups, k_blocks, sms, fill, cycles, sink);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int k_blocks = argc > 1 ? std::atoi(argv[1]) : 4096;
  // Optional: only variant v (0 .. kVariants - 1, run_variant) with 2 warpgroups, for a long run
  // beside a power sampler.
  // Or `copy` [N]: the k-loops beside bulk copies into the same SM (below).
  const bool copy_mode = argc > 2 && std::string_view(argv[2]) == "copy";
  const int only = argc > 2 && !copy_mode ? std::atoi(argv[2]) : -1;
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SM count");
  unsigned short* fill = nullptr;
  long long* cycles = nullptr;
  float* sink = nullptr;
  const std::size_t n = 8 * kAtomBytes / 2;
  experiment::check(cudaMalloc(&fill, n * 2), "cudaMalloc");
  experiment::check(cudaMalloc(&cycles, sizeof(long long) * 3 * sms), "cudaMalloc");
  experiment::check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  experiment::fill<<<64, 256>>>(fill, n, 12345u);
  experiment::check(cudaGetLastError(), "fill");
  // How many clusters of 1, 2, 4, 8 CTAs (384 threads, 200 KiB of shared memory: one per SM)
  // can be resident at once: how many SMs a cluster size leaves idle (GPCs of uneven sizes).
  {
    auto kernel = rate_kernel<256, 1>;
    const int smem = 200 * 1024;
    experiment::check(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
        "cudaFuncSetAttribute");
    experiment::check(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
        "cudaFuncSetAttribute(non-portable cluster size)");
    for (const unsigned size : {1u, 2u, 4u, 8u, 16u}) {
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = size;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.gridDim = dim3(size * 64);
      cfg.blockDim = dim3(384);
      cfg.dynamicSmemBytes = smem;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      int clusters = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg);
      std::printf("clusters of %2u CTAs (1 per SM): %s%d resident = %d of %d SMs busy\n", size,
                  e == cudaSuccess ? "" : "query failed, ", clusters,
                  clusters * static_cast<int>(size), sms);
      (void)cudaGetLastError();
    }
  }
  if (copy_mode) {
    unsigned char* src = nullptr;
    long long* copied = nullptr;
    experiment::check(cudaMalloc(&src, kCopySource), "cudaMalloc");
    experiment::check(cudaMemset(src, 1, kCopySource), "cudaMemset");
    experiment::check(cudaMalloc(&copied, sizeof(long long) * 2 * sms), "cudaMalloc");
    // [N]: only the first N CTAs copy (default all). A limit per SM keeps the rate per SM as N
    // falls; a limit of the L2 as a whole raises it.
    const int n = argc > 3 ? std::atoi(argv[3]) : sms;
    run<256, 1>("m64n256k16 x1", 1, k_blocks, sms, fill, cycles, sink);
    run<256, 1>("m64n256k16 x1 + copy", 1, k_blocks, sms, fill, cycles, sink, src, copied, n);
    run<128, 2>("m64n128k16 x2 A halves", 1, k_blocks, sms, fill, cycles, sink);
    run<128, 2>("m64n128k16 x2 + copy", 1, k_blocks, sms, fill, cycles, sink, src, copied, n);
    run<128, 2>("m64n128k16 x2 2 wg", 2, k_blocks, sms, fill, cycles, sink);
    run<128, 2>("m64n128k16 x2 2 wg + copy", 2, k_blocks, sms, fill, cycles, sink, src, copied, n);
    return 0;
  }
  if (only >= 0) {
    run_variant(only, 2, k_blocks, sms, fill, cycles, sink);
    return 0;
  }
  for (int w = 1; w <= 3; ++w) {
    for (int v = 0; v < kVariants; ++v)
      run_variant(v, w, k_blocks, sms, fill, cycles, sink);
  }
  return 0;
}
