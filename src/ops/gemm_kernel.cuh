// tmakit ops (internal): the GEMM kernel. Included by gemm.cu (types, no kernel instances) and
// gemm_kernels.cuh (the instances, compiled in four translation units: gemm_kernels_*.cu).
//
// One CTA = 3 warpgroups, persistent over output tiles of kBlockM x kBlockN:
//
//   warpgroup 0 (producer, setmaxnreg.dec)   warpgroups 1, 2 (consumers, setmaxnreg.inc)
//   (except the 128 x 176 ping-pong, the consumers after walking their first unit; the producer
//   issues its first k-block from a host table before the dec: produce_tma)
//   -----------------------------------      ------------------------------------------------
//   TMA path: one thread, per k-block:       per k-block: wait full, 4 x wgmma m64nNk16 on
//     acquire stage (empty barrier)            rows 64 w .. 64 w + 63 of the A tile and the
//     expect A + B bytes on full               whole B tile; commit; wait for the previous
//     load 2 A atoms; load B atoms, or         k-block's group; release its stage to every
//     its share of them multicast to all       CTA whose copies fill it (one arrival per
//     CTAs of a 2- or 4-CTA cluster            warpgroup and CTA)
//   ordinary path: 128 threads cp.async      per tile: epilogue (gemm_epilogue.cuh) while the
//     the same tiles, wait for the group,      producer already loads the next tile
//     fence.proxy.async, arrive on full
//
// Ping-pong configurations (Config::kPingPong): each consumer warpgroup multiplies all 128 rows of
// every other unit (two wgmma per k-step, one per 64-row half) and the two take turns at the
// tensor cores (order barriers; consume() says how), so one's epilogue runs under the other's
// k-loop; the stages of the other's units are skipped.
//
// Shared memory (1024-aligned): kStages x [A: 2 atoms | B: kBlockN / 64 atoms] (atom = 64 x 64
// 16-bit elements in SWIZZLE_128B, SwizzledTile128), then 2 x 2 epilogue buffers of 8 KiB.
// Tile order: clusters walk a grouped raster (tile_of); the CTAs of a cluster take the same tile
// column and adjacent tile rows, so they share B.
//
// Work: each cluster (both its CTAs alike) walks its units of Params::sched (gemm_schedule.hpp):
// whole tiles, and with stream-K pieces of split tiles: the producer loads the unit's k-blocks
// (a split tile's in its rotated order, gemm_schedule.hpp: k_shift; multicasting its half of B
// in a 2-CTA cluster, as for whole tiles), the consumers accumulate
// them; a kPartial unit's sums go to the CTA's workspace slot (cta_slot; each consumer warpgroup
// its 64 rows, then its flag: TMA path, the warpgroup arrives on a named barrier and goes on while
// the producer warpgroup's flag warp waits there and publishes it with fence.acq_rel.gpu +
// st.relaxed.gpu; ordinary path, the warpgroup's bar.sync and one thread's fence + flag), a
// kFinish unit's finisher adds its peers' slots of the same cluster rank in decreasing worker
// order (one thread polls the peer's flag with ld.acquire.gpu; TMA path: it bulk-copies the slot
// into the idle pipeline ring and every thread adds its values from there, add_peer_partials_bulk;
// ordinary path: bar.sync of the warpgroup, then every thread ld.global.cg's its own
// accumulators' values) before the usual epilogue.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gemm_config.hpp"
#include "gemm_epilogue.cuh"
#include "tma/device.cuh"
#include "tma/device/wgmma.hpp"
#include "tma/ptx/cp_async.hpp"
#include "tma/ptx/flag.hpp"
#include "tma/ptx/wgmma.hpp"

namespace tma::ops::detail::gemm {

enum class Role { kProducer, kConsumer };

// The worker (gemm_schedule.hpp) this CTA's cluster runs: Params::worker_of of the cluster
// (blockIdx.x / cluster_m, %clusterid.x; the block itself on the ordinary path, launched without
// clusters), the cluster itself past the map. A constant-bank load, once per role.
__device__ __forceinline__ int worker_of(const Params& p) {
  const std::uint32_t c = cluster_id_x();
  return c < static_cast<std::uint32_t>(kWorkerMap) ? p.worker_of[c] : static_cast<int>(c);
}

// The output tile of cluster tile `t` for the CTA of cluster rank `rank` (gemm_schedule.hpp's
// grouped raster, which the host tests check).
__device__ __forceinline__ void tile_of(const Params& p, int t, int rank, int cluster_m, int& tm,
                                        int& tn) {
  raster_tile(p.raster, t, rank, cluster_m, tm, tn);
}

// Coordinates (innermost first) of the atom whose K range starts at k0 and MN range at mn0.
template <MatrixMajor kMajor>
__device__ __forceinline__ void atom_coords(std::int32_t (&c)[2], int k0, int mn0) {
  if constexpr (kMajor == MatrixMajor::kK) {
    c[0] = k0;
    c[1] = mn0;
  } else {
    c[0] = mn0;
    c[1] = k0;
  }
}

// ---- producer: TMA --------------------------------------------------------------------------

using AtomBox = Box<std::uint16_t, 64, 64>;  // one atom: 8 KiB
static_assert(AtomBox::kBytes == kAtomBytes, "an atom is a 64 x 64 box of 16-bit elements");

// What the TMA producer needs of its CTA's place in the cluster: the multicast mask and its share
// of B. Atoms (MN-major B): with a cluster each CTA loads its share of the B atoms, atoms
// [ceil(r A / c), ceil((r + 1) A / c)) for rank r of c CTAs and A atoms (the lower ranks the
// larger shares; in clusters of 4 a CTA may get none), and multicasts them to all. A box
// (K-major B): its share of the rows (row_box_rows: the map's box holds kBlockN / cluster_m
// rows rounded up to 8), starting b_start rows into the tile (row_box_start: where the shares
// overlap, the last one ends at kBlockN).
template <class Cfg, MatrixMajor kB>
struct ProducerShare {
  std::uint16_t mask;
  int b_start, b_first, b_count;
  __device__ __forceinline__ ProducerShare(int rank, int cluster_m) {
    mask = cta_mask_all(static_cast<std::uint32_t>(cluster_m));
    b_start = kB == MatrixMajor::kK ? row_box_start(Cfg::kBlockN, cluster_m, rank) : 0;
    const int log2_cluster = cluster_m >> 1;  // cluster_m is 1, 2 or 4: a shift, not a division
    b_first = (rank * Cfg::kAtomsB + cluster_m - 1) >> log2_cluster;
    b_count = (((rank + 1) * Cfg::kAtomsB + cluster_m - 1) >> log2_cluster) - b_first;
  }
};

// One k-block into stage s, which the caller has acquired: the full barrier's expected bytes, then
// A's and B's copies (k0: the k-block's first element; a_row, b_col: this CTA's first A row and B
// column; tn: the output tile's column).
template <class Cfg, MatrixMajor kA, MatrixMajor kB>
__device__ __forceinline__ void issue_k_block(Pipeline<Cfg::kStages>& pipe, PipelineState s,
                                              unsigned char* smem, const TensorMap* map_a,
                                              const TensorMap* map_b,
                                              const ProducerShare<Cfg, kB>& share, int cluster_m,
                                              int k0, int a_row, int b_col, int tn) {
  constexpr bool kBoxA = kA == MatrixMajor::kK;
  constexpr bool kBoxB = kB == MatrixMajor::kK;
  // Every A and B byte of the stage lands in this CTA: its own copies and the peers'
  // multicast shares of B (overlapping shares: row_box_stage_rows rows of B).
  if constexpr (kBoxB && Cfg::kBlockN % 32 != 0) {
    // (Clusters of 4 overlap where kBlockN is not a multiple of 32, clusters of 2 where it
    // is not one of 16: 136. Selects of constants, no value of their own live across the
    // loop: config 7's producer has 24 registers.)
    constexpr std::uint32_t kOverlapped2 =
        Cfg::kABytes + static_cast<std::uint32_t>(row_box_stage_rows(Cfg::kBlockN, 2)) * 128;
    constexpr std::uint32_t kOverlapped4 =
        Cfg::kABytes + static_cast<std::uint32_t>(row_box_stage_rows(Cfg::kBlockN, 4)) * 128;
    if constexpr (kOverlapped2 == Cfg::kStageBytes) {
      pipe.producer_commit(s, cluster_m == 4 ? kOverlapped4 : Cfg::kStageBytes);
    } else {
      pipe.producer_commit(s, cluster_m == 4   ? kOverlapped4
                              : cluster_m == 2 ? kOverlapped2
                                               : Cfg::kStageBytes);
    }
  } else {
    pipe.producer_commit(s, Cfg::kStageBytes);
  }
  unsigned char* a = smem + s.index * Cfg::kStageBytes;
  unsigned char* b = a + Cfg::kABytes;
  if constexpr (kBoxA) {
    const std::int32_t c[2] = {k0, a_row};
    load(a, map_a, pipe.full(s), c);
  } else {
#pragma unroll
    for (int j = 0; j < Cfg::kAtomsA; ++j) {
      std::int32_t c[2];
      atom_coords<kA>(c, k0, a_row + 64 * j);
      load(a + j * kAtomBytes, map_a, pipe.full(s), c);
    }
  }
  if constexpr (kBoxB) {
    const std::int32_t c[2] = {k0, b_col};
    // This CTA's rows start b_start rows into the stage's B tile: b_col minus the
    // tile's first column, re-derived here rather than kept in a register of its own (at 24
    // registers, config 7's producer spilled with one more value live across the k-loop).
    unsigned char* dst = b + (b_col - tn * Cfg::kBlockN) * 128;
    if (cluster_m == 1) {
      load(dst, map_b, pipe.full(s), c);
    } else {
      load_multicast(dst, map_b, pipe.full(s), c, share.mask);
    }
  } else {
    for (int j = share.b_first; j < share.b_first + share.b_count; ++j) {
      std::int32_t c[2];
      atom_coords<kB>(c, k0, b_col + 64 * j);
      if (cluster_m == 1) {
        load(b + j * kAtomBytes, map_b, pipe.full(s), c);
      } else {
        load_multicast(b + j * kAtomBytes, map_b, pipe.full(s), c, share.mask);
      }
    }
  }
}

// This CTA's first-tile table entry (Params::first_tile; kNoFirstTile where none), with
// %clusterid.x read by a volatile asm: a second read is not merged with an earlier one (cuda::ptx's
// is a plain asm), so no value of it is held across a setmaxnreg.
__device__ __forceinline__ std::uint32_t table_entry(const Params& p) {
  const std::uint32_t c = ptx::cluster_id_x_fresh();
  return c < static_cast<std::uint32_t>(kWorkerMap) ? p.first_tile[c] : kNoFirstTile;
}

// The table tile's first ring fill: its k-blocks 0 .. fill - 1 into stages 0 .. fill - 1 (a
// whole data-parallel tile, k order from 0; the ring's first pass, free stages), fill =
// min(k_blocks, stages). Issued by produce_tma's kTable or by fill_from_table; the producer's
// walk then skips them. Not better: a first fill of 2 k-blocks, the rest after the walk (the
// walk ~1.5k cycles sooner, the first unit's first-stage wait 60-150 cycles shorter; H100, eight
// alternating rounds: the sets' ratios to cuBLASLt unchanged, 1.0000 / 1.0001; session 46,
// docs/perf-log.md; the patch is bench/results/h100-2026-12-05-s46-first-fill.patch).
template <int kStages>
__device__ __forceinline__ int table_fill(const Schedule& sched) {
  return sched.k_blocks < kStages ? sched.k_blocks : kStages;
}

// k-block kb of the table tile `first` (table_entry, not kNoFirstTile) into stage s, which is free
// (the ring's first fill: the acquire does not wait); s advanced.
template <class Cfg, MatrixMajor kA, MatrixMajor kB>
__device__ __forceinline__ void issue_table_k_block(Pipeline<Cfg::kStages>& pipe, PipelineState& s,
                                                    unsigned char* smem, const TensorMap* map_a,
                                                    const TensorMap* map_b,
                                                    const ProducerShare<Cfg, kB>& share, int rank,
                                                    int cluster_m, std::uint32_t first, int kb) {
  int ftm, ftn;
  first_tile_decode(first, rank, ftm, ftn);
  pipe.producer_acquire(s);
  issue_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, cluster_m, kb * kBlockK,
                             ftm * Cfg::kTileM, ftn * Cfg::kBlockN + share.b_start, ftn);
  s.advance();
}

