// tmakit ops (internal): the GEMM's work decomposition: whole tiles (data-parallel) plus a
// stream-K tail split along K. Pure integer arithmetic, host and device: the kernel walks it
// (gemm_kernel.cuh), tests/gemm/test_gemm_host.cpp checks the same functions on the CPU.
//
// The work is the linear iteration space (tile, k_block), tiles in raster order (tile_of). With
// W workers (CTAs; clusters when cluster_m = 2, which never splits) and T tiles of K k-blocks:
//   - tiles [0, dp_tiles) are data-parallel: worker w computes tiles w, w + W, ... whole;
//     dp_tiles is a multiple of W (full waves), or T when stream-K is off;
//   - tiles [dp_tiles, T) (sk_tiles of them: the last partial wave plus one full wave when there
//     is one, so that no tile is split into more than ~3 pieces; all tiles when fewer than W)
//     form sk_tiles x K iterations that are cut into W contiguous ranges of equal length (+-1):
//     worker w takes [begin(w), begin(w + 1)), begin(w) = w q + min(w, r) (q, r = the quotient
//     and remainder of sk_tiles K / W). A range crosses tile boundaries; each maximal run inside
//     one tile is a Unit:
//       kWhole    k-blocks [0, K): computed and stored like a data-parallel tile;
//       kPartial  k-blocks [b, e) with b > 0: the partial sum goes to the worker's fp32 slot of
//                 the workspace, then the worker's flag is set ("contributor");
//       kFinish   k-blocks [0, e) with e < K: the worker adds its peers' slots (next_peer: the
//                 workers after it whose ranges start inside the tile, in increasing order, a
//                 fixed order: deterministic results) to its own sum, then stores the tile.
//     Exactly one worker finishes each split tile: the one whose range holds the tile's k-block 0.
//
// No deadlock, no long waits: a kPartial unit can only be the FIRST unit of a worker's range
// (every later unit starts at a tile boundary, k-block 0) and a kFinish unit only the LAST (it
// ends inside the tile, so the range ends there). So every worker sets its flag (if any) before
// it waits for anything, and a worker waits only for workers with larger indices whose signals
// need no wait: the wait-for graph has no cycle. With the persistent grid no larger than what is
// co-resident (one CTA per SM), every worker runs, so every wait ends. (Were the GPU shared with
// another kernel's blocks, a waiting CTA still waits only for signals that need nothing but an SM,
// freed as the other kernel's blocks retire.) And the waits are short: all workers start their
// stream-K ranges together after the same number of data-parallel tiles; a contributor's piece is
// the first of its range and no longer than the range, while the finisher's is the last, so the
// contributor's flag is normally set before the finisher gets to wait.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ops::detail::gemm {

struct Schedule {
  std::int32_t tiles;     // output tiles (cluster tiles) in raster order
  std::int32_t k_blocks;  // k-blocks per tile
  std::int32_t workers;   // persistent CTAs (clusters)
  std::int32_t dp_tiles;  // tiles [0, dp_tiles): whole, round-robin over the workers
  std::int32_t sk_tiles;  // tiles [dp_tiles, tiles): split along K (0: stream-K off)
  std::int32_t sk_quot;   // sk_tiles x k_blocks / workers (< 2^31: the host checks)
  std::int32_t sk_rem;    // sk_tiles x k_blocks % workers
};

enum class UnitKind : std::uint32_t { kWhole, kPartial, kFinish };

// k-blocks [kb_begin, kb_end) of tile `tile` (raster index).
struct Unit {
  std::int32_t tile;
  std::int32_t kb_begin, kb_end;
  UnitKind kind;
};

// Where a worker is in its schedule: the next data-parallel tile, then its stream-K iterations
// [it, end) (iteration i = (split tile i / K, k-block i % K)).
struct Cursor {
  std::int32_t dp;
  std::int32_t it, end;
};

