// tmakit ops (internal): the GEMM kernel's compile-time configuration and the run-time heuristics,
// all in one place. Host and device code.
//
// Napkin math (H100 SXM, 132 SMs, ~989 dense bf16 TFLOP/s at 1830 MHz: ~7.5 TFLOP/s per SM):
//   128 x 256 x 64 per stage = 4.2 MFLOP -> ~0.56 us per stage per SM; the stage brings 48 KiB
//   (16 KiB of A, 32 KiB of B): 88 GB/s per SM, 11.5 TB/s over the GPU, from L2 mostly (each A
//   tile is reused by every CTA of its tile row, each B tile by its tile column: the grouped
//   raster keeps both in L2) and 2x less B traffic with the 2-CTA multicast.
//   Registers: 64 x 256 f32 accumulators per consumer warpgroup = 128 per thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gemm_order.hpp"
#include "gemm_schedule.hpp"
#include "plan.hpp"
#include "tma/ops/gemm.hpp"

namespace tma::ops::detail::gemm {

inline constexpr int kBlockM = 128;  // two consumer warpgroups x 64 rows (wgmma M)
inline constexpr int kBlockK = 64;   // 64 x 2 B = one 128 B swizzle row
inline constexpr int kConsumerWarpgroups = 2;
inline constexpr int kWarpgroups = 1 + kConsumerWarpgroups;  // the producer warpgroup + consumers
inline constexpr int kThreads = 128 * kWarpgroups;
inline constexpr int kConsumerWarps = 4 * kConsumerWarpgroups;
// Register budgets per thread after setmaxnreg. The launch (launch bounds 384 x 1) gives every
// thread 65536 / 384 rounded down to a multiple of 8 = 168: the CTA's pool is 384 x 168 = 64512
// registers, and setmaxnreg.inc waits until the pool has them (a budget over it hangs: measured,
// H200, session 9). So producer + 2 x consumer <= 504, each a multiple of 8. The consumers hold
// the accumulators (128 per thread at 128 x 256 cooperative, 176 at 128 x 176 ping-pong) +
// descriptors and epilogue temporaries; the producer only addresses.
inline constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
inline constexpr int kProducerRegs = 40;
inline constexpr int kConsumerRegs = 232;
// A wide ping-pong tile (176 accumulators per thread) needs the most the pool allows.
inline constexpr int kWideProducerRegs = 24;
inline constexpr int kWideConsumerRegs = 240;
static_assert(kProducerRegs + kConsumerWarpgroups * kConsumerRegs <= kLaunchRegs * kWarpgroups &&
                  kWideProducerRegs + kConsumerWarpgroups * kWideConsumerRegs <=
                      kLaunchRegs * kWarpgroups,
              "the register budgets after setmaxnreg must fit the CTA's 384 x 168 registers");

inline constexpr std::uint32_t kAtomBytes = 64 * 128;  // one 64 x 64 TMA box, 16-bit elements
inline constexpr std::uint32_t kAlign = 1024;          // SWIZZLE_128B repeats every 1024 B
// Epilogue staging: per consumer warpgroup a ring of Config::kEpiBuffers (2 or 4) buffers of 64
// rows x 128 B (one swizzle row each).
inline constexpr std::uint32_t kEpiBufferBytes = 64 * 128;

// 16-bit outputs are staged with stmatrix (and C read with ldmatrix) .x4 (ptx/matrix.hpp): block
// s (0..3) of a chunk is the 16 x 16 block of 16-bit elements at rows 16 w .. 16 w + 15 (warp w
// of the warpgroup), columns 16 s .. 16 s + 15 of the chunk. Its matrix j (0..3) holds rows
// 8 (j % 2) .. + 7 and columns 16 s + 8 (j / 2) .. + 7: accumulator group 2 s + j / 2 of the
// chunk, row half j % 2 (device/wgmma_desc.hpp: accumulator_coord), i.e. each thread's registers
// stmatrix_register(s, j) and + 1, counted from the chunk's first.
TMA_HOST_DEVICE constexpr int stmatrix_register(int s, int j) {
  return 4 * (2 * s + j / 2) + 2 * (j % 2);
}
// The byte offset in the chunk's buffer (64 rows x 128 B, SWIZZLE_128B) of the matrix row that
// thread t (0..127) of the warpgroup addresses in block s: lanes 8 j .. 8 j + 7 address matrix j.
TMA_HOST_DEVICE constexpr std::uint32_t stmatrix_row_offset(int t, int s) {
  const int lane = t % 32, j = lane / 8;
  const int row = 16 * (t / 32) + 8 * (j % 2) + lane % 8;
  const int chunk = 2 * s + j / 2;  // its 16-byte chunk of the 128-byte row, before the swizzle
  return static_cast<std::uint32_t>(row * 128 + ((chunk ^ (row % 8)) * 16));
}
// Swapped operands (Config::kSwap): the accumulators hold the transpose of the warpgroup's part,
// their rows the tile's columns (n; warp w's 16 w .. 16 w + 15), their columns its rows (m). Block
// s (0..3) of a chunk (64 rows of m x 64 columns of n, 16-bit) is accumulator groups 2 s, 2 s + 1
// (the chunk's rows 16 s .. 16 s + 15) of each warp, and stmatrix .x4 .trans stores its matrix j
// (registers stmatrix_register(s, j), as above) transposed: the matrix's row c is the chunk's row
// 16 s + 8 (j / 2) + c, 16 bytes at columns 16 w + 8 (j % 2) .. + 7. The byte offset in the
// chunk's buffer (SWIZZLE_128B) of the row that thread t addresses (lanes 8 j .. 8 j + 7: matrix
// j).
TMA_HOST_DEVICE constexpr std::uint32_t stmatrix_trans_row_offset(int t, int s) {
  const int lane = t % 32, j = lane / 8;
  const int row = 16 * s + 8 * (j / 2) + lane % 8;
  const int chunk = 2 * (t / 32) + j % 2;  // its 16-byte chunk of the 128-byte row, unswizzled
  return static_cast<std::uint32_t>(row * 128 + ((chunk ^ (row % 8)) * 16));
}
// The columns of a tile's last, narrower output chunk for outputs of esize bytes (0: none, when
// block_n is a whole number of 128-byte chunks): gemm_epilogue.cuh stages and stores it, gemm.cu
// encodes the maps of that box.
TMA_HOST_DEVICE constexpr int tail_columns(int block_n, int esize) {
  return block_n % (128 / esize);
}
// The rows of a K-major B's box: each CTA of a cluster of cluster_m loads its share of the tile's
// block_n rows (multicast to all), a whole number of 1024-byte swizzle repeats (8 rows of 128 B)
// so that each share starts on one: block_n / cluster_m rounded up to 8. gemm.cu encodes the map
// with this box. Where block_n / cluster_m is not a multiple of 8 (144, 176 and 240 in clusters
// of 4, 136 in clusters of 2 and 4) the shares overlap: see row_box_start.
TMA_HOST_DEVICE constexpr int row_box_rows(int block_n, int cluster_m) {
  return ((block_n + cluster_m - 1) / cluster_m + 7) / 8 * 8;
}
// Where rank r's share starts in the tile (rows): r shares in, the last one moved back to end at
// block_n (144 in clusters of 4: boxes of 40 rows at 0, 40, 80 and 104; rows 104-119 arrive twice,
// the same bytes, and every CTA expects cluster_m x row_box_rows rows: row_box_stage_rows).
TMA_HOST_DEVICE constexpr int row_box_start(int block_n, int cluster_m, int rank) {
  const int rows = row_box_rows(block_n, cluster_m);
  return rank * rows < block_n - rows ? rank * rows : block_n - rows;
}
// The B rows that land in each CTA's stage per k-block (block_n, or more where shares overlap).
TMA_HOST_DEVICE constexpr int row_box_stage_rows(int block_n, int cluster_m) {
  return cluster_m * row_box_rows(block_n, cluster_m);
}

// Named barriers: 0 is __syncthreads; consumer warpgroup w syncs its epilogue on 1 + w and its
// stream-K handoff (the flag poll, the slot writes) on 3 + w; ping-pong: warpgroup w waits for
// its turn at the tensor cores on 5 + w (the other warpgroup arrives there). TMA path: the
// warpgroup that wrote half h of a partial tile arrives on 7 + h, where the producer warpgroup's
// flag warp (kFlagWarp) waits before it publishes the half (gemm_kernel.cuh: publish_flags); in
// an aligned one-row split (Schedule::sk_pieces) the flag warp of a finisher arrives on 9 + h once
// it has seen every peer's flag of half h, where the finishing warpgroup waits before it copies
// the peers' partial tiles in (add_peer_partials_bulk).
inline constexpr std::uint32_t kEpilogueBarrier = 1;
inline constexpr std::uint32_t kStreamKBarrier = 3;
inline constexpr std::uint32_t kOrderBarrier = 5;
inline constexpr std::uint32_t kFlagBarrier = 7;
inline constexpr std::uint32_t kReadyBarrier = 9;
inline constexpr int kFlagWarp = 1;  // of the producer warpgroup (TMA path: warp 0 loads)

// The compiled configurations (kGemmConfigs in ops/gemm.hpp, by index) as types.
template <int kIndex>
struct Config {
  static constexpr int kBlockN = kGemmConfigs[kIndex].block_n;
  static constexpr int kStages = kGemmConfigs[kIndex].stages;
  static constexpr int kEpiBuffers = kGemmConfigs[kIndex].epilogue_buffers;
  static constexpr std::uint32_t kEpiBytes = kConsumerWarpgroups * kEpiBuffers * kEpiBufferBytes;
  // Cooperative: each consumer warpgroup multiplies 64 rows (one half) of every tile. Ping-pong:
  // each multiplies all 128 rows (both halves, two wgmma per k-step) of every other tile.
  static constexpr bool kPingPong = kGemmConfigs[kIndex].pingpong;
  static constexpr int kHalves = kPingPong && !kGemmConfigs[kIndex].swap_ab ? 2 : 1;
  // Swapped operands (GemmConfig::swap_ab): a kTileM (256) x kBlockN (64) tile, whose transpose
  // a ping-pong consumer warpgroup accumulates as wgmma M = 64 (the tile's columns: B's rows) x
  // N = 256 (the tile's rows: A's).
  static constexpr bool kSwap = kGemmConfigs[kIndex].swap_ab;
  static constexpr int kTileM = ::tma::ops::gemm_config_block_m(kGemmConfigs[kIndex]);
  static constexpr int kWgmmaN = kSwap ? kTileM : kBlockN;
  static constexpr int kAccumulators = kWgmmaN / 2;  // f32 registers per consumer thread and half
  // Releases per stage and destination CTA: one per warpgroup that reads it (gemm_kernel.cuh:
  // mainloop).
  static constexpr int kReleasingWarpgroups = kPingPong ? 1 : kConsumerWarpgroups;
  static constexpr int kAtomsA = kTileM / 64;
  // B: kBlockN rows of 128 B either way: one box of rows (K-major B; half of them per CTA in a
  // 2-CTA cluster) or, MN-major, kBlockN / 64 atoms (64 x 64 boxes), which a width that is not a
  // multiple of 64 cannot be cut into (kRowBoxB: K-major B only).
  static constexpr bool kRowBoxB = ::tma::ops::gemm_config_needs_k_major_b(kGemmConfigs[kIndex]);
  static constexpr int kAtomsB = kRowBoxB ? 0 : kBlockN / 64;
  static constexpr std::uint32_t kABytes = kAtomsA * kAtomBytes;
  static constexpr std::uint32_t kBBytes = static_cast<std::uint32_t>(kBlockN) * 128;
  static constexpr std::uint32_t kStageBytes = kABytes + kBBytes;
  // Dynamic shared memory: alignment slack, the ring, the epilogue buffers.
  static constexpr std::uint32_t kSmemBytes = kAlign + kStages * kStageBytes + kEpiBytes;
  static_assert(kBlockN == 256 || kBlockN == 240 || kBlockN == 224 || kBlockN == 192 ||
                    kBlockN == 176 || kBlockN == 144 || kBlockN == 136 || kBlockN == 128 ||
                    (kSwap && kBlockN == 64),
                "block_n is a wgmma N tmakit wraps: 256, 240, 224, 192, 176, 144, 136 or 128 (64 "
                "with swapped operands: wgmma M)");
  static_assert(!kSwap || (kBlockN == 64 && kTileM == 256 && kPingPong),
                "a swapped-operand tile is 256 x 64, ping-pong: wgmma M = 64 (the tile's "
                "columns), N = 256 (its rows; a cooperative form, N = 128 per warpgroup, was 17% "
                "slower: docs/perf-log.md session 39)");
  // A cluster's CTAs load shares of a K-major B's rows, each starting on a 1024-byte swizzle
  // repeat (8 rows; row_box_start): kBlockN a multiple of 8.
  static_assert(kBlockN % 8 == 0, "block_n is a multiple of 8 (a K-major B's shares)");
  static_assert(!kPingPong || kBlockN == 128 || kBlockN == 176 || kSwap,
                "a ping-pong warpgroup holds a 128 x block_n tile: block_n accumulators per "
                "thread, 128 or 176 (more do not fit its 240 registers)");
  // setmaxnreg budgets (kLaunchRegs above).
  static constexpr bool kWide = kPingPong && kBlockN > 128;
  static constexpr int kProducerRegisters = kWide ? kWideProducerRegs : kProducerRegs;
  static constexpr int kConsumerRegisters = kWide ? kWideConsumerRegs : kConsumerRegs;
  // An aligned one-row split's finisher waits for its peers' flags through its flag warp
  // (gemm_kernel.cuh: publish_flags, kReadyBarrier). Not the wide ping-pong: its consumers have
  // no register to spare for the second copy path (24 bytes of spills); it polls as before.
  static constexpr bool kPrepollFlags = !kWide;
  // The producer thread issues its first tile's first k-block (Params::first_tile) before its
  // warpgroup's setmaxnreg.dec and the rest of that tile's first ring fill before its walk, the
  // consumers walk their first unit before their setmaxnreg.inc (gemm_kernel.cuh: produce_tma's
  // kTable, consume). Not the wide ping-pong: its 24-register producer spilled (12 bytes in the
  // table's form, session 37), its consumers the walk's values across the inc.
  static constexpr bool kEarlyIssue = !kWide;
  // The wide ping-pong instead: a thread of its second consumer warpgroup (whose first unit
  // starts only after the first warpgroup's whole k-loop) issues the table tile's first ring fill
  // before its setmaxnreg.inc, and the producer, finding the table entry again after its dec,
  // walks its first unit in a block of its own before the unit loop (gemm_kernel.cuh:
  // fill_from_table, produce_tma), so that no value crosses the producer's dec.
  static constexpr bool kConsumerFill = kWide;
  static_assert(kStages >= 2 && kStages <= 8, "2..8 pipeline stages");
  // 227 KiB is the opt-in maximum per block on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin),
  // static shared memory (the barriers) included.
  static_assert(kSmemBytes + 256 <= 227 * 1024,
                "the configuration's shared memory exceeds the 227 KiB an sm_90 block may use: "
                "fewer stages or a narrower block_n");
};

// What the kernel gets besides the tensor maps (host and device).
// Which type D (and C) has; a general kernel picks its epilogue at run time, so that one kernel
// serves all types (a plain kernel, gemm_kernel.cuh: kPlain, has D in the inputs' type).
enum class OutKind : std::uint32_t { kBF16, kF16, kF32 };

struct Params {
  std::int32_t m, n, k;
  float alpha, beta;
  std::int32_t tiles_m, tiles_n, k_blocks;
  std::int32_t cluster_tiles;  // ceil(tiles_m / cluster_m) x tiles_n (< 2^31: checked by the host)
  OutKind out;
  // Which units each CTA (cluster) computes: whole tiles, and the stream-K split ones
  // (gemm_schedule.hpp); workers = gridDim.x / cluster_m.
  Schedule sched;
  // Stream-K workspace (null when sched.sk_tiles == 0): 2 flags per CTA, and one slot of
  // kBlockM x kBlockN fp32 per CTA (gemm_schedule.hpp). A flag is set when it holds sk_epoch, the
  // launch's own tag (flag_epoch): whatever the flags held before the launch reads as unset.
  std::uint64_t* sk_flags;
  float* sk_slots;
  std::uint64_t sk_epoch;
  // Timestamps (clock64) per CTA, role and unit; only builds with TMA_GEMM_TRACE=1 write them
  // (bench/experiments/gemm_trace.cu); null otherwise. Layout: trace_slot below.
  unsigned long long* trace;
  // Ordinary path only: pointers and leading dimensions in bytes.
  const unsigned char* a;
  const unsigned char* b;
  const unsigned char* c;
  unsigned char* d;
  std::int64_t lda_bytes, ldb_bytes, ldc_bytes, ldd_bytes;
  // The tile order (gemm_schedule.hpp: raster_tile), its divisors prepared. Last: a field placed
  // before the pointers made config 7's 24-register producer spill (session 16).
  Raster raster;
  // The worker (gemm_schedule.hpp) that cluster c (blockIdx.x / cluster_m) runs, for
  // c < kWorkerMap (the identity past it): a permutation, GPC-aware on the TMA path
  // (gemm_order.hpp), the identity otherwise. After the raster, for the same reason.
  std::uint8_t worker_of[kWorkerMap];
  // first_tile_of(sched, raster, worker_of[c], cluster_m) for c < kWorkerMap (gemm_schedule.hpp):
  // cluster c's first tile when it is data-parallel, so that its producer issues the first load
  // before walking its schedule (kNoFirstTile past the launch's clusters).
  std::uint32_t first_tile[kWorkerMap];
};

// TMA_GEMM_TRACE builds: where role r (0 producer, 1 + w consumer warpgroup w) of CTA `cta`
// stamps point `point` (kTracePoints per unit) of its unit `unit` (< kTraceUnits; later units are
// not recorded). Role kTraceKernel, unit 0, holds the CTA's whole-lifetime stamps (TraceKernel).
inline constexpr int kTraceUnits = 64;
// Point 13 holds the unit's kind and k-blocks ((kind << 24) | k-blocks), not a time; 14..17
// stamp the stream-K handoff (gemm_kernel.cuh: publish_partial, add_peer_partials).
inline constexpr int kTracePoints = 18;  // 0..17 (gemm_kernel.cuh, gemm_epilogue.cuh)
inline constexpr int kTraceKernel = 1 + kConsumerWarpgroups;
inline constexpr int kTraceRoles = kTraceKernel + 1;
TMA_HOST_DEVICE constexpr std::int64_t trace_slot(int cta, int role, int unit, int point) {
  return ((std::int64_t{cta} * kTraceRoles + role) * kTraceUnits + unit) * kTracePoints + point;
}
// The whole-lifetime points (clock64 unless named _ns: %globaltimer, comparable across SMs).
enum TraceKernel : int {
  kEntry = 0,          // thread 0, the kernel's first statement
  kEntryNs = 1,        //
  kInitSynced = 2,     // thread 0, barriers initialized and the first cluster barrier passed
  kConsumerStart = 3,  // consumer warpgroup 0's leader, after setmaxnreg
  kConsumerDone = 4,   // its unit loop and last wait_group_read done
  kProducerDone = 5,   // thread 0 (the TMA producer) after its tail
  kExit = 6,           // the last of the three warpgroup leaders to leave (atomicMax)
  kExitNs = 7,
  kConsumerDone1 = 8,      // consumer warpgroup 1's leader, as kConsumerDone
  kProducerReady = 9,      // thread 0 (the TMA producer) after setmaxnreg and the PDL wait
  kProducerCursor = 10,    // thread 0 with its first unit (schedule walked, before tile_of)
  kProducerRegAlloc = 11,  // thread 0 (the TMA producer) after setmaxnreg, before the PDL wait
  kConsumerRegAlloc = 12,  // consumer warpgroup 0's leader after setmaxnreg, before the PDL wait
};

// ---- D's edge --------------------------------------------------------------------------------

// The columns of D that the TMA path writes with TMA stores: n rounded down to whole 16-byte chunks
// of a row (0 when a row of D has fewer than 16 bytes). Why: TMA stores write dimension 0 in whole
// 16-byte chunks (docs/hardware-findings.md, finding 4; model::stored_dim0_limit), so a D map with
// dims[0] = n would overwrite the rest of every row's last chunk (padding, or past the end of D's
// last row). With dims[0] = tma_store_columns(n, esize) the stores end exactly there; the edge
// kernel (gemm_edge.cuh) computes the remaining n - tma_store_columns(n, esize) < 16 / esize
// columns. tests/gemm/test_gemm_host.cpp checks this against the model.
using ::tma::ops::detail::tma_store_columns;  // src/ops/plan.hpp, shared with copy / transpose
// The most columns the edge kernel computes: a 16-bit D row's last partial chunk (fp32: 3).
inline constexpr int kMaxEdgeColumns = 16 / 2 - 1;
static_assert(15 - tma_store_columns<std::int64_t>(15, 2) == kMaxEdgeColumns &&
                  7 - tma_store_columns<std::int64_t>(7, 4) == 3,
              "the edge kernel computes at most 16 / esize - 1 columns of D");

// ---- heuristics (run time); each is a guess until measured --------------------------------------

// Tile rows (in clusters) per group of the grouped raster. To be measured: 4, 8, 16.
inline constexpr int kDefaultRasterGroup = 8;

// Config 0 (128 x 256) unless config 1 (128 x 128) finishes sooner by a wave model: time = waves x
// tile time, one tile per SM per wave, a 128 x 128 tile taking 0.64 of a 128 x 256 one (it runs
// at ~78% of the FLOP rate once the SMs are full). From tma-bench gemm --sweep on the H200
// (2026-11-22, docs/perf-log.md): the old rule (config 1 whenever config 0 has fewer tiles than
// SMs) lost 20% at M = 1024, N = 4096 (128 tiles: one wave either way, config 0 wins), and the
// model picks the faster configuration in every swept shape where they differ by more than noise.
// The fitting widths (192, 224, 240, 176: kFitConfigs) are chosen when the model predicts one at
// least 1 - kTileFitGain faster than the better of the other two (the fastest such one); they
// win only where 256 or 128 leave much of the last wave (or a tile column) empty, elsewhere they
// agree within noise. Config 3 (128 x 192) takes 0.75 of a 128 x 256 tile's time, i.e. the same
// FLOP rate (sweep, H200, 2026-11-22 session 3: 8192^3 704 vs 701 TFLOP/s, equal wave counts;
// N = 2112 = 11 x 192: 4096 x 2112 x 7168 700 vs 547). The widths 224, 240 (the rate of 256 by
// the shared-memory model: 132 and 130 B per cycle against 128 at 256, docs/perf-log.md v1.6
// item 6) and 176 (0.95 of it: 143 B per cycle) are the model's until a sweep measures them.
inline constexpr double kNarrowTileTime = 0.64;
inline constexpr double kTile192Time = 0.75;
inline constexpr double kTileFitGain = 0.95;
inline constexpr double kTile176Rate = 0.95;
inline constexpr int kConfig192 = 3;
inline constexpr int kFitConfigs[] = {kConfig192, 4, 5, 6};
static_assert(kGemmConfigs[kConfig192].block_n == 192 && !kGemmConfigs[kConfig192].pingpong,
              "kConfig192 names the cooperative 128 x 192 configuration");
// Configuration 8 (128 x 144): a one-wave tile for N = 2112 at M = 1024 (include/tma/ops/
// gemm.hpp). Not in kFitConfigs and never split by the cost model, also when GemmTuning::config
// names it (tuning.stream_k = 2 splits it): the plan takes it only by its own rule (the 144 rule
// in choose_plan).
inline constexpr int kConfig144 = 8;
static_assert(kGemmConfigs[kConfig144].block_n == 144 && !kGemmConfigs[kConfig144].pingpong,
              "kConfig144 names the cooperative 128 x 144 configuration");
// Configuration 9 (128 x 136): the same for one wave of more, narrower tiles (N = 2112 at M =
// 1024: 128 tiles against 144's 120), taken before the 144 one by the same rule when K has at
// least kOneWave136MinKBlocks k-blocks (choose_plan).
inline constexpr int kConfig136 = 9;
static_assert(kGemmConfigs[kConfig136].block_n == 136 && !kGemmConfigs[kConfig136].pingpong,
              "kConfig136 names the cooperative 128 x 136 configuration");
static_assert(kGemmConfigs[4].block_n == 224 && kGemmConfigs[5].block_n == 240 &&
                  kGemmConfigs[6].block_n == 176 && !kGemmConfigs[4].pingpong &&
                  !kGemmConfigs[5].pingpong && !kGemmConfigs[6].pingpong,
              "kFitConfigs names the cooperative 224, 240 and 176 configurations");
// The time of one tile of a configuration, in 128 x 256 tile times: the wave model's rates for
// the widths choose_config chooses among, and the 128-wide tile's rate per output for the narrow
// tiles the plan takes only by its own rules (144, 136) and the 256 x 64 swapped tile (their
// k-loops run narrow wgmma or read as many operand bytes per FLOP; candidate_plans orders them by
// it, the plan never splits them).
inline double tile_time(int config) {
  const GemmConfig& g = kGemmConfigs[config];
  if (g.swap_ab || g.block_n <= 144)
    return kNarrowTileTime * ::tma::ops::gemm_config_block_m(g) * g.block_n / (kBlockM * 128.0);
  switch (g.block_n) {
    case 256:
      return 1.0;
    case 192:
      return kTile192Time;
    case 176:
      return g.block_n / 256.0 / kTile176Rate;
    default:  // 224, 240
      return g.block_n / 256.0;
  }
}
// The plan's estimate of a launch: `config`'s tiles with their rows paired into clusters of
// cluster_m (cluster tiles), and the workers (clusters) of one CTA per SM.
inline std::int64_t cluster_tiles(std::int64_t m, std::int64_t n, int config, int cluster_m) {
  const std::int64_t block_m = ::tma::ops::gemm_config_block_m(kGemmConfigs[config]);
  const std::int64_t block_n = kGemmConfigs[config].block_n;
  return ((m + block_m - 1) / block_m + cluster_m - 1) / cluster_m * ((n + block_n - 1) / block_n);
}
inline std::int32_t plan_workers(int sm_count, int cluster_m) {
  const int w = sm_count / cluster_m;
  return static_cast<std::int32_t>(w > 0 ? w : 1);
}
// Whether the plan may choose `config` for a B of this major-ness (gemm_config_needs_k_major_b)
// in clusters of cluster_m CTAs (gemm_config_supports_cluster).
inline bool config_allowed(int config, bool k_major_b, int cluster_m = 1) {
  return ::tma::ops::gemm_config_allowed(kGemmConfigs[config], cluster_m, k_major_b);
}
inline int choose_config(std::int64_t m, std::int64_t n, int sm_count, bool k_major_b = true,
                         int cluster_m = 1) {
  const auto time = [&](int config) {
    const std::int64_t block_n = kGemmConfigs[config].block_n;
    const std::int64_t tiles = ((m + kBlockM - 1) / kBlockM) * ((n + block_n - 1) / block_n);
    return static_cast<double>((tiles + sm_count - 1) / sm_count) * tile_time(config);
  };
  const int wide_or_narrow = time(1) < time(0) ? 1 : 0;
  int best = wide_or_narrow;
  double t_best = kTileFitGain * time(wide_or_narrow);
  for (const int config : kFitConfigs) {
    if (!config_allowed(config, k_major_b, cluster_m)) continue;
    const double t = time(config);
    if (t < t_best) {
      best = config;
      t_best = t;
    }
  }
  return best;
}

// 2-CTA clusters along M (sharing B through multicast) for a data-parallel launch whenever there
// are tile rows to pair, unless an odd count's idle CTA (the last cluster's second one) adds a
// wave. Measured (sweep, H200, 2026-11-22): with tiles_m >= 2 cluster 2 was faster for 128 x 128
// tiles on every shape (+4% .. +11%, e.g. 512 x 4096 x 11008: 601 -> 653 TFLOP/s) and within
// -2% .. +8% for 128 x 256; at tiles_m = 1 it halves the useful CTAs and lost up to 49%
// (128 x 28672 x 8192, 128 x 128: 457 -> 234).
inline int choose_cluster_m(std::int64_t tiles_m, std::int64_t tiles_n, int sm_count) {
  if (tiles_m < 2) return 1;
  const std::int64_t pairs = sm_count / 2 > 0 ? sm_count / 2 : 1;
  const std::int64_t waves1 = (tiles_m * tiles_n + sm_count - 1) / sm_count;
  const std::int64_t waves2 = ((tiles_m + 1) / 2 * tiles_n + pairs - 1) / pairs;
  return waves2 <= waves1 ? 2 : 1;
}

// Clusters for a stream-K launch: the split levels the work over all CTAs, so an idle CTA (odd
// tiles_m) is lost time, not a lost wave: 2 when tiles_m is even or large enough that the idle
// row costs at most 1/9 of the CTAs (tiles_m >= 8). Not measured yet (tma_cfgX_sk2).
inline int choose_stream_k_cluster_m(std::int64_t tiles_m) {
  return tiles_m >= 2 && (tiles_m % 2 == 0 || tiles_m >= 8) ? 2 : 1;
}

// ---- the plan: configuration, cluster, split --------------------------------------------------
// Measured (tma-bench gemm --sweep, H200, 132 SMs, 2026-11-22, 47 shapes, two sweeps;
// docs/perf-log.md):
//   - data-parallel: the wave model's configuration (choose_config) with cluster 2 when tiles_m >=
//     2 was the best data-parallel variant or within 3% on every shape;
//   - stream-K with clusters of 1 beat it only where data-parallel left most SMs idle (M = 128,
//     N = 2112): its k-blocks cost ~1.6 data-parallel ones (no B multicast, staggered k offsets);
//   - stream-K with clusters of 2 costs ~1.3 and wins wherever the last data-parallel wave is
//     under ~90% full and K is long enough: 1024 x 2112 x 7168 412 -> 542 TFLOP/s (128 x 128
//     split), 2048 x 11008 x 4096 675 -> 730, 512 x 28672 x 8192 654 -> 722; it loses where the
//     waves are full (2048 x 4096 x 11008: 799 -> 591) and at K < 32 k-blocks (1024^3: -21%).
// So: the data-parallel plan unless K >= kMinStreamKBlocks k-blocks and a split (either
// configuration, clusters by choose_stream_k_cluster_m) is predicted to take less than
// kStreamKGain of its time by the cost model (gemm_schedule.hpp: stream_k_time, with the block
// cost of its cluster size). Times in 128 x 256 k-block times (other tiles scaled by
// tile_time). Since the rotated k order (gemm_schedule.hpp: k_shift; session 6, 2026-11-24) a
// split k-block costs ~1.1 with clusters of 2, and the refitted model splits wherever it
// predicts any gain (kStreamKGain 1.0; it was 0.95 with the old costs): on that session's sweep
// the choices average 0.995 of each shape's best variant (worst 0.957: 512 x 4096 x 11008);
// before, 0.991 on the session-3 sweep (tests/gemm/test_gemm_host.cpp pins them).
inline constexpr std::int32_t kMinStreamKBlocks = 32;
inline constexpr double kStreamKGain = 1.0;
// No split when the data-parallel plan's last wave keeps at least this share of the workers busy:
// a split then saves at most the idle share, and its handoff and the stream-K pieces' reads at
// staggered k offsets cost more. The cost model above (fitted on shapes whose last wave was far
// from full) had 512 x 4096 x 11008 (128 tiles of 128 x 128 on 132 SMs, one wave 97% full) split
// on 128 x 192 tiles; measured there, in every recorded sweep (five H200, two H100), the one
// 128 x 128 wave in clusters of 2 was as fast (H200: 0.808-0.827x cuBLASLt against the split's
// 0.783-0.821x) or faster (H100: 0.893 / 0.923x against 0.801 / 0.819x, the sweeps of sessions 20
// and 24). No other swept shape changes (bench/fit_plan.py).
inline constexpr double kFullWaveShare = 0.95;

// The caller's fixed choices (GemmTuning): config -1, cluster_m 0 and stream_k 0 leave them to the
// heuristic; may_cluster = false (the ordinary path: no multicast) means clusters of 1.
struct PlanRequest {
  int config = -1;
  int cluster_m = 0;
  int stream_k = 0;  // 0 heuristic, 1 off, 2 on
  bool may_cluster = true;
  bool k_major_b = true;  // B column-major: every configuration; else those of 64-column atoms
  // A row-major and a plain product (D in the inputs' type, alpha 1, beta 0): what a swapped-
  // operand configuration also needs (gemm_config_swap_supported).
  bool k_major_a = true;
  bool plain = false;
  // The device's peak DRAM bandwidth in GB/s (memory clock x bus width; 0: unknown). The swap
  // rule needs at least kSwapMinMemoryGbps.
  double memory_gbps = 0;
};

struct GemmChoice {
  int config;
  int cluster_m;
  bool split;
};

// The ping-pong rule of choose_plan: configuration 7 (128 x 176 ping-pong) or 2 (128 x 128
// ping-pong) in clusters of 2, data-parallel, for K <= 8192 and a column-major B with at least
// 3.5 waves of its 2-CTA cluster tiles; of the two, the one the wave model gives the shorter time
// (waves x block_n, the 176-wide tile's per-column time kPingPong176Time of the 128-wide one's);
// and only when that time is at most kPingPongGain of the cooperative data-parallel choice's
// (waves x block_n).
inline constexpr int kWidePingPongConfig = 7;
inline constexpr int kNarrowPingPongConfig = 2;
static_assert(kGemmConfigs[kWidePingPongConfig].pingpong &&
                  kGemmConfigs[kWidePingPongConfig].block_n == 176,
              "kWidePingPongConfig names the 128 x 176 ping-pong");
static_assert(kGemmConfigs[kNarrowPingPongConfig].pingpong &&
                  kGemmConfigs[kNarrowPingPongConfig].block_n == 128,
              "kNarrowPingPongConfig names the 128 x 128 ping-pong");
inline constexpr std::int64_t kPingPongMaxKBlocks = 128;
inline constexpr int kPingPongMinHalfWaves = 7;  // 3.5 waves
inline constexpr double kPingPong176Time = 0.985;
inline constexpr double kPingPongGain = 0.97;
// The one-wave rule of choose_plan (K <= 2048: 32 k-blocks).
inline constexpr std::int64_t kOneWaveNarrowMaxKBlocks = 32;
// The 144 rule of choose_plan: one wave of 128 x 144 (or 128 x 136) cluster tiles keeping at
// least this share of the clusters busy; 136 only from this many k-blocks (K >= 4096).
inline constexpr double kWave144Share = 0.9;
inline constexpr std::int64_t kOneWave136MinKBlocks = 64;
// ... and for 128 x 136 tiles up to this many waves, the last one as full (session 37).
inline constexpr std::int64_t kWaves136 = 2;
// The swap rule of choose_plan: configuration 10 (256 x 64 tiles, swapped operands, ping-pong) in
// clusters of 1, data-parallel, for a product it runs (gemm_config_swap_supported: plain, A
// row-major, B column-major) with at least kSwapMinKBlocks k-blocks, when its tiles fill at most
// kSwapMaxWaves waves of the SMs, the last at least kWave144Share full, and each CTA then computes
// fewer outputs (waves x 256 x 64) than under the choice so far (waves x 128 x block_n), on a
// device with at least kSwapMinMemoryGbps of DRAM bandwidth.
inline constexpr int kSwapConfig = 10;
static_assert(kGemmConfigs[kSwapConfig].swap_ab && kGemmConfigs[kSwapConfig].pingpong &&
                  kGemmConfigs[kSwapConfig].block_n == 64,
              "kSwapConfig names the swapped-operand 256 x 64 ping-pong");
inline constexpr std::int64_t kSwapMinKBlocks = 112;
inline constexpr std::int64_t kSwapMaxWaves = 2;
// ... and only on a device with at least this peak DRAM bandwidth (PlanRequest::memory_gbps).
// Measured (docs/perf-log.md session 44): on the H200 (4,814 GB/s) the swapped tile gains 1.7% /
// 4.2% at 1024 / 2048 x 2112 x 7168 (session 39); on the H100 SXM (3,352 GB/s) it loses 7-10% /
// 2-4% there to the 136 rule's 128 x 136 tiles in clusters of 2 (ncu, one kernel at a time:
// 78.9k cycles against 73.6k; cuBLASLt's kernel of the same form 70.2k; on the H200 68.4k against
// 68.1k). The two GPUs share the die, SM count and L2; the memory system is what differs, and the
// swapped tile's k-loop is bound by its TMA intake (40 KiB per k-block, session 39). Whether the
// cause is DRAM bandwidth itself is not established: the threshold separates the two GPUs measured,
// and a GPU not known to have the bandwidth (0) keeps the 136 rule, whose loss on the H200 is the
// smaller one.
inline constexpr double kSwapMinMemoryGbps = 4000;
// The long-K split rule of choose_plan: the 128 x 256 tile split along K in clusters of 2 for K >=
// kLongSplitMinKBlocks k-blocks (4096) with at least kLongSplitMinWaves waves of its cluster tiles,
// in place of the 128 x 176 ping-pong where the split's even share gives a CTA no more outputs
// than the ping-pong's whole waves, and in place of the 128 x 256 data-parallel plan whose last
// wave is at most kLongSplitLastWave full.
static_assert(kGemmConfigs[0].block_n == 256 && !kGemmConfigs[0].pingpong &&
                  !kGemmConfigs[0].swap_ab,
              "the long-K split rule splits configuration 0, the cooperative 128 x 256 tile");
inline constexpr std::int64_t kLongSplitMinKBlocks = 64;
inline constexpr double kLongSplitMinWaves = 5.0;
inline constexpr double kLongSplitLastWave = 0.8;

// The launch plan for an m x n x k product on sm_count SMs (one CTA per SM) under `req`: the
// data-parallel plan (config by the wave model, cluster by choose_cluster_m) unless stream-K is
// forced or pays by the rule above, each fixed choice of `req` overriding its part. The split may
// still be dropped by the caller when the launch's real worker count makes it not fit
// (stream_k_fits).
inline GemmChoice choose_plan(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count,
                              const PlanRequest& req) {
  const std::int64_t tiles_m = (m + kBlockM - 1) / kBlockM;
  const std::int64_t k_blocks64 = (k + kBlockK - 1) / kBlockK;
  // Tile rows of a configuration (256-row tiles with swapped operands).
  const auto tiles_m_of = [&](int config) {
    const std::int64_t block_m = ::tma::ops::gemm_config_block_m(kGemmConfigs[config]);
    return (m + block_m - 1) / block_m;
  };
  const auto tiles_n = [&](int config) {
    const std::int64_t block_n = kGemmConfigs[config].block_n;
    return (n + block_n - 1) / block_n;
  };
  const auto scale = [](int config) { return tile_time(config); };
  const int cluster_cap = req.may_cluster ? 2 : 1;
  const auto cluster = [&](int heuristic) {
    return req.cluster_m > 0 ? req.cluster_m : heuristic < cluster_cap ? heuristic : cluster_cap;
  };
  // Clusters of 4 only when asked (GemmTuning::cluster_m): then only the widths that split B
  // four ways (gemm_config_supports_cluster).
  const int forced_cluster = req.cluster_m > 0 ? req.cluster_m : 1;
  GemmChoice dp{
      req.config >= 0 ? req.config : choose_config(m, n, sm_count, req.k_major_b, forced_cluster),
      1, false};
  dp.cluster_m = cluster(choose_cluster_m(tiles_m_of(dp.config), tiles_n(dp.config), sm_count));
  const auto split_with = [&](int config) {
    GemmChoice c{config, 1, true};
    c.cluster_m = cluster(choose_stream_k_cluster_m(tiles_m));
    return c;
  };
  // Cluster tiles over clusters (sm_count / cluster_m of them, as the launch estimates them).
  const auto tiles_of = [&](const GemmChoice& c) {
    return cluster_tiles(m, n, c.config, c.cluster_m);
  };
  const auto workers_of = [&](const GemmChoice& c) { return plan_workers(sm_count, c.cluster_m); };
  // Waves of cluster tiles, and the outputs a CTA computes over them (the ping-pong, 144 and swap
  // rules' measure of the idle share: waves x block_m x block_n).
  const auto waves_of = [&](const GemmChoice& c) {
    return (tiles_of(c) + workers_of(c) - 1) / workers_of(c);
  };
  const auto outputs_of = [&](const GemmChoice& c) {
    return waves_of(c) * ::tma::ops::gemm_config_block_m(kGemmConfigs[c.config]) *
           kGemmConfigs[c.config].block_n;
  };
  // The long-K split rule: the 128 x 256 split in clusters of 2 (split_with(0) where that pairs
  // the tile rows), when K has at least kLongSplitMinKBlocks k-blocks and there are at least
  // kLongSplitMinWaves waves of its cluster tiles; `long_split_outputs` is then what a CTA computes
  // under it (the even share: cluster tiles / workers x 128 x 256), else 0 (no such split). Taken
  // in place of the 128 x 176 ping-pong (the ping-pong rule below) where it gives a CTA no more
  // outputs than the ping-pong's whole waves, and in place of the 128 x 256 data-parallel plan
  // (the split rule at the end) whose last wave is at most kLongSplitLastWave full. Measured
  // (H200, session 40, docs/perf-log.md; the README command's regime, eight alternating rounds
  // with the plan overridden (tma-bench --plan) on every shape it changes against the plan):
  // 1024 / 2048 / 4096 x 28672 x 8192 +3.2 / +1.5 / +2.0%, 2048 x 11008 x 4096 +2.7% (the
  // ping-pong's place), 8192 x 4096 x 4096 / 11008 +1.4 / +1.8%, 16384 x 11008 x 4096 +1.2% (the
  // data-parallel plan's), 8192 / 16384 x 28672 x 8192 +0.1 / +0.5% (there the split 128 x 224
  // tiles the cost model picked); 2048 x 11008 x 4096, 4096 x 28672 x 8192 and 8192 x 4096 x 11008
  // also +1.6-2.2% in two earlier calls. Where the same split lost (not taken): 4096 x 11008 x 4096
  // (-1.8 / -2.0%: the 128 x 128 ping-pong, whose waves are 85% full), 16384 x 2112 x 7168 (-9.7%:
  // N = 2112 wastes 12% of the 256-wide tiles' columns; the plan splits 128 x 192 tiles), 1024 x
  // 11008 x 4096 (-2.4%: 2.6 waves). The ping-pong wins at K = 2048 (session 20), the rule starts
  // at K = 4096. Leaves a given configuration, clusters of 1 or 4, a forced data-parallel plan or
  // split, a row-major B and the ordinary path alone.
  double long_split_outputs = 0;
  if (req.config < 0 && req.may_cluster && req.k_major_b &&
      (req.cluster_m == 0 || req.cluster_m == 2) && req.stream_k == 0 &&
      k_blocks64 >= kLongSplitMinKBlocks && config_allowed(0, req.k_major_b, 2)) {
    const GemmChoice s0 = split_with(0);
    const double waves = static_cast<double>(tiles_of(s0)) / static_cast<double>(workers_of(s0));
    if (s0.cluster_m == 2 && waves >= kLongSplitMinWaves &&
        tiles_of(s0) <= (std::int64_t{1} << 30) &&
        stream_k_fits(static_cast<std::int32_t>(tiles_of(s0)),
                      static_cast<std::int32_t>(k_blocks64), workers_of(s0)))
      long_split_outputs = waves * kBlockM * kGemmConfigs[0].block_n;
  }
  // Many tiles, K <= 8192: a ping-pong configuration in clusters of 2, data-parallel. A
  // cooperative tile's epilogue stalls its tensor cores (~8% of its time at K = 2048: gemm_trace,
  // session 19, H200); the ping-pong runs one warpgroup's epilogue under the other's k-loop. Its
  // narrower tiles read more bytes per FLOP from L2, which held the 128 x 128 one's k-loop at
  // 552-583 cycles per k-block (peak 512) until the GPC-aware worker order (gemm_order.hpp) let
  // the L2 merge the A reads of a GPC's clusters (522, session 23). Measured:
  //   - session 20 (H100, tma-bench's default timing, six alternating rounds): 2048 / 4096 /
  //     8192 / 16384 x 7168 x 2048 1.3 / 1.6 / 2.7 / 5.8% faster on config 7 than on the
  //     cooperative choice; 1024 x 7168 x 2048 (2.5 waves) and 2048^3 faster cooperative;
  //   - session 24 (H100, with the GPC order; docs/perf-log.md items 6-8): in two full sweeps a
  //     ping-pong beat the cooperative choice at K = 4096 and 8192 on every shape of 3.5+ waves
  //     (config 2 where 176 wastes a tile column's share: N = 4096; config 7 elsewhere), not at
  //     K = 11008. In tma-bench's default timing (the GPU at its 700 W cap, alternating rounds)
  //     it won only where it fills the waves better (4096 x 11008 x 4096 +3.6-4.0%, 1024 x 11008
  //     x 4096 +1.8-2.4%) and lost 1-2% where it ties (4096^3, 8192^3, N = 4096): it draws more
  //     power per FLOP. Hence kPingPongGain. With a row-major B it lost 2-17% (10 shapes).
  // The rule leaves a given configuration, clusters of 1 or 4, a forced split, a row-major B and
  // the ordinary path alone.
  if (req.config < 0 && req.may_cluster && req.k_major_b &&
      (req.cluster_m == 0 || req.cluster_m == 2) && req.stream_k != 2 &&
      k_blocks64 <= kPingPongMaxKBlocks) {
    GemmChoice pingpong{-1, 2, false};
    double t_pingpong = 0;
    for (const int config : {kWidePingPongConfig, kNarrowPingPongConfig}) {
      if (!config_allowed(config, req.k_major_b)) continue;
      const GemmChoice c{config, 2, false};
      if (2 * tiles_of(c) < kPingPongMinHalfWaves * workers_of(c)) continue;
      const double per_column = config == kWidePingPongConfig ? kPingPong176Time : 1.0;
      const double t = static_cast<double>(outputs_of(c)) * per_column;
      if (pingpong.config < 0 || t < t_pingpong) {
        pingpong = c;
        t_pingpong = t;
      }
    }
    // ... when its waves leave at least 3% fewer columns idle than the cooperative choice's.
    const double t_dp = static_cast<double>(outputs_of(dp));
    if (pingpong.config >= 0 && t_pingpong <= kPingPongGain * t_dp) {
      // The long-K split in the wide ping-pong's place.
      if (pingpong.config == kWidePingPongConfig && long_split_outputs > 0 &&
          long_split_outputs <= static_cast<double>(outputs_of(pingpong)))
        return split_with(0);
      return pingpong;
    }
  }
  // One wave of 128 x 256 tiles with K <= 2048: two waves of 128 x 128 tiles instead (clusters
  // of 2, data-parallel), ping-pong with a column-major B (one warpgroup's epilogue under the
  // other's k-loop), cooperative otherwise. Measured (H100, session 24, with the GPC-aware order,
  // in tma-bench's timing before session 25 fixed its L2 rotation): 2048^3 in four sweeps
  // 0.938-0.943x cuBLASLt against 0.922-0.930x on 128 x 256; four alternating rounds: 3.6%
  // faster (28.59 -> 27.61 us); `tma-bench gemm --shapes --sweep`: 2.1-5.1% faster on seven more
  // one-wave shapes with K = 256 .. 2048. Session 27 (H100, the corrected rotation, three seeds,
  // the kernels timed side by side with the plan's own as a duplicate, whose two readings were
  // up to 1.2% apart): 128 x 128 cooperative against 128 x 256 +0-2.5% on five one-wave shapes;
  // the ping-pong against the cooperative +0.3-3.3% in 13 of 15 rounds (2048^3 +0.3-1.5%, 2048 x
  // 2048 x 512 +2.4-3.3%): the cooperative 128-wide tile cannot run its epilogue under the next
  // tile's k-loop (shared-memory bandwidth, docs/perf-log.md session 27), the ping-pong does.
  // The rule leaves a given configuration, clusters of 1 or 4, a forced split and the ordinary
  // path alone.
  if (req.config < 0 && dp.config == 0 && req.may_cluster &&
      (req.cluster_m == 0 || req.cluster_m == 2) && req.stream_k != 2 &&
      k_blocks64 <= kOneWaveNarrowMaxKBlocks && tiles_of(dp) <= workers_of(dp)) {
    const GemmChoice narrow{req.k_major_b ? kNarrowPingPongConfig : 1, 2, false};
    if (tiles_m >= 2 && tiles_of(narrow) <= 2 * std::int64_t{workers_of(narrow)}) return narrow;
  }
  // One wave of 128 x 144 tiles in clusters of 2 that keeps at least 90% of the clusters busy,
  // where the data-parallel choice gives each worker more columns (waves x block_n > 144):
  // configuration 8, data-parallel (one tile per CTA, no split, no handoff). Measured (H100,
  // session 28, bench/results/h100-2026-11-27-s28-gemm-investigation.txt call 1, three seeds
  // side by side in tma-bench's timing): 1024 x 2112 x 7168 (120 tiles on 132 SMs) 45.8-46.2 us
  // against 48.7-49.3 for the split 128 x 192 tiles the cost model picks (0.945x cuBLASLt against
  // 0.887x); its k-loop runs at 586 cycles per k-block with operands in L2 (576 at the tensor
  // peak), 641 cold (gemm_trace). With a wave below 90% full or more than one, the split or the
  // wider tiles were as fast or faster (512 / 2048 x 2112 x 7168, same call).
  // Before it, with K >= 4096, the same rule for configuration 9 (128 x 136: 128 tiles there).
  // Measured (H100, session 30, bench/results/h100-2026-11-27-s30-gemm-investigation.txt call 1,
  // three seeds side by side): 1024 x 2112 x 7168 44.03-44.14 us against 44.90-44.99 on 144
  // (k-loop 558 against 579 cycles per k-block, gemm_trace, but its epilogue ~460 cycles longer:
  // odd tiles start D's rows 16 bytes into a 32-byte sector), 1024 x 2112 x 4096 -1.7 to -2.3%;
  // at K = 1024 1.7-2.7% slower than 144. Configuration 9 also in two waves whose last keeps
  // 90% of the clusters busy (kWaves136): 2048 x 2112 x 7168 (128 cluster tiles on 66 clusters).
  // Session 30 had measured it 1-2% slower there than the split 128 x 192 tiles; after sessions
  // 32-37's kernel changes (H100 and H200, session 37 calls 6-8, docs/perf-log.md) the sweep had
  // it 4% faster on the H100 and 2.5% on the H200, and the README regime's rounds (call 8) agree.
  // Leaves a given configuration, clusters of 1 or 4, a forced split, a row-major B and the
  // ordinary path alone.
  GemmChoice so_far = dp;
  bool one_wave_rule = false;
  if (req.config < 0 && req.k_major_b && req.may_cluster &&
      (req.cluster_m == 0 || req.cluster_m == 2) && req.stream_k != 2 && tiles_m >= 2) {
    for (const int config : {kConfig136, kConfig144}) {
      if (config == kConfig136 && k_blocks64 < kOneWave136MinKBlocks) continue;
      const GemmChoice wave{config, 2, false};
      const std::int64_t tiles = tiles_of(wave), workers = workers_of(wave);
      const std::int64_t waves = waves_of(wave);
      const std::int64_t last_wave = tiles - (waves - 1) * workers;
      if (waves <= (config == kConfig136 ? kWaves136 : 1) &&
          static_cast<double>(last_wave) >= kWave144Share * static_cast<double>(workers) &&
          outputs_of(dp) > outputs_of(wave)) {
        so_far = wave;
        one_wave_rule = true;
        break;
      }
    }
  }
  // The swap rule: a 256 x 64 tile where its waves are full and give each CTA fewer outputs than
  // the choice so far. Measured (H200, session 39, docs/perf-log.md; tma-bench, three seeds
  // beside config 9, the 136 rule's choice): 1024 x 2112 x 7168 (132 tiles, one wave) 42.5 us
  // against 43.3-43.7, 2048 x 2112 x 7168 (264, two waves) 80.2-80.4 against 84.1-84.5; at
  // 1024 x 2112 x 4096 (64 k-blocks) 27.7-28.1 against 27.6-27.8: its longer tile start and
  // four-chunk epilogue through one buffer eat the 6% fewer outputs below ~100 k-blocks. Clusters
  // of 1: 2.6% faster than 2 at 1024 x 2112 x 7168, the same at 2048 (B is a fifth of the stage).
  // On the H100 it loses to the 136 rule (kSwapMinMemoryGbps).
  // Leaves a given configuration, a forced split or cluster size other than 1, and the other
  // products alone.
  if (req.config < 0 && req.plain && req.k_major_a && req.k_major_b && req.may_cluster &&
      (req.cluster_m == 0 || req.cluster_m == 1) && req.stream_k != 2 &&
      k_blocks64 >= kSwapMinKBlocks && req.memory_gbps >= kSwapMinMemoryGbps) {
    const GemmChoice swap{kSwapConfig, 1, false};
    const std::int64_t tiles = tiles_of(swap), workers = workers_of(swap);
    const std::int64_t waves = waves_of(swap);
    const std::int64_t last_wave = tiles - (waves - 1) * workers;
    if (waves <= kSwapMaxWaves &&
        static_cast<double>(last_wave) >= kWave144Share * static_cast<double>(workers) &&
        outputs_of(swap) < outputs_of(so_far))
      return swap;
  }
  if (one_wave_rule) return so_far;
  if (req.stream_k == 1) return dp;
  // Forced split without a configuration: the 128 x 128 tiles (more, smaller pieces).
  if (req.stream_k == 2) return split_with(req.config >= 0 ? req.config : 1);
  if (k_blocks64 < kMinStreamKBlocks) return dp;
  {
    const std::int64_t workers = workers_of(dp);
    const std::int64_t last_wave = tiles_of(dp) - (waves_of(dp) - 1) * workers;
    // The long-K split in the 128 x 256 data-parallel plan's place.
    if (long_split_outputs > 0 && dp.config == 0 && dp.cluster_m == 2 &&
        static_cast<double>(last_wave) <= kLongSplitLastWave * static_cast<double>(workers))
      return split_with(0);
    if (static_cast<double>(last_wave) >= kFullWaveShare * static_cast<double>(workers)) return dp;
  }
  const auto k_blocks = static_cast<std::int32_t>(k_blocks64);
  const double t_dp = scale(dp.config) * data_parallel_time(tiles_of(dp), k_blocks, workers_of(dp));
  GemmChoice best = dp;
  double t_best = kStreamKGain * t_dp;  // a split must beat this
  for (int config = 0; config < kNumGemmConfigs; ++config) {
    if (kGemmConfigs[config].pingpong) continue;                 // split: the cooperative ones only
    if (kGemmConfigs[config].swap_ab) continue;                  // never split (swap_ab)
    if (config == kConfig144 || config == kConfig136) continue;  // not split tiles (kConfig144)
    if (req.config >= 0 && req.config != config) continue;
    if (!config_allowed(config, req.k_major_b, forced_cluster)) continue;
    const GemmChoice sk = split_with(config);
    const std::int64_t sk_tiles = tiles_of(sk);
    if (sk_tiles > (std::int64_t{1} << 30) ||
        !stream_k_fits(static_cast<std::int32_t>(sk_tiles), k_blocks, workers_of(sk)))
      continue;
    const double cost = sk.cluster_m >= 2 ? kStreamKBlockCostCluster2 : kStreamKBlockCost;
    const double t_sk =
        scale(config) * stream_k_time(static_cast<std::int32_t>(sk_tiles), k_blocks, workers_of(sk),
                                      kGemmConfigs[config].block_n, cost);
    if (t_sk < t_best) {
      best = sk;
      t_best = t_sk;
    }
  }
  return best;
}

// ---- candidate plans (tma::ops::gemm_candidates) ---------------------------------------------
// The plans worth timing for one product, as cuBLASLt's heuristic offers several algorithms to
// time (cublasLtMatmulAlgoGetHeuristic): choose_plan's own choice first, then the other plans it
// could have taken, each allowed configuration data-parallel (in the cluster size the plan would
// give it: choose_cluster_m, 1 for a swapped-operand tile as the swap rule takes it) and, where
// K has at least kMinStreamKBlocks k-blocks, split along K (choose_stream_k_cluster_m; ping-pong
// tiles too, but never a swapped-operand one), in the order of the wave model's time (waves x
// k-blocks x tile_time; a split at its cluster size's block cost, stream_k_time), ties in table
// order, at most max_count in all (>= 1). Why: the plan's rules were fitted on one GPU's
// measurements (docs/perf-log.md); where its alternatives come within a few percent, which one is
// faster moves with the GPU (H100 or H200), its clock and the caller's timing. `req` must leave
// config, cluster_m and stream_k to the heuristic.
inline std::vector<GemmChoice> candidate_plans(std::int64_t m, std::int64_t n, std::int64_t k,
                                               int sm_count, const PlanRequest& req,
                                               int max_count) {
  std::vector<GemmChoice> out;
  if (max_count < 1) max_count = 1;
  out.push_back(choose_plan(m, n, k, sm_count, req));
  const std::int64_t k_blocks64 = (k + kBlockK - 1) / kBlockK;
  const auto k_blocks = static_cast<std::int32_t>(k_blocks64);
  const int cluster_cap = req.may_cluster ? 2 : 1;
  struct Timed {
    GemmChoice c;
    double t;
  };
  std::vector<Timed> others;
  for (int config = 0; config < kNumGemmConfigs; ++config) {
    const GemmConfig& g = kGemmConfigs[config];
    const std::int64_t block_m = ::tma::ops::gemm_config_block_m(g);
    const std::int64_t tiles_m = (m + block_m - 1) / block_m;
    const std::int64_t tiles_n = (n + g.block_n - 1) / g.block_n;
    const double per_tile = tile_time(config);
    const auto tiles_of = [&](int cluster_m) { return cluster_tiles(m, n, config, cluster_m); };
    const auto workers_of = [&](int cluster_m) { return plan_workers(sm_count, cluster_m); };
    const bool tma_only = ::tma::ops::gemm_config_tma_only(g);
    if (tma_only && !req.may_cluster) continue;  // the ordinary path (no kernel of it there)
    // Data-parallel.
    {
      int cluster = g.swap_ab ? 1 : choose_cluster_m(tiles_m, tiles_n, sm_count);
      if (cluster > cluster_cap) cluster = cluster_cap;
      if (config_allowed(config, req.k_major_b, cluster) &&
          ::tma::ops::gemm_config_swap_supported(g, req.k_major_a, req.k_major_b, req.plain,
                                                 false)) {
        others.push_back(
            {GemmChoice{config, cluster, false},
             per_tile * data_parallel_time(tiles_of(cluster), k_blocks, workers_of(cluster))});
      }
    }
    // Split along K.
    if (g.swap_ab || k_blocks64 < kMinStreamKBlocks) continue;
    int cluster = choose_stream_k_cluster_m(tiles_m);
    if (cluster > cluster_cap) cluster = cluster_cap;
    if (!config_allowed(config, req.k_major_b, cluster)) continue;
    const std::int64_t sk_tiles = tiles_of(cluster);
    if (sk_tiles > (std::int64_t{1} << 30) ||
        !stream_k_fits(static_cast<std::int32_t>(sk_tiles), k_blocks, workers_of(cluster)))
      continue;
    const double cost = cluster >= 2 ? kStreamKBlockCostCluster2 : kStreamKBlockCost;
    others.push_back({GemmChoice{config, cluster, true},
                      per_tile * stream_k_time(static_cast<std::int32_t>(sk_tiles), k_blocks,
                                               workers_of(cluster), g.block_n, cost)});
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const Timed& a, const Timed& b) { return a.t < b.t; });
  for (const Timed& o : others) {
    if (static_cast<int>(out.size()) >= max_count) break;
    const GemmChoice& f = out.front();
    if (o.c.config == f.config && o.c.cluster_m == f.cluster_m && o.c.split == f.split) continue;
    out.push_back(o.c);
  }
  return out;
}