// Config::kConsumerFill: one thread of the second consumer warpgroup, after the PDL wait and
// before its setmaxnreg.inc, issues the table tile's first ring fill (table_fill). produce_tma
// skips those k-blocks (its first unit is that tile).
template <class Cfg, MatrixMajor kA, MatrixMajor kB>
__device__ __forceinline__ void fill_from_table(Pipeline<Cfg::kStages>& pipe, unsigned char* smem,
                                                const TensorMap* map_a, const TensorMap* map_b,
                                                const Params& p, int rank, int cluster_m) {
  const std::uint32_t first = table_entry(p);
  if (first == kNoFirstTile) return;
  const ProducerShare<Cfg, kB> share(rank, cluster_m);
  trace(p, 0, 0, 1);
  PipelineState s = pipe.start();
  const int fill = table_fill<Cfg::kStages>(p.sched);
  for (int kb = 0; kb < fill; ++kb)
    issue_table_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, rank, cluster_m, first,
                                     kb);
}

// TMA_GEMM_EARLY_ISSUE (1, the default): configurations with Config::kEarlyIssue start with the
// table's ring fill (produce_tma's kTable), and their consumers walk their first unit before
// their setmaxnreg.inc (consume's `ready`). 0: every configuration as the wide ping-pong (the
// order before session 36, kept to reproduce its measurements).
#ifndef TMA_GEMM_EARLY_ISSUE
#define TMA_GEMM_EARLY_ISSUE 1
#endif

