// first_call: an experiment, not a benchmark of record. How long does a process's first
// tma::ops::gemm call take (the module holding the kernel is loaded then, and a compressed fatbin
// is decompressed), against its second?
// Question (docs/perf-log.md, session 33): tmakit::ops' fatbins are compressed whole
// (-Xfatbin=-compress-all: the library 13 -> 5 MB without line info); what does that cost at the
// first call?
// (Answer, H100, session 33 call 1, three processes each: the first 2048^3 call takes 4.74-4.78
// ms against 3.22-3.28 ms linked against the uncompressed library, so ~1.5 ms once per process;
// the second and third calls 0.04-0.05 ms either way.)
//   first_call [m=2048] [n=2048] [k=2048]
// Prints the context creation, the first call (enqueue and completion), and the second.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "experiment.cuh"
#include "tma/ops/gemm.hpp"

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 2048;
  const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 2048;
  const std::int64_t k = argc > 3 ? std::atoll(argv[3]) : 2048;
  double t = now_ms();
  experiment::check(cudaFree(nullptr), "context");
  std::printf("first_call: context %.1f ms\n", now_ms() - t);
  const experiment::Operands o = experiment::make_operands(m, n, k, 2);
  experiment::check(cudaDeviceSynchronize(), "fill");
  const tma::ops::GemmArgs g = experiment::rc_args(o, m, n, k);
  for (int call = 1; call <= 3; ++call) {
    t = now_ms();
    tma::ops::gemm(g);
    const double enqueued = now_ms() - t;
    experiment::check(cudaDeviceSynchronize(), "gemm");
    std::printf("first_call: %lld x %lld x %lld call %d: enqueued %.2f ms, done %.2f ms\n",
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                call, enqueued, now_ms() - t);
  }
  return 0;
}
