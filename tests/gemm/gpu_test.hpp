// tests/gemm: what the GPU tests share: CHECK_CUDA, and their first step, a skip (exit code
// kSkipExit, the reason printed) without a CUDA device or on one other than compute capability
// 9.0, which the GEMM kernels are built for.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// Exits the test (code 1) with the call, its place and the CUDA error unless `call` succeeds.
#define CHECK_CUDA(call)                                                          \
  do {                                                                            \
    const cudaError_t e_ = (call);                                                \
    if (e_ != cudaSuccess) {                                                      \
      std::printf("FATAL %s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, \
                  cudaGetErrorName(e_), cudaGetErrorString(e_));                  \
      std::fflush(stdout);                                                        \
      std::_Exit(1);                                                              \
    }                                                                             \
  } while (0)

namespace tma::test {

inline constexpr int kSkipExit = 77;  // ctest's SKIP_RETURN_CODE

// 0 with *prop filled when device 0 can run the GEMM kernels; kSkipExit (after printing
// "SKIP <test>: <why>") otherwise. Exits 1 when the properties cannot be read.
inline int skip_unless_sm90(const char* test, cudaDeviceProp* prop) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP %s: no CUDA device (cudaGetDeviceCount: %s)\n", test,
                cudaGetErrorString(cudaGetLastError()));
    return kSkipExit;
  }
  const cudaError_t e = cudaGetDeviceProperties(prop, 0);
  if (e != cudaSuccess) {
    std::printf("FATAL %s: cudaGetDeviceProperties failed: %s (%s)\n", test, cudaGetErrorName(e),
                cudaGetErrorString(e));
    std::fflush(stdout);
    std::_Exit(1);
  }
  if (prop->major != 9 || prop->minor != 0) {
    std::printf(
        "SKIP %s: device 0 (%s) has compute capability %d.%d; the GEMM kernels are built for "
        "sm_90a (H100 / H200)\n",
        test, prop->name, prop->major, prop->minor);
    return kSkipExit;
  }
  return 0;
}

}  // namespace tma::test
