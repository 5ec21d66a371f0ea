// tmakit ops (internal): the GEMM's work decomposition: whole tiles (data-parallel) plus a
// stream-K tail split along K. Pure integer arithmetic, host and device: the kernel walks it
// (gemm_kernel.cuh), tests/gemm/test_gemm_host.cpp checks the same functions on the CPU.
//
// The work is the linear iteration space (tile, k_block), tiles in raster order (raster_tile).
// A tile here is a cluster tile: cluster_m (1 or 2) adjacent tile rows of one tile column, one
// per CTA of the cluster. With W workers (clusters) and T tiles of K k-blocks:
//   - tiles [0, dp_tiles) are data-parallel: worker w computes tiles w, w + W, ... whole;
//     dp_tiles is a multiple of W (full waves), or T when stream-K is off;
//   - tiles [dp_tiles, T) (sk_tiles of them: the last partial wave plus one full wave when there
//     is one, so that no tile is split into more than ~3 pieces; all tiles when fewer than W)
//     form sk_tiles x K iterations that are cut into W contiguous ranges of equal length (+-1):
//     worker w takes [begin(w), begin(w + 1)), begin(w) = w q + min(w, r) (q, r = the quotient
//     and remainder of sk_tiles K / W). A range crosses tile boundaries; each maximal run inside
//     one tile is a Unit:
//       kWhole    k-blocks [0, K): computed and stored like a data-parallel tile;
//       kPartial  k-blocks [b, e) with b > 0: the partial sum goes to the CTA's fp32 slot of
//                 the workspace, then the CTA's flag is set ("contributor");
//       kFinish   k-blocks [0, e) with e < K: the CTA adds its peers' slots (next_peer: the
//                 workers after it whose ranges start inside the tile, in increasing order, a
//                 fixed order: deterministic results) to its own sum, then stores the tile.
//     Exactly one worker finishes each split tile: the one whose range holds the tile's k-block 0.
//
// Clusters of 2 (cluster_m = 2): the worker is the cluster. Both CTAs walk the same units with the
// same k-ranges, each on its own tile row of the cluster tile (rank r: tile row 2 c + r), so
// the producers multicast B exactly as in a data-parallel tile (every stage of both CTAs gets A
// from its own CTA and one half of B from each). Slots and flags belong to CTAs: CTA (w, r) uses
// slot and flags cta_slot(w, r) = w cluster_m + r, and the finisher CTA (w, r) reads the slots
// (v, r) of its peer workers v: the same rank, so the same output rows. A CTA whose tile row (or
// a warpgroup whose 64 rows) lies past m skips the handoff on both sides alike (contributor and
// finisher have the same rank, so the same rows).
//
// No deadlock, no long waits: a kPartial unit can only be the FIRST unit of a worker's range
// (every later unit starts at a tile boundary, k-block 0) and a kFinish unit only the LAST (it
// ends inside the tile, so the range ends there). So every CTA sets its flag (if any) before it
// waits for any flag, and it waits only for CTAs of workers with larger indices. With clusters:
// the two CTAs of a cluster also wait for each other, but only inside the k-loops (pipeline
// stages filled and released by both), never for a flag there: a CTA's flag waits come after its
// last k-loop, when it has released every stage its peer needs and its producer has issued every
// copy (the producer warpgroup never waits for a flag). So each cluster reaches the end of its
// last k-loop on its own, having set all its flags on the way; then every flag wait ends. The
// wait-for graph has no cycle; with the persistent grid no larger than what is co-resident (one
// CTA per SM: cudaOccupancyMaxActiveClusters), every worker runs, so every wait ends. (Were the
// GPU shared with another kernel's blocks, a waiting CTA still waits only for signals that need
// nothing but an SM, freed as the other kernel's blocks retire.) And the waits are short: all
// workers start their stream-K ranges together after the same number of data-parallel tiles; a
// contributor's piece is the first of its range and no longer than the range, while the
// finisher's is the last, so the contributor's flag is normally set before the finisher waits.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma::ops::detail::gemm {

