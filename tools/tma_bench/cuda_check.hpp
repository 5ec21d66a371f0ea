// tma-bench: checked CUDA runtime calls. Every runtime call of the tool goes through
// TMA_BENCH_CHECK, every launch is followed by TMA_BENCH_CHECK_LAUNCH, so that a failure names the
// call, the place and the CUDA error instead of surfacing later as a wrong number.
#pragma once

#include <cuda_runtime_api.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace tma::bench {

// A failed CUDA runtime call. code() is the cudaError_t; sticky errors (an illegal address in a
// kernel) leave the context unusable, which main() detects and then stops the run.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, cudaError_t code)
      : std::runtime_error(message), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError naming the call's text, its file:line and the CUDA error.
inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::ostringstream o;
  o << file << ':' << line << ": " << expr << " failed: " << cudaGetErrorName(e) << " ("
    << cudaGetErrorString(e) << ")";
  throw CudaError(o.str(), e);
}

}  // namespace tma::bench

// A macro for the call's text and line.
#define TMA_BENCH_CHECK(call) ::tma::bench::check_cuda((call), #call, __FILE__, __LINE__)
// After every launch: launch-configuration errors surface here, not at the next synchronization.
#define TMA_BENCH_CHECK_LAUNCH() TMA_BENCH_CHECK(cudaGetLastError())