TMA_HOST_DEVICE inline std::int32_t sk_min(std::int32_t a, std::int32_t b) {
  return a < b ? a : b;
}

// The first stream-K iteration of worker w (w <= workers: begin(workers) is the end).
TMA_HOST_DEVICE inline std::int32_t sk_begin(const Schedule& s, std::int32_t w) {
  return w * s.sk_quot + sk_min(w, s.sk_rem);
}

TMA_HOST_DEVICE inline Cursor schedule_start(const Schedule& s, std::int32_t w) {
  return Cursor{w, sk_begin(s, w), sk_begin(s, w + 1)};
}

// The worker's next unit into `u`; false when its schedule is done. The kernel's producer and
// consumers each walk their own cursor through the same sequence.
TMA_HOST_DEVICE inline bool next_unit(const Schedule& s, Cursor& c, Unit& u) {
  if (c.dp < s.dp_tiles) {
    u = Unit{c.dp, 0, s.k_blocks, UnitKind::kWhole};
    c.dp += s.workers;
    return true;
  }
  if (c.it >= c.end) return false;
  // 32-bit unsigned division: 64-bit division is a called subroutine on the GPU.
  const auto k = static_cast<std::uint32_t>(s.k_blocks);
  const auto split = static_cast<std::int32_t>(static_cast<std::uint32_t>(c.it) / k);
  const std::int32_t b = c.it - split * s.k_blocks;
  const std::int32_t e = sk_min(s.k_blocks, b + (c.end - c.it));
  const UnitKind kind = b > 0            ? UnitKind::kPartial
                        : e < s.k_blocks ? UnitKind::kFinish
                                         : UnitKind::kWhole;
  u = Unit{s.dp_tiles + split, b, e, kind};
  c.it += e - b;
  return true;
}

// The finisher's next peer of split tile `tile` (raster index) after worker v: the next worker
// whose non-empty range starts inside the tile, or -1 when there is none. Start with v = the
// finisher itself. Its slot holds that worker's partial sum of the tile (its first unit).
TMA_HOST_DEVICE inline std::int32_t next_peer(const Schedule& s, std::int32_t tile,
                                              std::int32_t v) {
  const std::int32_t tile_end = (tile - s.dp_tiles + 1) * s.k_blocks;
  for (++v; v < s.workers; ++v) {
    const std::int32_t b = sk_begin(s, v);
    if (b >= tile_end) return -1;
    if (sk_begin(s, v + 1) > b) return v;  // an empty range (fewer iterations than workers)
  }
  return -1;
}

// ---- host: the decomposition and the heuristic -------------------------------------------------

// The schedule of `tiles` tiles of k_blocks each over `workers` workers, split or not. Split: the
// last partial wave plus one full wave when there is one (each worker then gets 1 .. 2 tiles of
// iterations, so a tile has at most 3 pieces), every tile when they do not fill a wave; when the
// tiles fill the waves exactly, the last wave (no tile ends up split: harmless, for tests).
// sk_tiles x k_blocks must be < 2^31 (stream_k_fits).
inline Schedule make_schedule(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers,
                              bool split) {
  Schedule s{tiles, k_blocks, workers, tiles, 0, 0, 0};
  if (!split) return s;
  const std::int32_t full = tiles / workers, rem = tiles % workers;
  s.sk_tiles = rem == 0 ? workers : rem + (full >= 1 ? workers : 0);
  s.dp_tiles = tiles - s.sk_tiles;
  const std::int64_t iters = std::int64_t{s.sk_tiles} * k_blocks;
  s.sk_quot = static_cast<std::int32_t>(iters / workers);
  s.sk_rem = static_cast<std::int32_t>(iters % workers);
  return s;
}

// Whether the split schedule's iteration indices fit the kernel's 32-bit arithmetic.
inline bool stream_k_fits(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers) {
  const std::int64_t rem = tiles % workers, full = tiles / workers;
  const std::int64_t sk = rem == 0 ? workers : rem + (full >= 1 ? workers : 0);
  return sk * k_blocks + k_blocks < (std::int64_t{1} << 31);
}