struct Schedule {
  std::int32_t tiles;     // cluster tiles (cluster_m tile rows x 1 tile column) in raster order
  std::int32_t k_blocks;  // k-blocks per tile
  std::int32_t workers;   // persistent clusters (of cluster_m CTAs)
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

// The output tile (tile row tm, tile column tn) that the CTA of cluster rank `rank` computes for
// cluster tile t: groups of raster_group cluster rows are walked column by column (M fastest
// inside a group), so the clusters working at the same time share A tiles (rows) and B tiles
// (columns) through L2; both CTAs of a cluster take the same column and adjacent rows. tm may be
// >= tiles_m (the second CTA of the last cluster when tiles_m is odd: no rows to compute). 32-bit
// unsigned arithmetic: 64-bit division is a called subroutine on the GPU (the host keeps the
// tile counts below 2^31).
TMA_HOST_DEVICE inline void raster_tile(std::int32_t t, std::int32_t cluster_rows,
                                        std::int32_t tiles_n, std::int32_t raster_group, int rank,
                                        int cluster_m, int& tm, int& tn) {
  const auto ut = static_cast<std::uint32_t>(t);
  const auto group_rows = static_cast<std::uint32_t>(raster_group);
  const std::uint32_t per_group = group_rows * static_cast<std::uint32_t>(tiles_n);
  const std::uint32_t group = ut / per_group;
  const std::uint32_t first = group * group_rows;
  const std::uint32_t left = static_cast<std::uint32_t>(cluster_rows) - first;
  const std::uint32_t rows = left < group_rows ? left : group_rows;
  const std::uint32_t r = ut - group * per_group;
  tm = static_cast<int>((first + r % rows) * static_cast<std::uint32_t>(cluster_m)) + rank;
  tn = static_cast<int>(r / rows);
}

// The workspace slot and flag pair of the CTA of cluster rank `rank` in worker (cluster) w: one
// per CTA, so a finisher CTA reads the slot of the same rank in each peer cluster.
TMA_HOST_DEVICE inline std::int32_t cta_slot(std::int32_t w, int rank, int cluster_m) {
  return w * cluster_m + rank;
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

// ---- the cost model (the decision is choose_plan, gemm_config.hpp) ------------------------------
// In k-block times of the tile in question, W workers, T tiles of K k-blocks:
//   data-parallel  ceil(T / W) x K
//   stream-K       (dp_tiles / W) x K + kStreamKBlockCost x ceil(sk_tiles K / W) + fixup,
//   fixup = 2 (block_n / 256) x (1 + peers): writing one fp32 partial tile and reading `peers`
//           of them (128 x 256 x 4 B = 128 KiB each, ~2 k-block times), peers = ceil(K / q)
//           (q iterations a worker).
// kStreamKBlockCost, measured (tma-bench gemm --sweep, H200, 2026-11-22, clusters of 1): fitted
// per (shape, configuration) from the forced stream-K variant against data-parallel, a stream-K
// k-block costs 1.1-2.1 data-parallel ones, not 1.0 as first assumed (median 1.57 for 128 x 256,
// 1.32 for 128 x 128; 1.45-1.9 at K >= 7168, lower at K = 2048 where the data-parallel tiles pay
// their un-overlapped epilogue; docs/perf-log.md). Why (a guess): the CTAs of a data-parallel
// wave read the same A and B k-blocks at the same time, the stream-K ranges at staggered k
// offsets. With 1.6, every swept shape's choice is within 3% of its best variant (so it is with
// 1.5 .. 1.7 and kStreamKGain = 0.95). Clusters of 2 (B multicast, tma_cfgX_sk2, second sweep,
// 2026-11-22): 1.3 fits best (choices at 0.985 of the best variant on average over 47 shapes,
// docs/perf-log.md); B's halved traffic is most of the difference.
inline constexpr double kStreamKBlockCost = 1.6;
inline constexpr double kStreamKBlockCostCluster2 = 1.3;

// The data-parallel time in k-block times: whole waves of tiles.
inline double data_parallel_time(std::int64_t tiles, std::int32_t k_blocks, std::int32_t workers) {
  return static_cast<double>((tiles + workers - 1) / workers) * k_blocks;
}

// The split schedule's time in k-block times (the model above). tiles x k_blocks < 2^31
// (stream_k_fits).
inline double stream_k_time(std::int32_t tiles, std::int32_t k_blocks, std::int32_t workers,
                            int block_n, double block_cost = kStreamKBlockCost) {
  const Schedule s = make_schedule(tiles, k_blocks, workers, true);
  const std::int64_t iters = std::int64_t{s.sk_tiles} * k_blocks;
  const std::int64_t per_worker = (iters + workers - 1) / workers;
  const std::int64_t peers = (k_blocks + per_worker - 1) / per_worker;
  const double partial_cost = 2.0 * block_n / 256.0;
  return static_cast<double>(s.dp_tiles / workers) * k_blocks +
         block_cost * static_cast<double>(per_worker) +
         partial_cost * static_cast<double>(1 + peers);
}

// ---- the workspace ------------------------------------------------------------------------------
// One slot and two flags per CTA (cta_slot: workers x cluster_m of them):
// [flags: 2 x ctas uint32 (one per consumer warpgroup), padded to 256 B]
// [slots: ctas x kBlockM x block_n fp32, slot c = CTA c's partial tile; inside a slot,
//  warpgroup g's 64 rows as (g, register quad j, thread t) float4 at ((g x block_n / 8 + j) x 128
//  + t) x 16 B: each thread stores and loads its own accumulators, 512 contiguous bytes a warp]
// The flags are zeroed (cudaMemsetAsync) before each launch that splits.
inline constexpr std::uint64_t kFlagBytesAlign = 256;

inline std::uint64_t workspace_flag_bytes(std::int32_t ctas) {
  const std::uint64_t b = std::uint64_t{2} * 4 * static_cast<std::uint64_t>(ctas);
  return (b + kFlagBytesAlign - 1) / kFlagBytesAlign * kFlagBytesAlign;
}

inline std::uint64_t workspace_slot_bytes(int block_m, int block_n) {
  return std::uint64_t{4} * static_cast<std::uint64_t>(block_m) *
         static_cast<std::uint64_t>(block_n);
}

inline std::uint64_t workspace_bytes(std::int32_t ctas, int block_m, int block_n) {
  return workspace_flag_bytes(ctas) +
         static_cast<std::uint64_t>(ctas) * workspace_slot_bytes(block_m, block_n);
}

}  // namespace tma::ops::detail::gemm
