// tmakit: the few macros every header shares. Plain C++; no CUDA headers.
#pragma once

// Functions the host (validator, model, tests) and device code both call.
#if defined(__CUDACC__)
#define TMA_HOST_DEVICE __host__ __device__
#else
#define TMA_HOST_DEVICE
#endif

#define TMA_VERSION_MAJOR 0
#define TMA_VERSION_MINOR 1
#define TMA_VERSION_PATCH 0