// The producer warpgroup (all 128 threads): its setmaxnreg.dec and PDL wait, then one thread
// loads every k-block of every tile of this CTA into the ring; the other threads return.
//
// A K-major operand goes in one box per k-block: A's kBlockM rows, B's block_n / cluster_m rows
// of this CTA (multicast to the cluster), each row one 128-byte swizzle row, so the box lands as
// the stacked 64 x 64 atoms would. An MN-major operand goes in 64 x 64 atoms: the 128-byte
// swizzle span bounds a box's inner dimension, here MN. Why whole boxes: per k-block one TMA
// instruction per operand instead of two to four, as cuBLAS's kernels issue them. Measured (H200,
// docs/perf-log.md session 19): faster where a CTA waits on its loads (128 x 7168 x 2048 18.0 ->
// 16.5 us, the other M = 128 shapes +0.5-3%), the rest within the rounds' spread.
//
// kTable (Config::kEarlyIssue): after the PDL wait thread 0 reads its cluster's first tile from
// the host's table (table_entry: one indexed constant read), issues that tile's k-block 0
// before the warpgroup's setmaxnreg.dec, the rest of the tile's first ring fill after the dec, and
// only then walks its schedule, whose first unit is that tile (its issued k-blocks are skipped).
// Why: the walk to the first unit (schedule_start, next_unit, tile_of) is a dependent chain through
// several parameter lines, ~1k cycles wherever it runs (session 36 item 5), and the consumers'
// setmaxnreg.inc waits for this dec. Measured (H100, docs/perf-log.md sessions 36-37; gemm_trace,
// clean cold operands): the first load ~1.35-1.5k cycles after entry instead of ~2k; with the
// dec after the fill's first k-block instead of after the walk, the consumers' first unit
// 300-500 cycles earlier, 2048^3 0.6-0.9% faster in the README regime (the sets' geomeans
// within the rounds' spread).
// Config::kConsumerFill (the wide ping-pong, whose 24-register producer spilled 4-8 bytes in every
// form of kTable tried, session 41): a thread of the second consumer warpgroup issues the table
// tile's first ring fill (fill_from_table) and this thread walks that tile first, in a block
// before the unit loop. Measured (H200, docs/perf-log.md session 41; gemm_trace, clean cold
// operands): the first unit's first-stage wait 1,125-1,156 -> 594-660 cycles, each CTA's lifetime
// ~0.8k cycles shorter at 1024 x 11008 x 1024 / 4096 and 2048 x 7168 x 2048; ncu at base clocks,
// 1024 x 11008 x K: ~1.1k cycles of the ~3k that cuBLASLt's 176 x 128 kernel of the same tile
// took less.
// Not better: the whole fill before the dec (the consumers' inc then waits for it; session 36
// item 1); the table read before the PDL wait (session 37 item 2); L2 prefetches of the fill
// before the PDL wait (the loads queue behind them: 2048^3 -15%; item 3); the table's line warmed
// at the kernel's entry (the first load ~270 cycles earlier, the consumers then wait for its
// DRAM data all the same; item 5).
template <class Cfg, MatrixMajor kA, MatrixMajor kB, bool kTable>
__device__ __forceinline__ void produce_tma(Pipeline<Cfg::kStages>& pipe, unsigned char* smem,
                                            const TensorMap* map_a, const TensorMap* map_b,
                                            const Params& p, int rank, int cluster_m) {
  static_assert(kB == MatrixMajor::kK || !Cfg::kRowBoxB,
                "a width that is not a multiple of 64 needs B K-major");
  const ProducerShare<Cfg, kB> share(rank, cluster_m);
  PipelineState s = pipe.start();
  // The k-blocks of the first unit issued before the walk (kTable only).
  int issued = 0;
  std::uint32_t first = kNoFirstTile;
  if constexpr (kTable) {
    cudaGridDependencySynchronize();
    if (threadIdx.x == 0) {
      if constexpr (TMA_GEMM_TRACE != 0) trace_kernel(p, kProducerReady, clock64());
      first = table_entry(p);
      if (first != kNoFirstTile) {
        trace(p, 0, 0, 1);
        issue_table_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, rank, cluster_m, first,
                                         0);
        issued = 1;
      }
    }
  }
  warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
  if constexpr (!kTable) cudaGridDependencySynchronize();
  if (threadIdx.x != 0) return;
  if constexpr (TMA_GEMM_TRACE != 0) {
    trace_kernel(p, kProducerRegAlloc, clock64());
    if constexpr (!kTable) trace_kernel(p, kProducerReady, clock64());
  }
  if constexpr (kTable) {
    // The rest of the table tile's first ring fill (a whole data-parallel tile: k-blocks 0 ..
    // k_blocks - 1 in order): free stages, no wait.
    if (issued != 0) {
      const int fill = table_fill<Cfg::kStages>(p.sched);
      for (; issued < fill; ++issued)
        issue_table_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, rank, cluster_m, first,
                                         issued);
    }
  }
  Cursor cursor = schedule_start(p.sched, worker_of(p));
  Unit u;
  int first_unit = 0;  // the loop's first unit index (trace stamps only)
  if constexpr (Cfg::kConsumerFill && TMA_GEMM_EARLY_ISSUE != 0) {
    // A consumer thread issued the table tile's first ring fill (fill_from_table); that tile is
    // this CTA's first unit: the rest of it here, in order (shift 0), before the unit loop.
    if (table_entry(p) != kNoFirstTile && next_unit(p.sched, cursor, u)) {
      first_unit = 1;
      if constexpr (TMA_GEMM_TRACE != 0) {
        ptx::fence_operand(u.tile);
        trace_kernel(p, kProducerCursor, clock64());
      }
      int tm, tn;
      tile_of(p, u.tile, rank, cluster_m, tm, tn);
      trace(p, 0, 0, 0);
      const int a_row = tm * Cfg::kTileM;
      const int b_col = tn * Cfg::kBlockN + share.b_start;
      const int fill = table_fill<Cfg::kStages>(p.sched);
      s.advance(static_cast<std::uint32_t>(fill));
      for (int kb = fill; kb < u.kb_end; ++kb) {
        pipe.producer_acquire(s);
        issue_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, cluster_m, kb * kBlockK,
                                   a_row, b_col, tn);
        s.advance();
      }
      trace(p, 0, 0, 2);
    }
  }
  // Few values live across the k-loop (a wide ping-pong configuration leaves this thread 24
  // registers: gemm_config.hpp): the unit's A row and B column, its rotated k-block and the count
  // left, the stage.
  for (int i = first_unit; next_unit(p.sched, cursor, u); ++i) {
    if constexpr (TMA_GEMM_TRACE != 0) {
      if (i == 0) {
        ptx::fence_operand(u.tile);
        trace_kernel(p, kProducerCursor, clock64());
      }
    }
    int tm, tn;
    tile_of(p, u.tile, rank, cluster_m, tm, tn);
    trace(p, 0, i, 0);
    const int a_row = tm * Cfg::kTileM;
    const int b_col = tn * Cfg::kBlockN + share.b_start;
    // The tile's k order (gemm_schedule.hpp: k_shift, rotated_k_block), stepped with a wrap.
    int kr = rotated_k_block(p.sched, k_shift(p.sched, u.tile), u.kb_begin);
    int left = u.kb_end - u.kb_begin;
    if (i == 0 && issued != 0) {  // the table's tile (shift 0): its first k-blocks are out
      kr = rotated_k_block(p.sched, 0, issued);
      left -= issued;
    }
    for (; left > 0; --left) {
      pipe.producer_acquire(s);
      if (left == u.kb_end - u.kb_begin) trace(p, 0, i, 1);
      issue_k_block<Cfg, kA, kB>(pipe, s, smem, map_a, map_b, share, cluster_m, kr * kBlockK, a_row,
                                 b_col, tn);
      kr = kr + 1 == p.sched.k_blocks ? 0 : kr + 1;
      s.advance();
    }
    trace(p, 0, i, 2);
  }
  // Wait until every stage's last fill has been released by the consumers of every CTA that read
  // it: then no peer's release still targets this CTA's shared memory, and its own consumers
  // waited for every multicast copy into it (full barriers), so the CTA may exit without a
  // cluster-wide barrier (the kernel's end: gemm_kernel).
  pipe.producer_drain(s);
}

// ---- producer: ordinary loads (cp.async) ------------------------------------------------------

// The 16-byte chunks of one operand tile (kMN rows of 8 chunks K-major; kMN / 64 atoms of 64 K
// rows x 8 chunks MN-major) that thread t of the 128 copies: chunk t % 8 of rows t / 8 + 16 r
// (of every atom), so 8 consecutive threads read one row's 128 contiguous bytes. Zero-filled past
// the matrix's edges (src bytes < 16, or 0); written where TMA would put them (SWIZZLE_128B; a
// K-major tile's row r at r x 128 B, atom boundaries included). Few registers: the producer has
// 40.
template <MatrixMajor kMajor, int kMN>
__device__ __forceinline__ void cp_async_tile(std::uint32_t dst, const unsigned char* base,
                                              std::int64_t ld_bytes, int mn_extent, int k_extent,
                                              int mn0, int k0, int t) {
  const int ch = t % 8, row0 = t / 8;  // row0 % 8 is the same for all rows below: one swizzle
  const std::uint32_t smem =
      dst + swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(row0 * 128 + ch * 16));
  // One 16-byte chunk: global (outer row, inner element), valid elements left in the row.
  const auto copy = [&](std::uint32_t at, int outer, int inner, int valid) {
    const std::uint32_t bytes = valid <= 0   ? 0u
                                : valid >= 8 ? 16u
                                             : 2u * static_cast<std::uint32_t>(valid);
    // A chunk with nothing to read still needs a valid address: the matrix's first element.
    const unsigned char* src =
        bytes == 0 ? base : base + outer * ld_bytes + std::int64_t{inner} * 2;
    ptx::cp_async_16(at, src, bytes);
  };
  if constexpr (kMajor == MatrixMajor::kK) {
    static_assert(kMN % 8 == 0, "a K-major tile has a multiple of 8 rows");
    const int inner = k0 + 8 * ch;  // rows of MN, K contiguous
#pragma unroll 4
    for (int r = 0; r < (kMN + 15) / 16; ++r) {
      // (kMN = 136: the last pass copies rows 128..135, threads 0..63 only.)
      if (kMN % 16 != 0 && row0 + 16 * r >= kMN) break;
      const int outer = mn0 + row0 + 16 * r;
      copy(smem + 16u * 128u * static_cast<std::uint32_t>(r), outer, inner,
           outer < mn_extent ? k_extent - inner : 0);
    }
  } else {
    static_assert(kMN % 64 == 0, "an MN-major tile has whole 64-column atoms");
#pragma unroll 1
    for (int atom = 0; atom < kMN / 64; ++atom) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int outer = k0 + row0 + 16 * r;  // rows of K, MN contiguous
        const int inner = mn0 + 64 * atom + 8 * ch;
        copy(smem + static_cast<std::uint32_t>(atom) * kAtomBytes + 16u * 128u * r, outer, inner,
             outer < k_extent ? mn_extent - inner : 0);
      }
    }
  }
}

// All 128 threads of the producer warpgroup. Each thread's copies of a stage arrive on the stage's
// full barrier when they complete (cp.async.mbarrier.arrive.noinc; 128 arrivals per phase), so the
// producer never waits for its own copies, only for free stages. (A first version waited for the
// copies kStages - 1 stages back before arriving: with the consumers holding one stage until the
// next one is full, the producer then waited for a stage that only its own unsent arrival could
// free, and deadlocked after kStages + 1 k-blocks.) The consumers fence the cp.async data into the
// async proxy (their wgmma reads through it) after the wait.
template <class Cfg, MatrixMajor kA, MatrixMajor kB>
__device__ __forceinline__ void produce_ordinary(Pipeline<Cfg::kStages>& pipe, unsigned char* smem,
                                                 const Params& p) {
  const int t = static_cast<int>(threadIdx.x);
  const std::uint32_t base = ptx::smem_addr(smem);
  PipelineState s = pipe.start();
  Cursor cursor = schedule_start(p.sched, worker_of(p));
  Unit u;
  while (next_unit(p.sched, cursor, u)) {
    int tm, tn;
    tile_of(p, u.tile, 0, 1, tm, tn);
    const int shift = k_shift(p.sched, u.tile);  // the tile's k order (gemm_schedule.hpp)
    for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
      pipe.producer_acquire(s);
      const std::uint32_t a = base + s.index * Cfg::kStageBytes;
      const int k0 = rotated_k_block(p.sched, shift, kb) * kBlockK;
      cp_async_tile<kA, kBlockM>(a, p.a, p.lda_bytes, p.m, p.k, tm * kBlockM, k0, t);
      cp_async_tile<kB, Cfg::kBlockN>(a + Cfg::kABytes, p.b, p.ldb_bytes, p.n, p.k,
                                      tn * Cfg::kBlockN, k0, t);
      pipe.full(s).arrive_on_cp_async();
      s.advance();
    }
  }
  // The CTA outlives these copies: the consumers wait for every stage before the final sync.
}

