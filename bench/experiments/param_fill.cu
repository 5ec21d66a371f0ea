// param_fill: an experiment, not a benchmark of record. What does a kernel's first read of its own
// parameters cost, right at its start, and does it depend on the parameter block's size, on where
// in the block the word lies, or on how long after the start it comes?
// Question (docs/perf-log.md, sessions 20 and 29): the GEMM producer spends a fixed ~1.1-1.5k
// cycles between its setmaxnreg and its first TMA load, whichever of its PDL wait and its schedule
// walk comes first; half of its samples there are constant-bank misses on the first reads of
// Params, which sits at the end of a ~1.3 KiB parameter block (six 128-byte tensor maps first), and
// reading those lines earlier did not move the first load. If the parameter block reached an SM's
// constant cache in one piece some time after the CTA starts, a read of its end would wait for it
// however early it came; if line by line, a first read would cost one miss (const_after_wait:
// 140-156 cycles after the block's first word had arrived).
// One thread per CTA stamps clock64, optionally spins, reads word `idx` (an index the compiler
// cannot fold, so the read is issued after the stamp), branches on it (so the read completes),
// stamps, then reads a word 128 bytes on (another line) the same way.
// (Answer, H100, session 33 call 1: line by line. The first read costs 232-248 cycles (mean over
// 132 CTAs) and the next line's 158, whatever the block's size (256 B, 1,344 B, 4 KiB), the word's
// place in it (its first or its last line), the launch's shape (one warp, or 384 threads in
// 2-CTA clusters with 200 KiB of shared memory) or a 4,000-cycle delay before it. So nothing
// fills the bank after a CTA starts: a few dependent first reads cost ~160-250 cycles each.)
//   param_fill
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "experiment.cuh"

namespace {

template <int kWords>
struct Blob {
  unsigned w[kWords];
};

template <int kWords, int kIdx, int kSpin>
__global__ void first_read(const __grid_constant__ Blob<kWords> p, long long* out) {
  if (threadIdx.x != 0) return;
  const long long t0 = clock64();
  if constexpr (kSpin > 0) {
    while (clock64() - t0 < kSpin) {
    }
  }
  const long long t1 = clock64();
  const int off = static_cast<int>(static_cast<unsigned long long>(t1) >> 62);  // 0
  const unsigned x = p.w[kIdx + off];
  if (x == 0xDEADBEEFu) out[1 << 20] = 1;  // never: the branch waits for the read
  const long long t2 = clock64();
  const unsigned y = p.w[(kIdx + 32) % kWords + off];
  if (y == 0xDEADBEEFu) out[(1 << 20) + 1] = 1;
  const long long t3 = clock64();
  out[2 * blockIdx.x] = t2 - t1;
  out[2 * blockIdx.x + 1] = t3 - t2;
}

struct Stats {
  double mean = 0;
  long long max = 0;
};
Stats stats(const std::vector<long long>& h, int which) {
  Stats s;
  const std::size_t n = h.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    s.mean += static_cast<double>(h[2 * i + which]);
    s.max = std::max(s.max, h[2 * i + which]);
  }
  s.mean /= static_cast<double>(n);
  return s;
}

template <int kWords, int kIdx, int kSpin>
void run(int ctas, bool gemm_like, long long* out) {
  Blob<kWords> p{};
  for (int i = 0; i < kWords; ++i)
    p.w[i] = static_cast<unsigned>(i + 1);
  auto kernel = first_read<kWords, kIdx, kSpin>;
  // The GEMM's launch: 384 threads, 2-CTA clusters, ~200 KiB of dynamic shared memory; or a
  // plain launch of one warp per CTA.
  const int threads = gemm_like ? 384 : 32;
  const int smem = gemm_like ? 200 * 1024 : 0;
  experiment::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                    "smem");
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  if (gemm_like) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  for (int rep = 0; rep < 4; ++rep) {
    experiment::check(cudaLaunchKernelEx(&cfg, kernel, p, out), "launch");
    experiment::check(cudaDeviceSynchronize(), "run");
    if (rep == 0) continue;  // the first launch may load the module
    std::vector<long long> h(2 * static_cast<std::size_t>(ctas));
    experiment::check(
        cudaMemcpy(h.data(), out, sizeof(long long) * h.size(), cudaMemcpyDeviceToHost), "copy");
    const Stats a = stats(h, 0), b = stats(h, 1);
    std::printf(
        "param_fill: %4d B block, word at byte %4d, spin %4d, %-9s %3d CTAs: first read %5.0f "
        "mean %5lld max; next line %5.0f mean %5lld max (cycles)\n",
        kWords * 4, kIdx * 4, kSpin, gemm_like ? "gemm-like" : "plain", ctas, a.mean, a.max, b.mean,
        b.max);
  }
}

template <int kWords, int kSpin>
void sizes(int sms, long long* out) {
  for (const bool gemm_like : {false, true}) {
    run<kWords, 0, kSpin>(sms, gemm_like, out);
    run<kWords, kWords - 40, kSpin>(sms, gemm_like, out);
  }
}

}  // namespace

int main() {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, sizeof(long long) * ((1 << 20) + 2)), "malloc");
  sizes<64, 0>(sms, out);      // 256 B
  sizes<336, 0>(sms, out);     // 1344 B: the GEMM's maps + Params
  sizes<1024, 0>(sms, out);    // 4 KiB
  sizes<336, 4000>(sms, out);  // the same, read 4,000 cycles after the start
  return 0;
}
