// tmakit: the few macros every header shares. Plain C++; no CUDA headers.
#pragma once

// tmakit is C++20 (designated initializers, concepts, defaulted comparisons). Without this check
// an older dialect fails with ~100 errors deep in the headers; nvcc's default dialect is C++17,
// and CMake's cxx_std_20 (tmakit::tmakit) does not reach .cu files.
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L  // MSVC: __cplusplus is 199711L
#error \
    "tmakit needs C++20. For .cu files pass -std=c++20 to nvcc, or in CMake set CMAKE_CUDA_STANDARD 20 (CMake < 3.26 with nvcc also needs CMAKE_CUDA20_STANDARD_COMPILE_OPTION -std=c++20: README, 'Use it'); for host files -std=c++20 or CMAKE_CXX_STANDARD 20."
#endif

// Functions the host (validator, model, tests) and device code both call.
#if defined(__CUDACC__)
#define TMA_HOST_DEVICE __host__ __device__
#else
#define TMA_HOST_DEVICE
#endif

#define TMA_VERSION_MAJOR 0
#define TMA_VERSION_MINOR 1
#define TMA_VERSION_PATCH 0