// ---- consumers --------------------------------------------------------------------------------

// One warpgroup: accumulates its kHalves x 64 rows of the tile (A atoms first_atom ..
// first_atom + kHalves - 1) x kBlockN over k_blocks k-blocks. Calls issued() once the last
// k-block's wgmma are issued (every stage of the unit waited for), before they complete. Leaves
// `s` at the stage after the unit's last.
template <class Cfg, bool kF16, MatrixMajor kA, MatrixMajor kB, bool kTma, class Issued>
__device__ __forceinline__ void mainloop(float (&acc)[Cfg::kHalves][Cfg::kAccumulators],
                                         Pipeline<Cfg::kStages>& pipe, PipelineState& s,
                                         std::uint32_t smem_base, int first_atom, int k_blocks,
                                         int cluster_m, Issued issued) {
  using TileA = SwizzledTile128<kA>;
  using TileB = SwizzledTile128<kB>;
  static_assert(!Cfg::kSwap || (kA == MatrixMajor::kK && kB == MatrixMajor::kK),
                "swapped operands: both K-major (each operand's tile is read in the other's role)");
  // One arrival per warpgroup on the stage's empty barrier of every CTA whose copies land in this
  // CTA's stage (each CTA of the cluster), the destinations split over the warpgroup's warps: lane
  // 0 of warp w signals cluster rank w. One warp's wgmma.wait_group stands for the whole
  // warpgroup: a wgmma is one operation of the warpgroup, complete (its shared-memory reads done)
  // for all four warps at once; CUTLASS's PipelineTmaAsync counts its empty arrivals the same way
  // (one per consumer warpgroup and destination). Measured (H100, session 22, docs/perf-log.md):
  // against one arrival per warp on every CTA (a loop of FLO / PRMT / SYNCS per warp), 18-21%
  // fewer warp instructions and at base clocks the 128 x 128 ping-pong 13% fewer cycles at 2048^3.
  const int warp_in_group = static_cast<int>(threadIdx.x / 32) % 4;
  const bool signals = threadIdx.x % 32 == 0 && warp_in_group < cluster_m;
  auto release = [&](PipelineState done) {
    if (signals) {
      if (cluster_m == 1) {
        pipe.consumer_release(done);
      } else {
        pipe.consumer_release_to(done, static_cast<std::uint32_t>(warp_in_group));
      }
    }
  };
  auto fence_all = [&] {
#pragma unroll
    for (int h = 0; h < Cfg::kHalves; ++h)
      warpgroup_fence_accumulators(acc[h]);
  };
  // Stage 0's descriptors, stepped to each stage, K step and half with descriptor_advance (one
  // add each): built from the address every time, they took ~8 instructions per wgmma operand
  // (SASS, session 17). Swapped operands (Config::kSwap, ping-pong): wgmma's A is the stage's B
  // tile (the tile's 64 columns, K-major), its B the whole A tile (256 rows, K-major), so the
  // accumulators hold the transpose of the 256 x 64 tile.
  std::uint64_t a0 = Cfg::kSwap ? TileA::descriptor(smem_base + Cfg::kABytes, 0)
                                : TileA::descriptor(smem_base + first_atom * kAtomBytes, 0);
  std::uint64_t b0 =
      Cfg::kSwap ? TileB::descriptor(smem_base, 0) : TileB::descriptor(smem_base + Cfg::kABytes, 0);
  ptx::fence_operand(a0);
  ptx::fence_operand(b0);
  PipelineState previous = s;
  for (int kb = 0; kb < k_blocks; ++kb) {
    pipe.consumer_wait(s);
    if constexpr (!kTma) {
      // The cp.async writes (generic proxy) become visible to this thread with the barrier's
      // phase; the fence orders them before the wgmma reads (async proxy) that follow.
      fence_proxy_async_shared();
    }
    const std::uint32_t stage = s.index * Cfg::kStageBytes;
    fence_all();
    warpgroup_arrive();
#pragma unroll
    for (int kk = 0; kk < TileA::kKSteps; ++kk) {
#pragma unroll
      for (int h = 0; h < Cfg::kHalves; ++h) {
        wgmma<Cfg::kWgmmaN, kF16, kA, kB>(
            acc[h], descriptor_advance(a0, stage + h * kAtomBytes + kk * TileA::kStepBytes),
            descriptor_advance(b0, stage + kk * TileB::kStepBytes), kb > 0 || kk > 0);
      }
    }
    warpgroup_commit();
    // The previous k-block's group is done: its stage may be refilled.
    warpgroup_wait<1>();
    fence_all();
    if (kb > 0) release(previous);
    previous = s;
    s.advance();
  }
  issued();
  warpgroup_wait<0>();
  fence_all();
  release(previous);
}

// ---- stream-K handoff ---------------------------------------------------------------------------

// The flag handoff (include/tma/ptx/flag.hpp): a finisher warpgroup's leader polls a peer's flag
// with ptx::load_acquire_gpu, a contributor's leader publishes its slot with
// ptx::store_release_gpu after the warpgroup's bar.sync.
using ptx::load_acquire_gpu;
using ptx::store_release_gpu;

// The flag of half `half` of CTA slot c's partial tile (gemm_schedule.hpp: the workspace layout).
__device__ __forceinline__ std::uint64_t* flag_at(const Params& p, int c, int half) {
  return p.sk_flags + 2 * c + half;
}

// Prints which flag a finisher gave up on and traps (TMA_DEBUG_HANG_BOUND).
__device__ __noinline__ inline void report_flag_hang(int peer, int wgc, unsigned long long polls) {
  printf(
      "tmakit: gemm stream-K: block %d warpgroup %d gave up waiting for the flag of block %d after "
      "%llu polls (TMA_DEBUG_HANG_BOUND): that block never published its partial tile (a schedule "
      "mismatch, or another launch using the same workspace at the same time)\n",
      blockIdx.x, wgc, peer, polls);
  __trap();
}

// The leader thread of a finisher warpgroup: spins until `flag` holds this launch's tag `epoch`
// (set by the CTA of slot `peer`, which is its block index).
template <unsigned long long kBound = ::tma::detail::kHangBoundPolls>
__device__ __forceinline__ void wait_flag(const std::uint64_t* flag, std::uint64_t epoch, int peer,
                                          int wgc) {
  unsigned long long polls = 0;
  while (load_acquire_gpu(flag) != epoch) {
    __nanosleep(32);
    if constexpr (kBound != 0) {
      if (++polls >= kBound) report_flag_hang(peer, wgc, polls);
    }
  }
  (void)polls;
  (void)peer;
  (void)wgc;
}

// Half `half` (rows 64 half .. 64 half + 63) of CTA slot c's partial tile (gemm_schedule.hpp's
// layout), as float4.
template <class Cfg>
__device__ __forceinline__ float4* slot_part(const Params& p, int c, int half) {
  return reinterpret_cast<float4*>(p.sk_slots +
                                   static_cast<std::int64_t>(c) * kBlockM * Cfg::kBlockN +
                                   static_cast<std::int64_t>(half) * 64 * Cfg::kBlockN);
}

// All 128 threads of consumer warpgroup wgc: the partial sums of the tile's half `half` into
// CTA slot c (cta_slot), then the half's flag. st.global.cg: the slot is read once, by another
// SM, from L2. kFlagByWarp (TMA path): the warpgroup only arrives on kFlagBarrier + half and goes
// on with its next unit; the producer warpgroup's flag warp publishes the half (publish_flags), so
// the fence's wait for the stores to reach L2 (~1,900 cycles of a 96 KiB partial tile, gemm_trace,
// docs/perf-log.md GEMM v1.8) runs under the next unit's k-loop. Otherwise (the ordinary path,
// whose producer warpgroup is busy with copies) the warpgroup's bar.sync, then its leader's
// fence and flag.
template <class Cfg, bool kFlagByWarp>
__device__ __forceinline__ void publish_partial(const float (&acc)[Cfg::kAccumulators],
                                                const Params& p, int c, int half, int wgc,
                                                int unit) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  float4* out = slot_part<Cfg>(p, c, half) + t;
#pragma unroll
  for (int j = 0; j < Cfg::kAccumulators / 4; ++j) {
    __stcg(out + j * kWarpgroupThreads,
           make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
  }
  trace(p, 1 + wgc, unit, 14);
  if constexpr (kFlagByWarp) {
    named_barrier_arrive(kFlagBarrier + static_cast<std::uint32_t>(half), kWarpgroupThreads + 32);
  } else {
    named_barrier_sync(kStreamKBarrier + static_cast<std::uint32_t>(wgc), kWarpgroupThreads);
    if (t == 0) store_release_gpu(flag_at(p, c, half), p.sk_epoch);
  }
  trace(p, 1 + wgc, unit, 15);
}

