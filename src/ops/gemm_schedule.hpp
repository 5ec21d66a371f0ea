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
//       kFinish   k-blocks [0, e) with e < K: the CTA adds its peers' slots (the workers
//                 after it whose ranges start inside the tile, last_peer / prev_peer: in
//                 decreasing order, a fixed order: deterministic results) to its own sum, then
//                 stores the tile.
//     Exactly one worker finishes each split tile: the one whose range holds the tile's k-block 0.
//
// Clusters of 2 or 4 (cluster_m): the worker is the cluster. Its CTAs walk the same units with
// the same k-ranges, each on its own tile row of the cluster tile (rank r: tile row cluster_m c +
// r), so the producers multicast B exactly as in a data-parallel tile (every stage of every CTA
// gets A from its own CTA and one share of B from each). Slots and flags belong to CTAs: CTA (w, r)
// uses slot and flags cta_slot(w, r) = w cluster_m + r, and the finisher CTA (w, r) reads the slots
// (v, r) of its peer workers v: the same rank, so the same output rows. A CTA whose tile row (or
// a warpgroup whose 64 rows) lies past m skips the handoff on both sides alike (contributor and
// finisher have the same rank, so the same rows).
//
// No deadlock, no long waits: a kPartial unit can only be the FIRST unit of a worker's range
// (every later unit starts at a tile boundary, k-block 0) and a kFinish unit only the LAST (it
// ends inside the tile, so the range ends there). So every CTA sets its flag (if any) before it
// waits for any flag, and it waits only for CTAs of workers with larger indices. (On the TMA path
// the flag is set by a spare producer warp once the consumers have issued the slot's stores,
// gemm_kernel.cuh: publish_flags; it waits for nothing else, so the same holds.) With clusters:
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

// Unsigned division of n < 2^31 by a run-time divisor d >= 1 as one multiply and a shift. A
// 32-bit division by a run-time value compiles to ~25 dependent instructions around a MUFU.RCP,
// and the schedule walk (each unit's tile coordinates: in the producer, and in both consumer
// warpgroups between an epilogue and the next k-loop) did two to five of them per unit
// (docs/perf-log.md, session 17). With s = ceil(log2 d) and
// m = ceil(2^(31 + s) / d) (< 2^32: d > 2^(s - 1)), n / d = (n m) >> (31 + s) exactly: write
// m = 2^(31 + s) / d + e with 0 <= e < 1 and n = q d + r; then n m / 2^(31 + s) = q + r / d +
// n e / 2^(31 + s), and n e d < 2^31 x 2^s makes the last term < 1 / d <= (d - r) / d. On the GPU
// (n m) >> 31 is the high word of 2 n x m (2 n < 2^32): IMAD.HI and two shifts, 32-bit registers
// only. tests/gemm/test_gemm_host.cpp checks it against `/`.
struct FastDiv {
  std::uint32_t d = 1;
  std::uint32_t m = 1u << 31;
  std::uint32_t s = 0;
  TMA_HOST_DEVICE std::uint32_t div(std::uint32_t n) const {
#ifdef __CUDA_ARCH__
    return __umulhi(n << 1, m) >> s;
#else  // the same arithmetic: the high word of 2 n x m
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n << 1) * m) >> 32) >> s;
#endif
  }
  // n / d, and n % d into `rem`.
  TMA_HOST_DEVICE std::uint32_t divmod(std::uint32_t n, std::uint32_t& rem) const {
    const std::uint32_t q = div(n);
    rem = n - q * d;
    return q;
  }
};
inline FastDiv make_fast_div(std::uint32_t d) {
  FastDiv f;
  f.d = d;
  while ((std::uint64_t{1} << f.s) < d)
    ++f.s;
  f.m = static_cast<std::uint32_t>(((std::uint64_t{1} << (31 + f.s)) + d - 1) / d);
  return f;
}

