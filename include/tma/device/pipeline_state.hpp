// tmakit device/: PipelineState, the position of a producer or consumer in a ring of stages.
//
// Plain C++ (no CUDA headers) so that CPU tests can check the phase accounting. The only place in
// tmakit where a ring's index and phase move (with Barrier's Phase for single barriers).
//
//   pass over the ring:   0         1         2  ...
//   index:               0 1 .. S-1 0 1 .. S-1 0 ...
//   phase (parity):      0 0 .. 0   1 1 .. 1   0 ...
//
// A consumer waits for full_bar[index] to complete the phase of parity `phase`; a producer waits
// for empty_bar[index] with parity `phase ^ 1`, which a fresh barrier reports complete at once, so
// the first pass over the ring does not wait for releases that never happened.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma {

struct PipelineState {
  std::uint32_t index = 0;   // stage, 0 .. stages - 1
  std::uint32_t phase = 0;   // parity of the pass over the ring: 0, 1, 0, ...
  std::uint32_t stages = 0;  // ring length; Pipeline<kStages>::start() sets it

  // The first stage of a ring of `stages` stages.
  TMA_HOST_DEVICE static constexpr PipelineState start(std::uint32_t stages) {
    return PipelineState{0, 0, stages};
  }

  // Moves to the next stage; wrapping around the ring flips the phase.
  TMA_HOST_DEVICE constexpr void advance() {
    if (++index == stages) {
      index = 0;
      phase ^= 1u;
    }
  }

  // Moves `n` stages ahead (e.g. a consumer group skipping the stages another group handles).
  // Needs stages > 0, as every state from start() has.
  TMA_HOST_DEVICE constexpr void advance(std::uint32_t n) {
    const std::uint32_t total = index + n;
    phase ^= (total / stages) & 1u;
    index = total % stages;
  }

  // Defaulted: nvcc makes it __host__ __device__ by itself (an explicit annotation is an error).
  constexpr bool operator==(const PipelineState&) const = default;
};

}  // namespace tma