// The first row of half `half` (64 rows) of tile row tm. A half whose first row is >= m has
// nothing to store or hand over; finish_unit (the consumers) and publish_flags (the flag warp)
// skip the same halves by this one rule, or a flag warp would wait for an arrival that never
// comes.
__device__ __forceinline__ int half_row0(int tm, int half) {
  return tm * kBlockM + 64 * half;
}

// The flag warp (warp kFlagWarp of the producer warpgroup, TMA path): publishes the CTA's partial
// tile, if its worker has one (only the first unit of a stream-K range can be kPartial,
// gemm_schedule.hpp), half by half: it waits on kFlagBarrier + half until the half's consumer
// warpgroup has issued its slot stores (bar.arrive: release, bar.sync: acquire, at CTA scope),
// then lane 0's fence.acq_rel.gpu + flag publishes them at gpu scope (cumulativity: the stores it
// observed through the barrier; the same chain as the warpgroup's own bar.sync before). The halves
// are those finish_unit publishes: rows below m (a CTA past the last tile row publishes none).
// Trace builds stamp role 0's points 14 + half of the unit when a flag is set.
template <class Cfg>
__device__ __forceinline__ void publish_flags(const Params& p, int rank, int cluster_m) {
  const int worker = worker_of(p);
  Cursor cursor = schedule_start(p.sched, worker);
  Unit u;
  int i = 0;
  bool partial = false, split_unit = false;
  for (; next_unit(p.sched, cursor, u); ++i) {
    if (u.kind == UnitKind::kPartial) {
      partial = true;
      break;
    }
    if (u.tile >= p.sched.dp_tiles) {  // the range starts at a tile's k-block 0
      split_unit = true;
      break;
    }
  }
  const bool lane0 = threadIdx.x % 32 == 0;
  if (!partial) {
    // An aligned one-row split's finisher (one unit a worker: this one): its peers' flags, polled
    // here while its consumers still run their longer k-loop, so that the finishing warpgroup
    // only meets kReadyBarrier + half (its acquire of the flags' data at CTA scope: bar.arrive
    // releases what lane 0's ld.acquire.gpu observed) instead of polling them one after the other
    // after its k-loop. The halves are finish_unit's: rows below m.
    if constexpr (Cfg::kPrepollFlags) {
      if (p.sched.sk_pieces != 0 && split_unit && u.kind == UnitKind::kFinish) {
        // One cluster row: the CTA's tile row is its rank; the peers are the tile's other
        // workers, worker + 1 .. worker + sk_pieces - 1 (make_aligned_schedule), read without the
        // schedule's divisions (this warp has the producer warpgroup's 24-40 registers).
        for (int half = 0; half < kBlockM / 64; ++half) {
          if (half_row0(rank, half) >= p.m) break;
          if (lane0) {
            for (int v = worker + p.sched.sk_pieces - 1; v > worker; --v) {
              const int c = cta_slot(v, rank, cluster_m);
              wait_flag(flag_at(p, c, half), p.sk_epoch, c, half);
            }
          }
          __syncwarp();
          named_barrier_arrive(kReadyBarrier + static_cast<std::uint32_t>(half),
                               kWarpgroupThreads + 32);
        }
      }
    }
    return;
  }
  int tm, tn;
  tile_of(p, u.tile, rank, cluster_m, tm, tn);
  const int c = cta_slot(worker, rank, cluster_m);
  for (int half = 0; half < kBlockM / 64; ++half) {
    if (half_row0(tm, half) >= p.m) break;
    named_barrier_sync(kFlagBarrier + static_cast<std::uint32_t>(half), kWarpgroupThreads + 32);
    if (lane0) store_release_gpu(flag_at(p, c, half), p.sk_epoch);
    if constexpr (TMA_GEMM_TRACE != 0) {
      if (lane0 && i < kTraceUnits) *trace_at(p, 0, i, 14 + half) = clock64();
    }
  }
  (void)tn;
}

// Ordinary path (the TMA path: add_peer_partials_bulk below, the same sums in the same order).
// All 128 threads of a finisher warpgroup wgc of worker w's CTA of rank `rank`: adds the partial
// sums of half `half` of split tile `tile`'s peers (their CTAs of the same rank: the same rows),
// in decreasing worker order (gemm_schedule.hpp: last_peer; a fixed order: the same sums every
// run), to its own.
template <class Cfg>
__device__ __forceinline__ void add_peer_partials(float (&acc)[Cfg::kAccumulators], const Params& p,
                                                  int tile, int w, int rank, int cluster_m,
                                                  int half, int wgc, int unit) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  bool first = true;
  for (int v = last_peer(p.sched, tile, w); v >= 0; v = prev_peer(p.sched, w, v)) {
    const int c = cta_slot(v, rank, cluster_m);
    if (t == 0) wait_flag(flag_at(p, c, half), p.sk_epoch, c, wgc);
    named_barrier_sync(kStreamKBarrier + static_cast<std::uint32_t>(wgc), kWarpgroupThreads);
    if (first) trace(p, 1 + wgc, unit, 16);
    first = false;
    const float4* in = slot_part<Cfg>(p, c, half) + t;
#pragma unroll
    for (int j = 0; j < Cfg::kAccumulators / 4; ++j) {
      const float4 x = __ldcg(in + j * kWarpgroupThreads);
      acc[4 * j] += x.x;
      acc[4 * j + 1] += x.y;
      acc[4 * j + 2] += x.z;
      acc[4 * j + 3] += x.w;
    }
  }
  trace(p, 1 + wgc, unit, 17);
}

// TMA path: the same sums, with the peers' partial tiles brought into shared memory by bulk copies
// (cp.async.bulk) instead of every thread's ld.global.cg. Why: through ld.global.cg a finisher
// took in its peers' slots at ~23-32 B per cycle and per SM, one peer after the other (a flag, a
// barrier, a round trip of loads each; gemm_trace, docs/perf-log.md session 33: 5.9k cycles for
// three 64 KiB partial tiles at 128 x 4096 x 4096). A finish unit is its worker's last unit
// (gemm_schedule.hpp), so once every stage's last fill has been released (Pipeline::
// producer_drain's wait, from the consumer's own state: the other warpgroup's and the cluster
// peers' reads are done and no load follows) the ring is free: warpgroup wgc takes half of it,
// two buffers of a piece each, and the leader keeps two pieces in flight (a piece: one peer's
// whole half-slot, or half of it where that does not fit), completed on the warpgroup's first two
// C barriers (unused while it adds; es.c_parity follows their phases). Every thread adds the
// piece's float4 in the slot's own order (slot_part: thread t's j-th at j x 128 + t), so the sums
// and their order are those of add_peer_partials.
// Measured (H100, session 34, docs/perf-log.md): a finish unit 7.2-7.4k -> 6.5-6.7k cycles at
// 128 x 2112 x 7168 and 10.0-10.2k -> 6.7-7.1k at 16384 x 4096 x 4096 (gemm_trace), 128 x 2112 x
// 7168 +3.0% and 128 x 4096 x 4096 +1.9% in tma-bench (three alternating rounds). Four issuing
// threads per warpgroup (lane 0 of each warp copying a quarter) were no faster: the unit now
// waits for its last peer's flag, ~3.3k cycles after that peer's k-loop.
template <class Cfg>
struct PeerPieces {
  static constexpr int kFloat4s = Cfg::kAccumulators / 4;             // per thread and half-slot
  static constexpr std::uint32_t kRowBytes = kWarpgroupThreads * 16;  // one float4 per thread
  static constexpr std::uint32_t kRegion = Cfg::kStages * Cfg::kStageBytes / 2 / 1024 * 1024;
  static constexpr int kPieces = kFloat4s * kRowBytes <= kRegion / 2 ? 1 : 2;
  static constexpr int kPerPiece = kFloat4s / kPieces;  // float4 per thread and piece
  static constexpr std::uint32_t kBytes = kPerPiece * kRowBytes;
  static_assert(kFloat4s % kPieces == 0 && 2 * kBytes <= kRegion,
                "two pieces of a peer's half-slot fit in half of the ring");
};