// ---- the heuristic: guesses until measured (tma-bench gemm --sweep has tma_sk{0,1}) ----------
// Stream-K pays when the waves quantize badly and a tile has enough k-blocks to share. A cost
// model in k-block times (one k-block of a 128 x 256 tile, ~0.56 us on an H100 SM):
//   data-parallel  ceil(T / W) x K
//   stream-K       (dp_tiles / W) x K + ceil(sk_tiles K / W) + fixup,
//   fixup = kPartialCost x (1 + peers): writing one fp32 partial tile and reading `peers` of them
//           (128 x 256 x 4 B = 128 KiB each, from L2 at ~150 GB/s per SM: ~0.9 us, so ~2
//           k-block times; half for 128 x 128 tiles), peers = ceil(K / q) (q iterations a worker).
// Split when the model's stream-K time is below kStreamKGain of the data-parallel time and
// K >= kMinStreamKBlocks. (The brief's first guess was "the last wave less than half full": that
// keeps M = 1024, N = 2112 (72 of 132 SMs: 55%) data-parallel, the case that loses most.)
inline constexpr std::int32_t kMinStreamKBlocks = 8;
inline constexpr double kStreamKGain = 0.9;

// The data-parallel time in k-block times: whole waves of tiles.
inline double data_parallel_time(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers) {
  return static_cast<double>((tiles + workers - 1) / workers) * k_blocks;
}

// The split schedule's time in k-block times (the model above).
inline double stream_k_time(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers,
                            int block_n) {
  const Schedule s = make_schedule(tiles, k_blocks, workers, true);
  const std::int64_t iters = std::int64_t{s.sk_tiles} * k_blocks;
  const std::int64_t per_worker = (iters + workers - 1) / workers;
  const std::int64_t peers = (k_blocks + per_worker - 1) / per_worker;
  const double partial_cost = 2.0 * block_n / 256.0;
  return static_cast<double>(s.dp_tiles / workers) * k_blocks + static_cast<double>(per_worker) +
         partial_cost * static_cast<double>(1 + peers);
}

inline bool stream_k_pays(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers,
                          int block_n) {
  if (k_blocks < kMinStreamKBlocks || !stream_k_fits(tiles, k_blocks, workers)) return false;
  return stream_k_time(tiles, k_blocks, workers, block_n) <
         kStreamKGain * data_parallel_time(tiles, k_blocks, workers);
}

// ---- the workspace ------------------------------------------------------------------------------
// [flags: 2 x workers uint32 (one per consumer warpgroup), padded to 256 B]
// [slots: workers x kBlockM x block_n fp32, slot w = worker w's partial tile; inside a slot,
//  warpgroup g's 64 rows as (g, register quad j, thread t) float4 at ((g x block_n / 8 + j) x 128
//  + t) x 16 B: each thread stores and loads its own accumulators, 512 contiguous bytes a warp]
// The flags are zeroed (cudaMemsetAsync) before each launch that splits.
inline constexpr std::uint64_t kFlagBytesAlign = 256;

inline std::uint64_t workspace_flag_bytes(std::int32_t workers) {
  const std::uint64_t b = std::uint64_t{2} * 4 * static_cast<std::uint64_t>(workers);
  return (b + kFlagBytesAlign - 1) / kFlagBytesAlign * kFlagBytesAlign;
}

inline std::uint64_t workspace_slot_bytes(int block_m, int block_n) {
  return std::uint64_t{4} * static_cast<std::uint64_t>(block_m) *
         static_cast<std::uint64_t>(block_n);
}

inline std::uint64_t workspace_bytes(std::int32_t workers, int block_m, int block_n) {
  return workspace_flag_bytes(workers) +
         static_cast<std::uint64_t>(workers) * workspace_slot_bytes(block_m, block_n);
}

}  // namespace tma::ops::detail::gemm
