// tmakit ops: the tuning knobs of the copy and transpose kernels, for tma-bench's configuration
// sweeps. Users call tma::ops::copy / transpose (ops/copy.hpp), which pick from the tables below.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tma/config.hpp"
#include "tma/ops/copy.hpp"

namespace tma::ops {

// One persistent TMA copy configuration: a ring of `stages` shared-memory tiles per CTA,
// `lookahead` loads in flight ahead of the store (stages - lookahead stores may still be reading
// their tiles), tiles of about `tile_bytes` bytes, `ctas_per_sm` CTAs on each SM.
struct CopyConfig {
  int stages;
  int lookahead;
  std::uint32_t tile_bytes;
  int ctas_per_sm;
  bool evict_first;  // loads and stores carry an L2 evict_first hint (streaming data)
};

// The configurations the kernels are compiled for (stages, lookahead pairs); tma-bench sweeps
// them. Index 0 is the default (chosen by measurement: docs/perf-log.md).
inline constexpr CopyConfig kCopyConfigs[] = {
    // clang-format off
    {4, 2, 16384, 3, false},
    {8, 4, 16384, 1, false},
    {6, 4,  8192, 4, false},
    {4, 3, 32768, 1, false},
    {2, 1, 32768, 3, false},
    {4, 2, 16384, 3, true},
    {8, 4, 16384, 1, true},
    // clang-format on
};
inline constexpr int kNumCopyConfigs = sizeof(kCopyConfigs) / sizeof(kCopyConfigs[0]);

// copy() with configuration kCopyConfigs[config] (TMA path only).
void copy_with_config(const TensorView& dst, const TensorView& src, cudaStream_t stream,
                      int config);

}  // namespace tma::ops
