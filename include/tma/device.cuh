// tmakit: the TMA device API in one include (CUDA translation units only): copies, barriers,
// pipeline, clusters, descriptors. The wgmma helpers (tma/device/wgmma.hpp, wgmma_desc.hpp: sm_90a
// only) are included separately.
//
//   #include "tma/device.cuh"
//   __global__ void k(const __grid_constant__ tma::TensorMap map) { ... tma::load(...) ... }
//
// Device functions are in namespace tma; each states the PTX it issues, the PTX ISA version and SM
// it needs, and who calls it (one thread / a warp / all threads). Inline PTX lives only in
// tma/ptx/.
#pragma once

#if !defined(__CUDACC__)
#error \
    "tma/device.cuh is for CUDA translation units (.cu, compiled by nvcc); host code includes tma/tma.hpp"
#endif

#include "tma/config.hpp"
#include "tma/device/barrier.hpp"
#include "tma/device/box.hpp"
#include "tma/device/bulk.hpp"
#include "tma/device/cache_hint.hpp"
#include "tma/device/cluster.hpp"
#include "tma/device/copy.hpp"
#include "tma/device/debug.hpp"
#include "tma/device/descriptor.hpp"
#include "tma/device/fence.hpp"
#include "tma/device/pipeline.hpp"
#include "tma/device/pipeline_state.hpp"
#include "tma/device/tensor_map_ref.hpp"

// The TensorMap definition and make_tensor_map (host side of every kernel that takes a map).
#include "tma/host/tensor_map.hpp"
