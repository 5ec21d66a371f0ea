// tmakit GPU tests: device-side helpers the test kernels share (poisoning, copying shared memory
// out, waits that give up instead of hanging, and the run-time rank dispatch).
//
// The test kernels are the oracle's probes, not performance code: one block per case, every step
// obvious. A wait that gives up lets one wrong expect-tx byte count show up as a "timeout" record
// for that case instead of hanging the whole batch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tma/device.cuh"

namespace tma::testing {

// Alignment of every shared-memory image in the tests: the largest swizzle repeat (SWIZZLE_128B),
// so every swizzle mode sees its pattern from the image's first byte.
inline constexpr std::size_t kSmemAlign = 1024;
// Poisoned bytes kept before and after each image: a copy that writes outside the image the model
// predicts shows up there.
inline constexpr std::size_t kGuardBytes = 1024;
// Dynamic shared memory to request for an image region of `region` bytes (guards included): room
// to align the start to kSmemAlign inside the allocation.
constexpr std::size_t dynamic_smem_for(std::size_t region) {
  return region + kSmemAlign;
}

// The first kSmemAlign-aligned byte of the dynamic shared memory. All threads.
__device__ inline std::byte* aligned_dynamic_smem() {
  extern __shared__ __align__(16) std::byte dynamic_smem[];
  const auto base = reinterpret_cast<std::uintptr_t>(dynamic_smem);
  const std::uintptr_t aligned = (base + kSmemAlign - 1) / kSmemAlign * kSmemAlign;
  return dynamic_smem + (aligned - base);
}

// Fills `bytes` (a multiple of 16) at the 16-byte-aligned `dst` with `word`. All threads of the
// block.
__device__ inline void fill_words(std::byte* dst, std::size_t bytes, std::uint32_t word) {
  const uint4 v = make_uint4(word, word, word, word);
  auto* d = reinterpret_cast<uint4*>(dst);
  for (std::size_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
    d[i] = v;
}

// Copies `bytes` (a multiple of 16) between 16-byte-aligned buffers. All threads of the block.
__device__ inline void copy_words(std::byte* dst, const std::byte* src, std::size_t bytes) {
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  for (std::size_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
    d[i] = s[i];
}

// Polls `bar` for the phase of `parity` for at most `max_cycles` SM clock cycles. Returns false
// when it gave up (the phase never completed: expect-tx bytes != delivered bytes, or the copy
// never issued). Any thread; each caller decides for itself.
__device__ inline bool wait_bounded(Barrier& bar, std::uint32_t parity, long long max_cycles) {
  const long long start = clock64();
  while (!bar.try_wait_parity(parity)) {
    if (clock64() - start > max_cycles) return false;
  }
  return true;
}

// Calls f(std::integral_constant<int, R>{}) for the run-time rank `rank` in lo..5 (a switch, so
// each rank gets its own instantiation of the copy templates). Ranks outside lo..5 do nothing.
template <int kLo = 1, class F>
__device__ inline void dispatch_rank(int rank, F&& f) {
  switch (rank) {
    case 1:
      if constexpr (kLo <= 1) f(std::integral_constant<int, 1>{});
      break;
    case 2:
      if constexpr (kLo <= 2) f(std::integral_constant<int, 2>{});
      break;
    case 3:
      f(std::integral_constant<int, 3>{});
      break;
    case 4:
      f(std::integral_constant<int, 4>{});
      break;
    case 5:
      f(std::integral_constant<int, 5>{});
      break;
    default:
      break;
  }
}

}  // namespace tma::testing
