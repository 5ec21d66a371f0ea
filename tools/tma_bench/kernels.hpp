// tma-bench: the bench's own kernels, host side: random input, the naive transpose reference, the
// verifier, the spin kernel that hides launch overhead from the timing (timing.hpp) and the clock
// probe (--clock-probe).
//
// They are the oracle, not performance code: every one is a grid-stride loop over elements, with
// nothing to get wrong. All launches go to `stream` and are checked.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "layout.hpp"

namespace tma::bench {

// Every output byte is set to this before an implementation runs, so bytes it did not write (or
// wrote outside the view) stand out.
inline constexpr unsigned char kPoisonByte = 0xA5;

// Fills the whole footprint of `v` (padding included) with random non-zero values that depend
// only on `seed` and the element offset: floats are finite, of magnitude 0.5..2, random sign.
void fill_random(const TensorView& v, std::uint64_t seed, cudaStream_t stream);

// Sets the footprint of `v` to kPoisonByte.
void poison(const TensorView& v, cudaStream_t stream);

// dst[b][j][i] = src[b][i][j], element by element: the reference the transposes are checked
// against. src is [rows, cols] or [batch, rows, cols]; dst the transposed shape.
void transpose_reference(const TensorView& dst, const TensorView& src, cudaStream_t stream);

// What compare() found. Offsets are elements from got.data.
struct Mismatches {
  std::uint64_t count = 0;            // elements that differ (view and padding)
  std::int64_t first = -1;            // the lowest differing offset; -1 when none
  std::vector<std::int64_t> samples;  // up to kMaxSamples further offsets, ascending
  static constexpr int kMaxSamples = 3;
};

// Compares every element of got's footprint: inside the view with `expected` at the same index
// (expected may have other strides), in the padding with the poison. Same shape and dtype.
// Synchronizes `stream`.
Mismatches compare(const TensorView& got, const TensorView& expected, cudaStream_t stream);

// Keeps `stream` busy for about `cycles` SM clock cycles (timing.hpp).
void launch_spin(cudaStream_t stream, long long cycles);

// What one clock probe read: the SM cycles (clock64) between two %globaltimer ticks `ns` apart.
struct ClockReading {
  long long cycles = 0;
  long long ns = 0;
};

// Enqueues one probe (one thread): it waits for a %globaltimer tick, reads clock64, waits until
// the timer has advanced at least `window_ns` and reads clock64 at that tick, and writes both
// spans to `*out` (device memory). Timing edge to edge removes the timer's granularity (1 us on
// some GPUs): the error is a few loop iterations, ~0.1% of a 20 us window.
void launch_clock_probe(cudaStream_t stream, ClockReading* out, long long window_ns);

}  // namespace tma::bench