struct Schedule {
  std::int32_t tiles;     // cluster tiles (cluster_m tile rows x 1 tile column) in raster order
  std::int32_t k_blocks;  // k-blocks per tile
  std::int32_t workers;   // persistent clusters (of cluster_m CTAs)
  std::int32_t dp_tiles;  // tiles [0, dp_tiles): whole, round-robin over the workers
  std::int32_t sk_tiles;  // tiles [dp_tiles, tiles): split along K (0: stream-K off)
  std::int32_t sk_quot;   // sk_tiles x k_blocks / workers (< 2^31: the host checks)
  std::int32_t sk_rem;    // sk_tiles x k_blocks % workers
  // The division by k_blocks of the stream-K walk (next_unit, k_shift), prepared by make_schedule.
  FastDiv k_div;
  // Aligned split (make_aligned_schedule; 0: the equal ranges above): every split tile is cut
  // into sk_pieces ranges of its own workers, the first (the finisher's) longer than the others,
  // which take sk_piece k-blocks each.
  std::int32_t sk_pieces = 0;
  std::int32_t sk_piece = 0;
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

// The grouped raster (raster_tile below) with its divisors prepared on the host: cluster tile t
// lies in group t / (group_rows x tiles_n), column r / rows of it at row r % rows (r: t's place in
// the group; rows = group_rows, or what is left of the cluster rows in the last group); odd
// groups count their columns from the last one (tiles_n - 1 - r / rows).
struct Raster {
  FastDiv per_group;  // group_rows x tiles_n cluster tiles per group
  FastDiv rows;       // group_rows
  FastDiv last_rows;  // cluster rows of the last group (<= group_rows)
  std::uint32_t last_group;
  std::uint32_t last_column;  // tiles_n - 1
};
// A group of more rows than there are walks them all, as one of cluster_rows rows: so the group
// size stays below 2^31 tiles, as the tile count does (cluster_rows, tiles_n >= 1; the host's
// empty products never launch).
inline Raster make_raster(std::int32_t cluster_rows, std::int32_t tiles_n,
                          std::int32_t raster_group) {
  const auto all_rows = static_cast<std::uint32_t>(cluster_rows > 1 ? cluster_rows : 1);
  const auto asked = static_cast<std::uint32_t>(raster_group > 1 ? raster_group : 1);
  const std::uint32_t group_rows = asked < all_rows ? asked : all_rows;
  const std::uint32_t last_group = (all_rows - 1) / group_rows;
  return Raster{make_fast_div(group_rows * static_cast<std::uint32_t>(tiles_n > 1 ? tiles_n : 1)),
                make_fast_div(group_rows), make_fast_div(all_rows - last_group * group_rows),
                last_group, static_cast<std::uint32_t>(tiles_n > 1 ? tiles_n - 1 : 0)};
}

// The output tile (tile row tm, tile column tn) that the CTA of cluster rank `rank` computes for
// cluster tile t: groups of raster_group cluster rows are walked column by column (M fastest
// inside a group), so the clusters working at the same time share A tiles (rows) and B tiles
// (columns) through L2; both CTAs of a cluster take the same column and adjacent rows. Odd
// groups walk their columns backwards (a serpentine): a group starts on the B columns the one
// before it ended on, which are still in L2 (DRAM reads -9 to -11% at 8192 x 7168 x 2048 on the
// H100, session 21: docs/perf-log.md). tm may be >= tiles_m (the second CTA of the last cluster
// when tiles_m is odd: no rows to compute). 32-bit unsigned arithmetic (the host keeps the tile
// counts below 2^31).
TMA_HOST_DEVICE inline void raster_tile(const Raster& g, std::int32_t t, int rank, int cluster_m,
                                        int& tm, int& tn) {
  const auto ut = static_cast<std::uint32_t>(t);
  std::uint32_t r, row;
  const std::uint32_t group = g.per_group.divmod(ut, r);
  // A branch rather than a select of the two divisors: each side reads its divisor's fields
  // straight from the kernel parameters, with no registers to hold the chosen one (a select made
  // config 7's 24-register producer spill).
  std::uint32_t column;
  if (group == g.last_group) {
    column = g.last_rows.divmod(r, row);
  } else {
    column = g.rows.divmod(r, row);
  }
  if ((group & 1u) != 0) column = g.last_column - column;
  tm = static_cast<int>((group * g.rows.d + row) * static_cast<std::uint32_t>(cluster_m)) + rank;
  tn = static_cast<int>(column);
}
// The same from the raster's sizes (host tests).
inline void raster_tile(std::int32_t t, std::int32_t cluster_rows, std::int32_t tiles_n,
                        std::int32_t raster_group, int rank, int cluster_m, int& tm, int& tn) {
  raster_tile(make_raster(cluster_rows, tiles_n, raster_group), t, rank, cluster_m, tm, tn);
}

// The first tile of worker w for its producer's first load, read with one indexed constant access
// (Params::first_tile; gemm_kernel.cuh: produce_tma): the tile row of cluster rank 0 in the
// low 16 bits, the tile column in the high 16, when w's first unit is a whole data-parallel tile
// (its k-block 0 comes first, shift 0); kNoFirstTile when it is a stream-K piece or a coordinate
// does not fit 16 bits (the producer then walks first). Why: the walk to the first unit
// (schedule_start, next_unit, raster_tile) is a dependent chain through several kernel-parameter
// lines, ~1k cycles after the cluster barrier wherever it runs, and the first load waited for it
// (docs/perf-log.md, session 36).
inline constexpr std::uint32_t kNoFirstTile = ~0u;
inline std::uint32_t first_tile_of(const Schedule& s, const Raster& g, std::int32_t w,
                                   int cluster_m) {
  if (w >= s.dp_tiles) return kNoFirstTile;  // not a data-parallel first unit (next_unit)
  int tm = 0, tn = 0;
  raster_tile(g, w, 0, cluster_m, tm, tn);
  if (tm + cluster_m - 1 > 0xffff || tn > 0xffff) return kNoFirstTile;
  return static_cast<std::uint32_t>(tm) | (static_cast<std::uint32_t>(tn) << 16);
}
// The tile of cluster rank `rank` that entry `first` (not kNoFirstTile) of first_tile_of names.
TMA_HOST_DEVICE inline void first_tile_decode(std::uint32_t first, int rank, int& tm, int& tn) {
  tm = static_cast<int>(first & 0xffffu) + rank;
  tn = static_cast<int>(first >> 16);
}

// The workspace slot and flag pair of the CTA of cluster rank `rank` in worker (cluster) w: one
// per CTA, so a finisher CTA reads the slot of the same rank in each peer cluster.
TMA_HOST_DEVICE inline std::int32_t cta_slot(std::int32_t w, int rank, int cluster_m) {
  return w * cluster_m + rank;
}

// The first stream-K iteration of worker w (w <= workers: begin(workers) is the end). Aligned:
// worker w = t P + j takes piece j of split tile t, whose pieces after the first end at the tile's
// end, sk_piece k-blocks each.
TMA_HOST_DEVICE inline std::int32_t sk_begin(const Schedule& s, std::int32_t w) {
  if (s.sk_pieces != 0) {
    const std::int32_t t = w / s.sk_pieces;
    const std::int32_t j = w - t * s.sk_pieces;
    return t * s.k_blocks + (j == 0 ? 0 : s.k_blocks - (s.sk_pieces - j) * s.sk_piece);
  }
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
  const auto split = static_cast<std::int32_t>(s.k_div.div(static_cast<std::uint32_t>(c.it)));
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

// ---- the k order of a tile: which k-block an iteration loads ------------------------------------
// A tile's k-blocks may be summed in any order; the stream-K tiles use one that keeps the workers'
// loads aligned in time. Without it, worker w runs iteration sk_begin(w) + tau at time tau (in
// k-blocks after the stream-K start), i.e. k-block (sk_begin(w) + tau) mod K: every worker at a
// different k offset, so the tiles of one tile row (column) read their A (B) k-blocks at times
// spread over the whole stream-K phase, and L2 must hold all of their A and B to serve the reuse
// that a data-parallel wave gets for free (its tiles read the same k-block at the same time).
// Rotated: iteration i of split tile t loads k-block (i mod K + shift(t)) mod K, with shift(t) =
// -sk_begin(w) mod K for the worker w that runs the tile's last iteration. That worker then loads
// k-block tau mod K at time tau, whichever tile it is in (for every tile its range covers
// through its end: its first, partial tile and every whole one after it), so all of them read
// the same k-block at the same time; the finish units (each range's last) run together too,
// offset by the range length, and a tile's other contributors (tiles of 3 pieces) by multiples of
// it. Every piece of a tile uses the tile's shift, so the pieces still cover k-blocks [0, K)
// exactly once; the sum order changes, and stays fixed for a given schedule (deterministic).
// Data-parallel tiles (all start at k-block 0 together) keep shift 0.

// The worker whose stream-K range holds iteration i (0 <= i < sk_tiles x k_blocks).
TMA_HOST_DEVICE inline std::int32_t sk_owner(const Schedule& s, std::int32_t i) {
  if (s.sk_pieces != 0) {
    const std::int32_t t = i / s.k_blocks;
    const std::int32_t first = s.k_blocks - (s.sk_pieces - 1) * s.sk_piece;  // the finisher's
    const std::int32_t into = i - t * s.k_blocks - first;
    return t * s.sk_pieces + (into < 0 ? 0 : 1 + into / s.sk_piece);
  }
  const auto ui = static_cast<std::uint32_t>(i);
  const auto q = static_cast<std::uint32_t>(s.sk_quot);
  const auto r = static_cast<std::uint32_t>(s.sk_rem);
  const std::uint32_t long_part = r * (q + 1);  // the first r workers run q + 1 iterations
  // Plain divisions: prepared ones (FastDiv) here made config 7's 24-register producer spill.
  if (ui < long_part) return static_cast<std::int32_t>(ui / (q + 1));
  return static_cast<std::int32_t>(r + (ui - long_part) / q);  // q > 0 here: i < r when q == 0
}

// The rotation of tile `tile`'s k order (0 <= shift < k_blocks; 0 for data-parallel tiles).
TMA_HOST_DEVICE inline std::int32_t k_shift(const Schedule& s, std::int32_t tile) {
  if (tile < s.dp_tiles) return 0;
  // Aligned: the last piece starts sk_piece k-blocks before the tile's end (and reads no
  // divisor: the same value as the general form below, which the host tests check).
  if (s.sk_pieces != 0) return s.sk_piece;
  const std::int32_t last = (tile - s.dp_tiles + 1) * s.k_blocks - 1;
  const auto begin = static_cast<std::uint32_t>(sk_begin(s, sk_owner(s, last)));
  const auto k = static_cast<std::uint32_t>(s.k_blocks);
  const std::uint32_t into = begin - s.k_div.div(begin) * k;  // begin % k
  return static_cast<std::int32_t>(into == 0 ? 0 : k - into);
}

// The k-block that iteration kb (0 <= kb < k_blocks) of a tile with rotation `shift` loads.
TMA_HOST_DEVICE inline std::int32_t rotated_k_block(const Schedule& s, std::int32_t shift,
                                                    std::int32_t kb) {
  const std::int32_t x = kb + shift;
  return x >= s.k_blocks ? x - s.k_blocks : x;
}

// ---- the finisher's peers, in the order it adds them -------------------------------------------
// Decreasing worker order. Why: the last peer's piece is the first unit of its range and runs to
// the tile's end, so it is done early in the stream-K phase; a peer whose whole range lies inside
// the tile (tiles of 3 or more pieces: ranges shorter than K) works until the end of the phase,
// like the finisher itself, and then still writes its partial tile and sets its flag (gemm_trace,
// 1024 x 2112 x 7168: ~4,700 cycles). In increasing order the finisher waited for that peer
// first and read the ready one after it; in decreasing order that read runs while the late peer
// writes.

// The finisher w's last peer for split tile `tile` (raster index): the worker holding the tile's
// last iteration, or -1 when that is w itself (no peer).
TMA_HOST_DEVICE inline std::int32_t last_peer(const Schedule& s, std::int32_t tile,
                                              std::int32_t w) {
  const std::int32_t owner = sk_owner(s, (tile - s.dp_tiles + 1) * s.k_blocks - 1);
  return owner > w ? owner : -1;
}

// The peer before peer v (> w) of finisher w: the next lower worker above w with a non-empty
// range (every worker between w and the last peer starts inside the tile), or -1.
TMA_HOST_DEVICE inline std::int32_t prev_peer(const Schedule& s, std::int32_t w, std::int32_t v) {
  for (--v; v > w; --v) {
    if (sk_begin(s, v + 1) > sk_begin(s, v)) return v;  // an empty range has no piece
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
  Schedule s{tiles, k_blocks, workers, tiles, 0, 0, 0, FastDiv{}};
  s.k_div = make_fast_div(static_cast<std::uint32_t>(k_blocks > 1 ? k_blocks : 1));
  if (!split) return s;
  const std::int32_t full = tiles / workers, rem = tiles % workers;
  s.sk_tiles = rem == 0 ? workers : rem + (full >= 1 ? workers : 0);
  s.dp_tiles = tiles - s.sk_tiles;
  const std::int64_t iters = std::int64_t{s.sk_tiles} * k_blocks;
  s.sk_quot = static_cast<std::int32_t>(iters / workers);
  s.sk_rem = static_cast<std::int32_t>(iters % workers);
  return s;
}

// The split of one cluster row of `tiles` tiles over pieces x tiles workers (gemm_config.hpp:
// one_row_split_workers): each tile is cut into `pieces` ranges (pieces >= 2, k_blocks >=
// pieces), worker t pieces + j taking piece j of tile t; the finisher's piece (j = 0) is at
// least `lead` k-blocks longer than an even share, the others take what is left in equal parts
// (at least one k-block each). Why: every piece runs from the split's start, so with equal ranges
// all of a tile's workers end their k-loops together, and the finisher then waits while its
// peers store their partial tiles and publish their flags (gemm_kernel.cuh: ~3-4k cycles, H100,
// docs/perf-log.md session 34); a longer finisher piece ends when those flags are set. Same
// decomposition rules as make_schedule's otherwise (kPartial pieces are first units, a kFinish
// piece the last: each worker here has one unit).
inline Schedule make_aligned_schedule(std::int32_t tiles, std::int32_t k_blocks,
                                      std::int32_t pieces, std::int32_t lead) {
  Schedule s = make_schedule(tiles, k_blocks, tiles * pieces, true);
  const std::int32_t even = (k_blocks + pieces - 1) / pieces;
  const std::int32_t rest = k_blocks - sk_min(k_blocks, even + (lead > 0 ? lead : 0));
  const std::int32_t piece = rest / (pieces - 1);
  s.sk_pieces = pieces;
  s.sk_piece = piece > 1 ? piece : 1;
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
//   fixup = kStreamKHandoff (block_n / 256) x (1 + peers): writing one fp32 partial tile and
//           reading `peers` of them, peers = ceil(K / q) (q iterations a worker).
// Fitted to the sweep of 2026-11-24 (session 6: tma-bench gemm --no-ordinary --sweep --seed 11,
// H200, 47 shapes, bench/results/h200-2026-11-24-s6-gemm-sweep.json), the first with the rotated
// k order above. A split k-block costs 1.1 data-parallel ones with clusters of 2 and 1.5 with
// clusters of 1 (no B multicast), and each partial tile written or read ~6 k-block times (the
// handoff's ~5,400 / ~7,400 cycles measured by gemm_trace, docs/perf-log.md GEMM v1.6 item 5).
// With these the choices average 0.995 of each shape's best variant (worst 0.957), against 0.986
// for the previous constants (1.3, 1.6, 2 and kStreamKGain 0.95, fitted in 2026-11-22's sweeps,
// when the unrotated k order made a split k-block of a long-K shape cost up to ~1.6: its DRAM
// reads at 2048 x 4096 x 11008 were 905 MB against 288 MB rotated, ncu, same session).
inline constexpr double kStreamKBlockCost = 1.5;
inline constexpr double kStreamKBlockCostCluster2 = 1.1;
inline constexpr double kStreamKHandoff = 6.0;

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
  const double partial_cost = kStreamKHandoff * block_n / 256.0;
  return static_cast<double>(s.dp_tiles / workers) * k_blocks +
         block_cost * static_cast<double>(per_worker) +
         partial_cost * static_cast<double>(1 + peers);
}

// ---- the workspace ------------------------------------------------------------------------------
// One slot and two flags per CTA (cta_slot: workers x cluster_m of them):
// [flags: 2 x ctas uint64 (one per consumer warpgroup), padded to 256 B]
// [slots: ctas x kBlockM x block_n fp32, slot c = CTA c's partial tile; inside a slot,
//  warpgroup g's 64 rows as (g, register quad j, thread t) float4 at ((g x block_n / 8 + j) x 128
//  + t) x 16 B: each thread stores and loads its own accumulators, 512 contiguous bytes a warp]
// A flag is set when it holds the launch's tag (Params::sk_epoch), a value no earlier launch used:
// nothing clears the flags before a launch (no memset in the stream), and neither a flag left set
// by an earlier launch nor other data the memory held can pass for one of this launch.
inline constexpr std::uint64_t kFlagBytesAlign = 256;

// The tag of launch number n of the process (a counter started at a random value): splitmix64's
// finalizer, a bijection of 64-bit values, so distinct launches get distinct tags, scattered over
// all 2^64 values (a stale word of a reused buffer matches one by chance with probability 2^-64).
// The host skips the two values a cleared or poisoned buffer is most likely to hold (0, ~0).
TMA_HOST_DEVICE constexpr std::uint64_t flag_epoch(std::uint64_t n) {
  std::uint64_t z = n + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline std::uint64_t workspace_flag_bytes(std::int32_t ctas) {
  const std::uint64_t b = std::uint64_t{2} * 8 * static_cast<std::uint64_t>(ctas);
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