template <class Cfg, bool kReady>
__device__ __forceinline__ void add_peer_partials_bulk(
    float (&acc)[Cfg::kAccumulators], const Params& p, int tile, int w, int rank, int cluster_m,
    int half, int wgc, Pipeline<Cfg::kStages>& pipe, PipelineState s, unsigned char* ring,
    Barrier (&bars)[Cfg::kEpiBuffers], EpilogueState& es) {
  using Pieces = PeerPieces<Cfg>;
  static_assert(Cfg::kEpiBuffers >= 2, "two barriers to complete the pieces on");
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  const bool leader = t == 0;
  unsigned char* region = ring + static_cast<std::uint32_t>(wgc) * Pieces::kRegion;
  // The leader's issue cursor: peer iv's piece ik is the next to copy, into buffer `issued` % 2.
  int iv = last_peer(p.sched, tile, w), ik = 0;
  std::uint32_t issued = 0;
  // Aligned one-row split: the flag warp has seen every peer's flag of this half (publish_flags).
  if constexpr (kReady) {
    named_barrier_sync(kReadyBarrier + static_cast<std::uint32_t>(half), kWarpgroupThreads + 32);
  }
  const auto issue = [&] {
    const int c = cta_slot(iv, rank, cluster_m);
    if (ik == 0) {
      if constexpr (!kReady) wait_flag(flag_at(p, c, half), p.sk_epoch, c, wgc);
      // The slot's generic-proxy stores, acquired through the flag, before the bulk copy's
      // async-proxy reads.
      fence_proxy_async_global();
    }
    const std::uint32_t b = issued % 2;
    bars[b].arrive_expect_tx(Pieces::kBytes);
    bulk_load(region + b * Pieces::kBytes,
              slot_part<Cfg>(p, c, half) + ik * Pieces::kPerPiece * kWarpgroupThreads,
              Pieces::kBytes, bars[b]);
    ++issued;
    if (++ik == Pieces::kPieces) {
      ik = 0;
      iv = prev_peer(p.sched, w, iv);
    }
  };
  if (leader && iv >= 0) {
    pipe.producer_drain(s);  // every stage's last use released: the ring is free
    issue();
    if (iv >= 0) issue();
  }
  // Trace builds stamp point 16 when the first piece is in: after the leader has also issued the
  // second piece, which waits for that piece's peer's flag (gemm_trace's "first peer's flag").
  bool first = true;
  std::uint32_t item = 0;
  for (int v = last_peer(p.sched, tile, w); v >= 0; v = prev_peer(p.sched, w, v)) {
#pragma unroll
    for (int k = 0; k < Pieces::kPieces; ++k) {
      const std::uint32_t b = item % 2;
      bars[b].wait((es.c_parity >> b) & 1u);
      es.c_parity ^= 1u << b;
      if (first) trace(p, 1 + wgc, es.unit, 16);
      first = false;
      const float4* in = reinterpret_cast<const float4*>(region + b * Pieces::kBytes) + t;
#pragma unroll
      for (int j = 0; j < Pieces::kPerPiece; ++j) {
        const float4 x = in[j * kWarpgroupThreads];
        const int r = 4 * (k * Pieces::kPerPiece + j);
        acc[r] += x.x;
        acc[r + 1] += x.y;
        acc[r + 2] += x.z;
        acc[r + 3] += x.w;
      }
      ++item;
      // Every thread has read buffer b before the leader copies the next piece into it.
      named_barrier_sync(kStreamKBarrier + static_cast<std::uint32_t>(wgc), kWarpgroupThreads);
      if (leader && iv >= 0) issue();
    }
  }
  trace(p, 1 + wgc, es.unit, 17);
}

// ---- consumers: the unit loop -----------------------------------------------------------------

// The epilogue of one half as D's type Out; D = A B (alpha 1, beta 0), the common case, without
// the alpha multiply. kAlphaOne: alpha == 1 known at compile time (a plain kernel, kWithC false).
template <class Out, class Cfg, bool kTma, bool kWithC, bool kAlphaOne = false>
__device__ __forceinline__ void store_tile_as(
    const float (&acc)[Cfg::kAccumulators], const Params& p, EpilogueTile tile, unsigned char* epi,
    Barrier (&c_bar)[Cfg::kEpiBuffers], const EpilogueMaps& maps, int wgc, EpilogueState& es) {
  constexpr int kN = Cfg::kBlockN, kBuf = Cfg::kEpiBuffers;
  static_assert(!(kAlphaOne && kWithC), "kAlphaOne is the plain kernels' case: beta == 0, no C");
  if constexpr (Cfg::kSwap) {
    // The transposed part (Config::kSwap), in the plain kernels only (gemm_config_swap_supported).
    static_assert(kAlphaOne && sizeof(Out) == 2 && kTma,
                  "a swapped-operand tile runs in the plain TMA kernels only");
    epilogue<Out, Cfg::kWgmmaN, kBuf, kTma, false, false, false, true>(acc, p, tile, epi, c_bar,
                                                                       maps, wgc, es);
  } else {
    // A tile of 16-bit outputs whose rows of D start 16 bytes into a 32-byte sector (an odd 128 x
    // 136 tile: 272 B per tile) stores its 8-column chunk first, so that its whole chunks start on
    // a sector. Measured (H100, session 30, call 10): at 1024 x 2112 x 7168 the last k-block's end
    // to the stores' reads done 829 -> 527 cycles (K = 1024: 1104 -> 669), eight alternating rounds
    // 1.0% (K = 7168) and 1.3% (K = 4096) faster.
    constexpr bool kMayHeadFirst =
        kTma && sizeof(Out) == 2 && kN * 2 % 32 == 16 && tail_columns(kN, 2) * 2 % 32 == 16;
    if constexpr (kMayHeadFirst) {
      if (tile.col0 * 2 % 32 != 0) {
        if constexpr (!kWithC) {
          if (kAlphaOne || p.alpha == 1.0f) {
            epilogue<Out, kN, kBuf, kTma, false, false, true>(acc, p, tile, epi, c_bar, maps, wgc,
                                                              es);
            return;
          }
        }
        if constexpr (!kAlphaOne)
          epilogue<Out, kN, kBuf, kTma, kWithC, true, true>(acc, p, tile, epi, c_bar, maps, wgc,
                                                            es);
        return;
      }
    }
    if constexpr (!kWithC) {
      if (kAlphaOne || p.alpha == 1.0f) {
        epilogue<Out, kN, kBuf, kTma, false, false>(acc, p, tile, epi, c_bar, maps, wgc, es);
        return;
      }
    }
    if constexpr (!kAlphaOne)
      epilogue<Out, kN, kBuf, kTma, kWithC>(acc, p, tile, epi, c_bar, maps, wgc, es);
  }
}

// The epilogue of one half for D's type (OutKind, a run-time choice: one kernel for all types;
// the plain kernels, kPlain, skip this and store D in the inputs' type).
template <class Cfg, bool kTma, bool kWithC>
__device__ __forceinline__ void store_tile(const float (&acc)[Cfg::kAccumulators], const Params& p,
                                           EpilogueTile tile, unsigned char* epi,
                                           Barrier (&c_bar)[Cfg::kEpiBuffers],
                                           const EpilogueMaps& maps, int wgc, EpilogueState& es) {
  switch (p.out) {
    case OutKind::kBF16:
      store_tile_as<__nv_bfloat16, Cfg, kTma, kWithC>(acc, p, tile, epi, c_bar, maps, wgc, es);
      break;
    case OutKind::kF16:
      store_tile_as<__half, Cfg, kTma, kWithC>(acc, p, tile, epi, c_bar, maps, wgc, es);
      break;
    default:
      store_tile_as<float, Cfg, kTma, kWithC>(acc, p, tile, epi, c_bar, maps, wgc, es);
      break;
  }
}

// One consumer warpgroup after a unit's k-loop: for each half of output tile (tm, tn) it holds,
// the stream-K handoff and / or the epilogue.
template <class Cfg, bool kF16, bool kPlain, bool kTma>
__device__ __forceinline__ void finish_unit(float (&acc)[Cfg::kHalves][Cfg::kAccumulators],
                                            const Unit& u, int tm, int tn, unsigned char* epi,
                                            Barrier (&c_bar)[Cfg::kEpiBuffers],
                                            const EpilogueMaps& maps, const Params& p, int wgc,
                                            int first_atom, int rank, int cluster_m,
                                            EpilogueState& es, Pipeline<Cfg::kStages>& pipe,
                                            PipelineState s, unsigned char* ring) {
  [[maybe_unused]] const int worker = worker_of(p);  // (stream-K only)
#pragma unroll
  for (int h = 0; h < Cfg::kHalves; ++h) {
    const int half = first_atom + h;  // rows 64 half .. 64 half + 63 of the tile
    // (Swapped operands: half is 0, the whole 256-row tile.)
    const EpilogueTile tile{Cfg::kSwap ? tm * Cfg::kTileM : half_row0(tm, half), tn * Cfg::kBlockN};
    // A cluster's second CTA past the last tile row, or a half's rows past m: nothing to store;
    // nor, with stream-K, to hand over (contributor and finisher CTAs have the same rank, so the
    // same tile row, and skip the same rows). The k-loop ran regardless: the CTA's producer
    // still multicasts its half of B to the cluster's other CTA.
    if (tile.row0 >= p.m) break;
    if constexpr (!Cfg::kSwap) {  // (a swapped-operand tile never splits: its units are whole)
      if (u.kind == UnitKind::kPartial) {
        publish_partial<Cfg, kTma>(acc[h], p, cta_slot(worker, rank, cluster_m), half, wgc,
                                   es.unit);
        continue;
      }
      if (u.kind == UnitKind::kFinish) {
        if constexpr (kTma) {
          // An aligned one-row split: the flag warp has polled the peers' flags (publish_flags).
          // Two instances rather than a run-time test on every copy issue inside.
          if (Cfg::kPrepollFlags && p.sched.sk_pieces != 0) {
            add_peer_partials_bulk<Cfg, true>(acc[h], p, u.tile, worker, rank, cluster_m, half, wgc,
                                              pipe, s, ring, c_bar, es);
          } else {
            add_peer_partials_bulk<Cfg, false>(acc[h], p, u.tile, worker, rank, cluster_m, half,
                                               wgc, pipe, s, ring, c_bar, es);
          }
        } else {
          add_peer_partials<Cfg>(acc[h], p, u.tile, worker, rank, cluster_m, half, wgc, es.unit);
        }
      }
    }
    if constexpr (kPlain) {
      // D in the inputs' type, alpha 1, beta 0 (gemm.cu: resolve's plain): one epilogue, no
      // run-time choices.
      using In = std::conditional_t<kF16, __half, __nv_bfloat16>;
      store_tile_as<In, Cfg, kTma, false, true>(acc[h], p, tile, epi, c_bar, maps, wgc, es);
    } else if (p.beta != 0.0f) {
      store_tile<Cfg, kTma, true>(acc[h], p, tile, epi, c_bar, maps, wgc, es);
    } else {
      store_tile<Cfg, kTma, false>(acc[h], p, tile, epi, c_bar, maps, wgc, es);
    }
  }
}