// The workers of a stream-K launch whose tiles form one cluster row (M <= 128 in clusters of 1):
// at most kSplitPiecesPerTile per split tile, never more than the resident clusters. Why: with one
// tile row every CTA streams a B slab of its own from DRAM (A is a few hundred KiB, read from L2),
// so the k-loop runs at DRAM's rate whether 66 or 132 CTAs share it, while each finisher reads its
// peers' partial tiles (64 KiB each for 128 x 128) through its own SM at ~32 B per cycle: 4 pieces
// a tile cost a finisher ~6k cycles after its k-loop, 8 pieces ~12k. Measured (H100, session 33,
// gemm_trace clean cold, config 1, clusters of 1, GemmTuning::max_ctas 132 / 99 / 66 / 44): the
// k-loop per CTA and k-block 1,190-1,330 / 925 / 645 / 545 cycles (the total rate flat down to
// ~66 CTAs, a per-SM limit of ~60 B per cycle below), 128 x 4096 x 4096 (32 tiles) 26.3-27.3 /
// 24.5-24.8 / 23.7-24.0 / 27.1-27.6 us, 128 x 2112 x 7168 (17 tiles) 27.6-28.4 / 26.2 / 24.9-25.9
// / 26.4-26.7, 128 x 4096 x 11008 (32 tiles) 46.6-47.4 / 45.3-45.4 / 47.0-49.2 / 55.0-55.5. Three
// pieces a tile (96 and 51 workers) lies at or next to the best of each. Shapes of more tile rows
// are not capped: their k-loops share B through L2 and are compute-bound, so fewer CTAs would
// slow them. The ordinary path keeps every cluster (not measured; its cp.async k-loop moves less
// per SM).
inline constexpr std::int64_t kSplitPiecesPerTile = 3;
inline int one_row_split_workers(int workers, std::int64_t cluster_tiles) {
  const std::int64_t cap = kSplitPiecesPerTile * cluster_tiles;
  return cap < workers ? static_cast<int>(cap) : workers;
}

}  // namespace tma::ops::detail::gemm
