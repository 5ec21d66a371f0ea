// const_after_wait: an experiment, not a benchmark of record. Does griddepcontrol.wait (the PDL
// wait, cudaGridDependencySynchronize) make the next kernel-parameter read miss the constant cache,
// and what does a parameter read that misses cost?
// Question (docs/perf-log.md, session 29, items 13-14): half of the GEMM producer's samples
// between setmaxnreg and its first load are constant-bank misses (ncu stall_imc) right after its
// PDL wait, and reading the parameters earlier (another warp, or the producer thread itself) did
// not move its first load.
// (Answer, H100, session 29 call 17: no. One thread per CTA reads parameter word 0, a branch on
// it making sure it arrived, then times (clock64, the same branch after) a read of a word in the
// same 128-byte line: 72 cycles, also right after griddepcontrol.wait; a word in a line not read
// before: 140-156 cycles, with 1 or 132 CTAs.)
//   const_after_wait
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "experiment.cuh"

namespace {

struct Params {
  unsigned w[64];  // two 128-byte lines of kernel parameters
};

// kMode 0: a second word of the warm line; 1: the same after griddepcontrol.wait; 2: a new line.
template <int kMode>
__global__ void probe(const Params p, long long* out) {
  if (threadIdx.x != 0) return;
  const unsigned v = p.w[0];
  if (v == 0xDEADBEEFu) out[4096] = 1;  // never: the branch waits for the read
  if constexpr (kMode == 1) cudaGridDependencySynchronize();  // griddepcontrol.wait
  const long long t0 = clock64();
  const unsigned x = p.w[kMode == 2 ? 40 : 5 + kMode];
  if (x == 0xDEADBEEFu) out[4097] = 1;
  const long long t1 = clock64();
  out[blockIdx.x] = t1 - t0;
}

}  // namespace

int main() {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  Params p{};
  for (int i = 0; i < 64; ++i)
    p.w[i] = static_cast<unsigned>(i + 1);
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, sizeof(long long) * 8192), "malloc");
  const char* names[] = {"same line, no wait", "same line after griddepcontrol.wait",
                         "new line, no wait"};
  for (int rep = 0; rep < 3; ++rep) {
    for (int mode = 0; mode < 3; ++mode) {
      for (const int ctas : {1, sms}) {
        if (mode == 0) probe<0><<<ctas, 32>>>(p, out);
        if (mode == 1) probe<1><<<ctas, 32>>>(p, out);
        if (mode == 2) probe<2><<<ctas, 32>>>(p, out);
        experiment::check(cudaGetLastError(), "launch");
        experiment::check(cudaDeviceSynchronize(), "run");
        std::vector<long long> h(static_cast<std::size_t>(ctas));
        experiment::check(
            cudaMemcpy(h.data(), out, sizeof(long long) * h.size(), cudaMemcpyDeviceToHost),
            "copy");
        double sum = 0;
        long long mx = 0;
        for (const long long c : h)
          sum += static_cast<double>(c), mx = c > mx ? c : mx;
        std::printf("const_after_wait: %-38s %3d CTAs: %6.0f cycles mean, %6lld max\n", names[mode],
                    ctas, sum / ctas, mx);
      }
    }
  }
  return 0;
}