// One consumer warpgroup (wgc = 0 or 1): the unit loop. ready(): its setmaxnreg.inc and PDL
// wait, called once after the first unit's walk (or nothing, where the kernel did them first).
// Cooperative: every unit, rows 64 wgc .. 64 wgc + 63.
// Ping-pong: units wgc, wgc + 2, ... of the CTA's sequence, all 128 rows; the stages of the other
// warpgroup's units are skipped (state advanced past them). The warpgroups take turns at the
// tensor cores: before its unit i > 0's k-loop a warpgroup waits on its order barrier until the
// other one has issued unit i - 1's last wgmma (which it signals only when unit i exists), so
// warpgroup w's epilogue of unit i runs under the other's k-loop of unit i + 1. The turns also
// keep the skipping safe: a warpgroup waits for stage uses of its unit only after the other has
// waited for every use before them, so no full barrier is two phases behind a waiting state
// (a parity wait cannot tell those apart).
template <class Cfg, bool kF16, MatrixMajor kA, MatrixMajor kB, bool kPlain, bool kTma, class Ready>
__device__ __forceinline__ void consume(Pipeline<Cfg::kStages>& pipe, unsigned char* smem,
                                        Barrier (&c_bar)[Cfg::kEpiBuffers],
                                        const EpilogueMaps& maps, const Params& p, int wgc,
                                        int rank, int cluster_m, Ready ready) {
  const std::uint32_t smem_base = ptx::smem_addr(smem);
  unsigned char* epi =
      smem + Cfg::kStages * Cfg::kStageBytes + wgc * Cfg::kEpiBuffers * kEpiBufferBytes;
  const int first_atom = Cfg::kPingPong ? 0 : wgc;  // the tile's first 64-row half it holds
  const int worker = worker_of(p);
  PipelineState s = pipe.start();
  EpilogueState es;
  Cursor cursor = schedule_start(p.sched, worker);
  Unit u;
  bool have = next_unit(p.sched, cursor, u);
  // The warpgroup's setmaxnreg.inc and PDL wait, here after the first unit's walk where the
  // configuration walks first (Config::kEarlyIssue; a no-op otherwise, the kernel did them).
  ready();
  float acc[Cfg::kHalves][Cfg::kAccumulators];
#pragma unroll
  for (int h = 0; h < Cfg::kHalves; ++h) {
#pragma unroll
    for (int r = 0; r < Cfg::kAccumulators; ++r)
      acc[h][r] = 0.0f;
  }
  for (int i = 0; have; ++i) {
    // Whether a unit follows (ping-pong: the turn to pass on), from a copy of the cursor: the
    // next unit itself is read after the k-loop, not held across it (4 registers fewer there).
    bool have_next;
    {
      Cursor peek = cursor;
      Unit unused;
      have_next = next_unit(p.sched, peek, unused);
    }
    const int k_blocks = u.kb_end - u.kb_begin;
    if (!Cfg::kPingPong || i % 2 == wgc) {
      trace(p, 1 + wgc, i, 0);
      trace_value(p, 1 + wgc, i, 13,
                  (static_cast<unsigned long long>(u.kind) << 24) |
                      static_cast<unsigned long long>(k_blocks));
      if (Cfg::kPingPong && i > 0)
        named_barrier_sync(kOrderBarrier + static_cast<std::uint32_t>(wgc), 2 * kWarpgroupThreads);
      if constexpr (TMA_GEMM_TRACE != 0) {
        trace(p, 1 + wgc, i, 1);
        pipe.consumer_wait(s);  // only to stamp when the unit's first stage is there
        trace(p, 1 + wgc, i, 2);
      }
      // TMA path: output tile (tm, tn) now, off the epilogue's path. Written here alone, ptxas
      // sank the two divisions (I2F / MUFU.RCP chains) after the k-loop, into the epilogue's
      // entry (SASS, 2026-11-24); ptx::fence_operand (an empty asm reading and writing them)
      // has them computed before the k-loop's (volatile) wgmma asm and kept in two registers.
      // The ordinary path, short of registers, computes them after the k-loop.
      int tm = 0, tn = 0;
      if constexpr (kTma) {
        tile_of(p, u.tile, rank, cluster_m, tm, tn);
        ptx::fence_operand(tm);
        ptx::fence_operand(tn);
      }
      mainloop<Cfg, kF16, kA, kB, kTma>(
          acc, pipe, s, smem_base, first_atom, k_blocks, cluster_m, [&] {
            trace(p, 1 + wgc, i, 3);
            if (Cfg::kPingPong && have_next)
              named_barrier_arrive(kOrderBarrier + static_cast<std::uint32_t>(wgc ^ 1),
                                   2 * kWarpgroupThreads);
          });
      trace(p, 1 + wgc, i, 4);
      if constexpr (!kTma) tile_of(p, u.tile, rank, cluster_m, tm, tn);
      es.unit = i;
      finish_unit<Cfg, kF16, kPlain, kTma>(acc, u, tm, tn, epi, c_bar, maps, p, wgc, first_atom,
                                           rank, cluster_m, es, pipe, s, smem);
      trace(p, 1 + wgc, i, 5);
    } else {
      s.advance(static_cast<std::uint32_t>(k_blocks));
    }
    have = next_unit(p.sched, cursor, u);
  }
  if constexpr (kTma) {
    // The last stores must have read their buffers before the CTA (and its shared memory) goes
    // away. Their writes to global memory need no wait: they are performed by the time the grid
    // completes, as for any store (the PTX ISA's .read form; CUTLASS's and Triton's epilogues end
    // the same way). Waiting for them (wait_group<0>) kept every CTA's exit, and so the kernel's
    // end, behind its last stores' round trip to L2.
    if (threadIdx.x % kWarpgroupThreads == 0) wait_group_read<0>();
  }
}

// ---- the kernel -------------------------------------------------------------------------------

