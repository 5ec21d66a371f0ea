// cold_code: an experiment, not a benchmark of record. What does running code for the first time
// cost a CTA at its start (instruction fetch through cold caches), per kilobyte of SASS?
// Question (docs/perf-log.md, sessions 20, 29 and 33): the GEMM producer spends a fixed ~1.1-1.5k
// cycles between its setmaxnreg and its first TMA load, whichever of its PDL wait and its schedule
// walk runs first; warming the kernel parameters it reads there did not shorten it (session 29),
// and a parameter line's first read costs ~230 cycles whatever the block's size (param_fill,
// session 33). Instruction fetch of code run for the first time was the remaining suspect, never
// measured. Here one thread per CTA runs a straight block of kSteps x 4 independent IMAD chains
// (kSteps x 4 instructions, 16 bytes each) twice, stamping clock64 around each pass: the first
// pass fetches the block's code cold, the second finds it in the instruction caches.
// (Answer, H100, session 33 calls 2 and 6: nothing to speak of. This version (plain C++ chains,
// call 6): 4 KiB 353 cycles cold against 348 warm, 16 KiB 1,134 against 1,117; the first version
// (the same chains in inline PTX, call 2) 471 / 466 and 1,634 / 1,618; the same with 1 or 132
// CTAs and with the L2 flushed (200 MiB read) before each launch. Straight code streams in ahead
// of execution, so the GEMM producer's fixed cost is not instruction fetch; and gemm_trace's
// producer issued its first load 2,053-2,064 cycles after entry with the code and parameters in
// L2 or not.)
//   cold_code
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "experiment.cuh"

namespace {

template <int kSteps>
__device__ __forceinline__ void block(unsigned& a, unsigned& b, unsigned& c, unsigned& d) {
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    // x * x + 1 per chain: nothing for the compiler to fold (one IMAD each, SASS).
    a = a * a + 1;
    b = b * b + 1;
    c = c * c + 1;
    d = d * d + 1;
  }
}

template <int kSteps>
__global__ void run_block(unsigned seed, long long* out) {
  if (threadIdx.x != 0) return;
  unsigned a = seed, b = seed + 1, c = seed + 2, d = seed + 3;
  long long t[3];
  // The same code twice: a loop of two passes over one copy of the block.
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    t[pass] = clock64();
    // The stamp's top bits (0, unknown to the compiler) enter the chains: the block cannot be
    // computed before the stamp.
    a ^= static_cast<unsigned>(static_cast<unsigned long long>(t[pass]) >> 62);
    block<kSteps>(a, b, c, d);
    // Wait for the chains so that the stamp comes after them.
    if ((a ^ b ^ c ^ d) == 0xDEADBEEFu) out[1 << 20] = 1;
  }
  t[2] = clock64();
  out[2 * blockIdx.x] = t[1] - t[0];
  out[2 * blockIdx.x + 1] = t[2] - t[1];
}

// Reads n words (the L2 evicted: the code then comes from DRAM, as after tma-bench's rotation).
__global__ void evict(const uint4* p, std::size_t n, unsigned* sink) {
  uint4 acc{};
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = p[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
  }
  if ((acc.x ^ acc.y) == 0xDEADBEEFu) *sink = 1;
}

template <int kSteps>
void measure(int ctas, long long* out, const uint4* flush, std::size_t flush_words) {
  for (int rep = 0; rep < 4; ++rep) {
    if (flush != nullptr) {
      evict<<<1024, 256>>>(flush, flush_words, reinterpret_cast<unsigned*>(out + (1 << 20)));
      experiment::check(cudaGetLastError(), "evict");
    }
    run_block<kSteps><<<ctas, 128>>>(static_cast<unsigned>(rep + 7), out);
    experiment::check(cudaGetLastError(), "launch");
    experiment::check(cudaDeviceSynchronize(), "run");
    if (rep == 0) continue;
    std::vector<long long> h(2 * static_cast<std::size_t>(ctas));
    experiment::check(
        cudaMemcpy(h.data(), out, sizeof(long long) * h.size(), cudaMemcpyDeviceToHost), "copy");
    double cold = 0, warm = 0;
    long long cold_max = 0;
    for (int i = 0; i < ctas; ++i) {
      cold += static_cast<double>(h[2 * i]);
      warm += static_cast<double>(h[2 * i + 1]);
      cold_max = std::max(cold_max, h[2 * i]);
    }
    cold /= ctas;
    warm /= ctas;
    const double kib = kSteps * 4 * 16 / 1024.0;
    std::printf(
        "cold_code: %-9s %4d instructions (%5.1f KiB), %3d CTAs: first pass %6.0f cycles (max "
        "%6lld), "
        "second %6.0f; cold cost %5.0f cycles per KiB\n",
        flush != nullptr ? "L2 flush" : "L2 warm", kSteps * 4, kib, ctas, cold, cold_max, warm,
        (cold - warm) / kib);
  }
}

}  // namespace

int main() {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, sizeof(long long) * ((1 << 20) + 2)), "malloc");
  const std::size_t flush_words = std::size_t{200} << 20 >> 4;  // 200 MiB: 4x the L2
  uint4* flush = nullptr;
  experiment::check(cudaMalloc(&flush, flush_words * 16), "malloc(flush)");
  experiment::check(cudaMemset(flush, 1, flush_words * 16), "memset(flush)");
  for (const bool flushed : {false, true}) {
    for (const int ctas : {1, sms}) {
      measure<64>(ctas, out, flushed ? flush : nullptr, flush_words);   // 4 KiB
      measure<256>(ctas, out, flushed ? flush : nullptr, flush_words);  // 16 KiB
    }
  }
  return 0;
}