// Launched with kThreads threads and Cfg::kSmemBytes of dynamic shared memory; TMA path: in
// clusters of 1, 2 or 4 CTAs along x; ordinary path: clusters of 1. The maps are unused (zeros) on
// the ordinary path; map_c is map_d when beta == 0; map_c_tail and map_d_tail (the boxes of a
// tile's last, narrower chunk: gemm_epilogue.cuh) are map_c and map_d when the tile has none.
//
// kPlain: D has the inputs' type, alpha == 1 and beta == 0 (the host's plain_epilogue), so the
// kernel carries that one epilogue and none of the run-time choices (D's type, beta, alpha).
// Measured (H100, session 32, call 1: three alternating rounds of tma-bench gemm's README regime,
// against session 31's build): 0.47% less time over issue 5's 47 shapes (squares 0.22%, LLM
// M >= 1024 0.36%, the 13 small shapes 0.82%), as session 31's experiment build with only this
// epilogue had read (docs/perf-log.md, session 31 item 6).
template <int kConfig, bool kF16, MatrixMajor kA, MatrixMajor kB, bool kPlain, bool kTma>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
                const __grid_constant__ TensorMap map_c, const __grid_constant__ TensorMap map_d,
                const __grid_constant__ TensorMap map_c_tail,
                const __grid_constant__ TensorMap map_d_tail, const Params p) {
  using Cfg = Config<kConfig>;
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (kAlign - ptx::smem_addr(raw) % kAlign) % kAlign;
  __shared__ Pipeline<Cfg::kStages> pipe;
  __shared__ Barrier c_bar[kConsumerWarpgroups][Cfg::kEpiBuffers];  // epilogue: C chunk loaded

  if constexpr (TMA_GEMM_TRACE != 0) {
    if (threadIdx.x == 0) {
      trace_kernel(p, kEntry, clock64());
      trace_kernel(p, kEntryNs, cuda::ptx::get_sreg_globaltimer());
    }
  }
  // Programmatic dependent launch (GemmTuning::pdl; both calls are no-ops in a launch without the
  // attribute): the stream's next kernel may be scheduled from now on (it can only start on an SM
  // this CTA has left: one CTA fills an SM), and this CTA's setup below runs while the previous
  // kernel finishes. Every thread waits for that kernel's completion (and its memory) before its
  // first access to global memory other than the kernel parameters: A, B, C, D, the workspace.
  cudaTriggerProgrammaticLaunchCompletion();
  const int cluster_m = static_cast<int>(cluster_size());
  const int rank = static_cast<int>(cluster_cta_rank());
  if (threadIdx.x == 0) {
    // Full: one producer arrival (+ the TMA bytes), or 128 (one per cp.async thread).
    // Empty: one release per consumer warpgroup of every CTA whose consumers read this CTA's
    // copies (mainloop).
    pipe.init(kTma ? 1 : 128, static_cast<std::uint32_t>(Cfg::kReleasingWarpgroups * cluster_m));
    for (auto& wg_bars : c_bar) {
      for (Barrier& bar : wg_bars)
        bar.init(1);
    }
    fence_barrier_init();
    if constexpr (kTma) {
      prefetch_descriptor(&map_a);
      prefetch_descriptor(&map_b);
      prefetch_descriptor(&map_d);
      if (!kPlain && p.beta != 0.0f) prefetch_descriptor(&map_c);
      if constexpr (Cfg::kBlockN % 64 != 0) {
        prefetch_descriptor(&map_d_tail);
        if (!kPlain && p.beta != 0.0f) prefetch_descriptor(&map_c_tail);
      }
    }
  }
  // Peers and multicast copies must find the barriers initialized. A relaxed arrival:
  // fence_barrier_init orders the barrier initialization, the only write another thread reads
  // (cluster_sync's release arrival is a MEMBAR.ALL.GPU in every thread). Waiting later instead,
  // each thread just before its first barrier use, gained nothing (session 13, gemm_trace: the
  // wait still costs the producer ~290 cycles after its ~1,100-cycle schedule walk). Walking the
  // producer's first unit and tile there (and its setmaxnreg and PDL wait too) took 1-3.6% fewer
  // cycles in isolated launches (ncu, base clocks) but 0.3-0.8 us more in tma-bench's runs of
  // small shapes (session 20, docs/perf-log.md; the patch is in bench/results). Not better
  // either: the first-tile table's whole first ring fill issued before the wait, each CTA loading
  // every share of B itself instead of multicasting its own (no copy touches a peer). The first
  // load left ~300 cycles earlier, but the producer's walk ended 1.0-1.9k cycles later (the fill's
  // extra copies issued first), so the refill after the first ring came later and the first
  // unit's k-loop took 0.7-1.1k cycles longer, and the one-wave launches got longer (H100, eight
  // alternating rounds, ratio to cuBLASLt: 1024^3 -8%, 512 x 4096 x 4096 -3.4%, 2048^3 -2.9%;
  // squares -0.7%, LLM -0.1%; session 46, docs/perf-log.md; the patch is
  // bench/results/h100-2026-12-05-s46-local-fill.patch).
  cluster_arrive_relaxed();
  cluster_wait();
  if constexpr (TMA_GEMM_TRACE != 0) {
    if (threadIdx.x == 0) trace_kernel(p, kInitSynced, clock64());
  }

  // The prologue order of produce_tma's kTable (the producer) and consume's `ready` (the
  // consumers).
  constexpr bool kEarly = kTma && TMA_GEMM_EARLY_ISSUE != 0 && Cfg::kEarlyIssue;
  const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  const Role role = warpgroup == 0 ? Role::kProducer : Role::kConsumer;
  // The consumers' branch comes first in the source so that ptxas lays the producer's out first:
  // with the producer's first, ptxas put it after the consumers' ~43 KiB of code (config 1: the
  // first tensor load at byte 0xba00 of the kernel, 0x1390 now). Measured (docs/perf-log.md,
  // session 26): tma-bench gemm +0.2-1.2% on issue 5's geomeans, in each of six alternating
  // rounds (1024 x 4096 x 4096 +6%, 512 x 7168 x 2048 +5%); in gemm_trace's launches the first
  // load left 115-175 cycles earlier for configs 3 and 7, unchanged for 0 and 1 (why the bench
  // gains more is not established). The SASS test gemm_sass_tma (--order) checks the layout.
  if (role == Role::kConsumer) {
    const auto ready = [&] {
      warpgroup_reg_alloc<Cfg::kConsumerRegisters>();
      if constexpr (TMA_GEMM_TRACE != 0) {
        if (threadIdx.x == kWarpgroupThreads) trace_kernel(p, kConsumerRegAlloc, clock64());
      }
      cudaGridDependencySynchronize();
    };
    // (Not with both operands MN-major: there the consumers of the 128 x 256 and 128 x 192 tiles
    // spilled 8-72 bytes with their walk's values live across the inc.)
    constexpr bool kWalkFirst = kEarly && !(kA == MatrixMajor::kMN && kB == MatrixMajor::kMN);
    if constexpr (kTma && TMA_GEMM_EARLY_ISSUE != 0 && Cfg::kConsumerFill) {
      if (threadIdx.x == 2 * kWarpgroupThreads) {
        cudaGridDependencySynchronize();
        fill_from_table<Cfg, kA, kB>(pipe, smem, &map_a, &map_b, p, rank, cluster_m);
      }
      __syncwarp();
    }
    if constexpr (!kWalkFirst) ready();
    const EpilogueMaps maps{&map_c, &map_d, &map_c_tail, &map_d_tail};
    const bool stamp = TMA_GEMM_TRACE != 0 && threadIdx.x % kWarpgroupThreads == 0;
    if (stamp && warpgroup == 1) trace_kernel(p, kConsumerStart, clock64());
    // The consumer warpgroup's index, warp-uniform for the compiler: read from lane 0 with a
    // shuffle, it is a value ptxas may keep in a uniform register, so everything the k-loop derives
    // from it (a cooperative warpgroup's A rows in its wgmma descriptors, its stage addresses)
    // runs on the uniform datapath, once per warp instead of in 32 lanes. Computed from threadIdx
    // it is, as far as ptxas can tell, per-thread: the k-loop of the cooperative tiles had ~28
    // vector instructions per k-block and warp (descriptor arithmetic, then R2UR into the uniform
    // registers wgmma reads), 1-5 with it (SASS, session 47). Measured (H100, session 47, eight
    // alternating README-regime rounds against the build without it, ratio to cuBLASLt): squares
    // +0.45%, LLM +0.42%; by configuration 128 x 256 +0.55% (21 shapes), 128 x 128 cooperative
    // +0.43%, 128 x 224 +0.94%, 128 x 136 +0.48%, while the configurations whose k-loop it left as
    // it was (the ping-pongs: 128 x 128 -0.16%, 128 x 176 -0.04%) did not move. The k-loops are
    // tensor-bound, so the likely account is energy at the 700 W cap (fewer lanes switching, a
    // higher clock); cycles and clock were not measured apart (docs/perf-log.md, session 47).
    // Not for the 128 x 176 ping-pong (Config::kWide): its 240-register consumers' general
    // epilogue spilled 12-16 bytes with it.
    const int wgc = Cfg::kWide ? warpgroup - 1 : __shfl_sync(0xffffffffu, warpgroup - 1, 0);
    if constexpr (kWalkFirst) {
      consume<Cfg, kF16, kA, kB, kPlain, kTma>(pipe, smem, c_bar[wgc], maps, p, wgc, rank,
                                               cluster_m, ready);
    } else {
      consume<Cfg, kF16, kA, kB, kPlain, kTma>(pipe, smem, c_bar[wgc], maps, p, wgc, rank,
                                               cluster_m, [] {});
    }
    if (stamp) trace_kernel(p, warpgroup == 1 ? kConsumerDone : kConsumerDone1, clock64());
  } else if constexpr (kTma) {
    produce_tma<Cfg, kA, kB, kEarly>(pipe, smem, &map_a, &map_b, p, rank, cluster_m);
    if constexpr (TMA_GEMM_TRACE != 0) {
      if (threadIdx.x == 0) trace_kernel(p, kProducerDone, clock64());
    }
    if (p.sched.sk_tiles > 0 && static_cast<int>(threadIdx.x) / 32 == kFlagWarp)
      publish_flags<Cfg>(p, rank, cluster_m);
  } else {
    warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    if constexpr (TMA_GEMM_TRACE != 0) {
      if (threadIdx.x == 0) trace_kernel(p, kProducerRegAlloc, clock64());
    }
    cudaGridDependencySynchronize();
    produce_ordinary<Cfg, kA, kB>(pipe, smem, p);
  }
  // No cluster barrier before the exit: no CTA leaves while a peer's multicast copies or remote
  // releases still target it, because its consumers waited for every copy (full barriers) and
  // its producer for every release (produce_tma's tail). The ordinary path runs clusters of 1.
  // (With a final cluster_sync a CTA left 1,200-1,800 cycles after its consumers were done,
  // without it ~140: gemm_trace, session 12.)
  if constexpr (TMA_GEMM_TRACE != 0) {
    if (threadIdx.x % kWarpgroupThreads == 0) trace_kernel_exit(p);
  }
}

}  // namespace tma::ops::detail::gemm
