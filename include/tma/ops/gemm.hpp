// tmakit ops: GEMM on Hopper, D = alpha * A B + beta * C, 16-bit inputs, fp32 accumulation.
//
// The kernel (src/ops/gemm*.cu*) is a persistent, warp-specialized TMA + wgmma kernel built only
// on tmakit's device API: a producer warp TMA-loads 128-byte-swizzled tiles of A and B into a
// multi-stage Pipeline (2-CTA clusters multicast the shared B tile), two consumer warpgroups run
// wgmma m64nNk16 on them, and the epilogue goes registers -> shared memory -> TMA store while the
// producer already loads the next tile. Every operand layout is read as stored: wgmma's transpose
// bits take column-major A and row-major B (MN-major tiles) without a transpose pass
// (src/ops/gemm.cu says how). Path::kOrdinary runs the same kernel with cp.async 16-byte loads
// and ordinary stores instead of TMA, the baseline that measures what TMA gains.
//
// The host entry point validates every argument and throws tma::Error naming the argument, the
// value and the fix before anything is launched. Launches go to `stream`; nothing synchronizes.
// Needs a compute capability 9.0 GPU (the kernels are built for sm_90a). Link tmakit::ops.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tma/config.hpp"
#include "tma/host/types.hpp"
#include "tma/ops/copy.hpp"  // Path

namespace tma::ops {

// How a matrix is stored: row-major (element (i, j) at i * ld + j) or column-major (j * ld + i).
enum class MatrixLayout : std::uint8_t { kRowMajor, kColMajor };

struct GemmArgs {
  std::int64_t m = 0, n = 0, k = 0;  // D is m x n; each >= 1

  // A: m x k, B: k x n, both bf16 or both fp16, either layout. Leading dimensions in elements
  // (lda >= k row-major / >= m column-major; ldb >= n row-major / >= k column-major), each a
  // multiple of 8 (TMA's 16-byte rule for 2-byte elements); pointers 16-byte aligned.
  const void* a = nullptr;
  DataType a_dtype = DataType::kBFloat16;
  MatrixLayout a_layout = MatrixLayout::kRowMajor;
  std::int64_t lda = 0;
  const void* b = nullptr;
  DataType b_dtype = DataType::kBFloat16;
  MatrixLayout b_layout = MatrixLayout::kRowMajor;
  std::int64_t ldb = 0;

  // C and D: m x n, row-major, bf16, fp16 or fp32 (C of D's type), ldc / ldd >= n and 16 bytes
  // times an integer. C is read only when beta != 0 (then it must be given); it may be D itself
  // (same pointer and leading dimension: in-place update) but must not overlap D otherwise. D
  // must not overlap A or B.
  const void* c = nullptr;
  DataType c_dtype = DataType::kBFloat16;
  std::int64_t ldc = 0;
  void* d = nullptr;
  DataType d_dtype = DataType::kBFloat16;
  std::int64_t ldd = 0;

  float alpha = 1.0f;
  float beta = 0.0f;

  // Scratch memory for stream-K (Path::kTma and kOrdinary alike; see gemm_tuned): fp32 partial
  // tiles and handoff flags, at least gemm_workspace_bytes(*this, path, tuning) bytes, 16-byte
  // aligned, not overlapping A, B, C or D, and not used by another launch at the same time. Its
  // contents need no initialization and may be anything (each launch tags its flags with a value
  // of its own; it launches nothing but the GEMM kernel). Left null (with workspace_bytes = 0), a
  // launch that splits allocates it stream-ordered itself (cudaMallocFromPoolAsync, then
  // cudaFreeAsync after the kernel, both on `stream`) from a memory pool of tmakit's own per
  // device, which keeps freed memory mapped for later launches (it holds at most the largest
  // workspaces in use at once, a few MiB to ~20 MiB, for the process's life; the device's default
  // pool is not touched); a launch that does not split needs none and ignores it.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// D = alpha * A B + beta * C with fp32 accumulation; D rounded to its type (round to nearest).
// Any m, n, k >= 1 (partial tiles are filled with zeros on load and clipped on store). Picks the
// tile configuration, cluster size and raster from the shape (kGemmConfigs below). Writes nothing
// outside D's view: TMA stores write whole 16-byte chunks of a row, so Path::kTma stores D with
// TMA up to the last 16-byte boundary of each row and a second, small kernel (same stream)
// computes the few columns past it (when n x D's element size is not a multiple of 16 B).
//
// Shapes whose tiles leave most SMs idle (e.g. M = 128, or 17 tiles of 128 x 128 on 132 SMs) use
// stream-K: the last waves' tiles are split along K over all CTAs (clusters) and the partial sums
// added up in a fixed order (deterministic results) by one CTA per tile, through a global
// workspace (GemmArgs::workspace; allocated stream-ordered when not given). GemmTuning::stream_k
// overrides the choice.
//
// The kernel is launched with programmatic dependent launch (GemmTuning::pdl): it may start while
// the stream's previous kernel finishes, and waits for it before touching any buffer.
void gemm(const GemmArgs& args, cudaStream_t stream = nullptr, Path path = Path::kTma);

// ---- tuning: for benchmarks and tests; gemm() chooses these itself -----------------------

// One compiled tile configuration. Block M is always 128 and block K 64 (16-bit elements: one
// 128-byte swizzle row). Two consumer warpgroups either share each tile (cooperative: 64 rows each,
// the M of wgmma) or take turns (ping-pong: each warpgroup a whole tile, alternate tiles, one
// warpgroup's epilogue running under the other's k-loop).
struct GemmConfig {
  int block_n;  // the tile's N: 256, 240, 224, 192, 176, 144, 136 or 128 (wgmma N); 64 (swap_ab)
  int stages;   // shared-memory ring depth (A 16 KiB + B block_n x 128 B per stage)
  // 8 KiB output staging buffers per consumer warpgroup: 1 (swap_ab only), 2 or 4. Measured (H200,
  // 2026-11-22, bench/experiments/gemm_overhead): 128 x 256 with 3 stages and 4 buffers (no waits
  // between its TMA stores) cut the per-tile overhead (3.8 -> 3.2 us) but slowed the k-loop by 10%;
  // an epilogue storing straight from registers to global memory doubled the overhead (7.6 us).
  int epilogue_buffers;
  bool pingpong;  // false: cooperative; true: ping-pong (block_n 128 or 176: 2 x block_n / 2
                  // accumulators)
  // Swapped operands: the tile is 256 x block_n (block_n = 64) and wgmma computes its transpose,
  // D^T = B^T A^T: wgmma's M is the tile's 64 columns (B's rows of a K-major B), its N the tile's
  // 256 rows (a ping-pong warpgroup takes whole tiles: pingpong must be true), so a 64-column tile
  // still multiplies at a wide wgmma N; the epilogue stores the transposed accumulators through
  // stmatrix .trans. TMA path, both operands
  // K-major (A row-major, B column-major), D in the inputs' type with alpha 1 and beta 0 (the
  // plain kernels), no stream-K split: gemm_config_swap_supported.
  bool swap_ab = false;
};

// The compiled configurations: all tile choices of the kernel (the register budgets, raster and
// cluster heuristics are in src/ops/gemm_config.hpp). Stages fill the 227 KiB of shared memory an
// sm_90 block may use, next to 32 KiB of epilogue buffers.
inline constexpr GemmConfig kGemmConfigs[] = {
    // 128 x 256 tiles, 4 x 48 KiB stages: the main configuration. Measured (tma-bench gemm
    // --sweep, H200, 2026-11-22, bf16, 47 shapes): the fastest data-parallel variant on every
    // shape with M >= 1024 (e.g. 4096^3: 762 TFLOP/s vs 653 for 128 x 128); 3 stages (to afford a
    // 4-buffer epilogue) cost 10% of the k-loop rate (docs/perf-log.md, GEMM v1.3).
    {256, 4, 2, false},
    // 128 x 128 tiles, 6 x 32 KiB stages: for shapes whose 128 x 256 tiles leave the SMs idle.
    // Measured (same sweep): faster at M = 128 .. 512 (512 x 4096 x 11008: 651 vs 423 TFLOP/s)
    // and as the split tile for N = 2112 (1024 x 2112 x 7168 stream-K: 542 vs 526); ~0.78x the
    // rate of 128 x 256 once the SMs are full (the wave model's kNarrowTileTime = 0.64).
    {128, 6, 2, false},
    // 128 x 128 tiles, ping-pong consumers, 6 x 32 KiB stages: each consumer warpgroup a whole
    // tile, taking turns at the tensor cores. A tuning option; the heuristic does not choose it.
    // Measured (bench/experiments/gemm_overhead and gemm_trace, tma-bench gemm --sweep, H200,
    // 2026-11-22, docs/perf-log.md GEMM v1.4): per-tile overhead 0.8 us (bf16 out) / 0.7 us (fp32)
    // against 1.1 / 2.1 us for config 1, but the same k-loop rate as config 1 (~0.82x config 0
    // per FLOP), so within +-3% of config 1 and 15-25% behind config 0 on all 47 bf16 shapes.
    {128, 6, 2, true},
    // 128 x 192 tiles, 4 x 40 KiB stages (5 do not fit next to the epilogue buffers): for N that
    // 256 divides badly. Measured (tma-bench gemm --sweep, H200, 2026-11-22, session 3): the
    // FLOP rate of 128 x 256 (8192^3: 704 vs 701 TFLOP/s) and no wasted column at N = 2112 =
    // 11 x 192: 4096 x 2112 x 7168 700 vs 547, 8192 x 2112 x 7168 765 (split) vs 676. A 2-CTA
    // cluster splits its three B atoms 2 + 1.
    {192, 4, 2, false},
    // Tile widths chosen to fill the last wave (the way cuBLAS fits it, by the tile width, where
    // stream-K pays a handoff; docs/perf-log.md GEMM v1.9). Widths that are not a multiple of 64
    // load B as one box of block_n rows (half each in a 2-CTA cluster), so they need B
    // column-major (K-major; gemm_config_needs_k_major_b), and store D's last chunk of a tile
    // through a narrower box. 128 x 224 (4 x 44 KiB): N = 7168 = 32 x 224 at M = 1024 / 2048
    // (2 and 4 full waves of 2-CTA clusters, where 256 leaves 15% of the last wave idle).
    {224, 4, 2, false},
    // 128 x 240 (4 x 46 KiB): N = 11008 = 45.9 x 240 (46 tile columns: M = 1024 fills 93% of
    // 3 waves, where 256 fills 87%).
    {240, 4, 2, false},
    // 128 x 176 (5 x 38 KiB): N = 2112 = 12 x 176 at M = 4096 / 8192 (97% of 3 / 6 waves).
    {176, 5, 2, false},
    // 128 x 176 ping-pong (5 x 38 KiB): each consumer warpgroup a whole 128 x 176 tile (176
    // accumulators: setmaxnreg 24 / 240, gemm_config.hpp), one's epilogue under the other's
    // k-loop; TMA path only (gemm_config_tma_only). The heuristic chooses it, in clusters of 2,
    // for K <= 2048 with at least 4 waves of tiles (gemm_config.hpp: choose_plan). Measured:
    // H200, session 10: at base clocks (ncu) 7.4% fewer cycles than the plan's 128 x 256 at 8192 x
    // 7168 x 2048 and 4096 x 7168 x 2048 (cuBLAS's own ping-pong 128 x 176 kernels' count); at
    // full clock 1% fewer in clusters of 2, 6% more in clusters of 1 (L2 traffic: no multicast);
    // H100, session 20, tma-bench's default timing, six alternating rounds: 1.3-5.8% faster than
    // the plan's 128 x 224 / 128 x 256 at 2048 .. 16384 x 7168 x 2048 (docs/perf-log.md).
    {176, 5, 2, true},
    // 128 x 144 (5 x 34 KiB): N = 2112 = 14.7 x 144 at M = 1024: 8 x 15 = 120 tiles, one wave
    // of 132 SMs with no split (cuBLAS's pick there is a 144 x 128 tile on 120 CTAs, session
    // 23); the plan's choice there (gemm_config.hpp: the 144 rule). Session 14 (H200) measured
    // this width at 0.82 of the tensor peak per k-block, before the GPC-aware order and the later
    // k-loop work; session 28 (H100, gemm_trace): 586 cycles per k-block with operands in L2
    // (peak 576), 631-645 cold. Six stages with one output buffer per warpgroup (to fit): cold
    // 607 cycles per k-block but the epilogue +450; in tma-bench's timing no faster
    // (docs/perf-log.md).
    {144, 5, 2, false},
    // 128 x 136 (5 x 33 KiB): N = 2112 = 15.5 x 136 at M = 1024: 8 x 16 = 128 tiles, one wave of
    // 132 SMs at 97% (the 144 tile's 120 leave 9% idle), each tile 0.94 of a 144 one. cuBLASLt's
    // pick there (H100, session 29) is a 256 x 64 tile on 132 CTAs; the tile height is fixed at 128
    // here, and 136 is the narrowest width that keeps the 1024 x 2112 wave to 132 tiles. B's
    // shares in a 2-CTA cluster overlap (72-row boxes at rows 0 and 64) and D's last chunk is
    // 8 columns wide. Measured (H100, session 30, side by side with config 8, three seeds):
    // 1024 x 2112 x 7168 1.8-2.1% faster (k-loop 558 against 579 cycles per k-block), K = 4096
    // 1.7-2.3% faster, K = 1024 1.7-2.7% slower (a longer epilogue: an odd tile's rows of D start
    // 16 bytes into a 32-byte sector). The plan takes it from K = 4096 (gemm_config.hpp: the 144
    // rule). Since then an odd tile stores its 8-column chunk first (16-bit outputs), its whole
    // chunks on sectors: 1.0-1.3% faster again at K = 4096 / 7168 (gemm_kernel.cuh:
    // store_tile_as). Also two waves of it at 2048 x 2112 x 7168 (128 cluster tiles on 66
    // clusters): 4.2% faster than the split 128 x 192 tiles (H100, session 37, four alternating
    // README-regime rounds; docs/perf-log.md).
    {136, 5, 2, false},
    // 256 x 64 tiles with swapped operands, ping-pong (swap_ab, pingpong; 5 x 40 KiB stages, one
    // 8 KiB output buffer per warpgroup to fit them): each consumer warpgroup a whole tile as one
    // wgmma M = 64 x N = 256 per k-step, one warpgroup's epilogue under the other's k-loop. N =
    // 2112 = 33 x 64 at M = 1024 / 2048: 4 x 33 = 132 / 8 x 33 = 264 tiles, one / two full waves of
    // 132 SMs with no column wasted, each tile 16384 outputs against 128 x 136's 17408. cuBLASLt's
    // pick at both shapes (nvjet ..._64x256_64x5_1x2: wgmma M on N, ping-pong, 5 stages) is this
    // tile. Measured (H200, session 39, docs/perf-log.md; tma-bench, three seeds, beside config
    // 9): 1024 x 2112 x 7168 42.5 us against 43.3-43.7 (ncu: 68.4k cycles, cuBLASLt's kernel
    // 68.1k, config 9 71.0k), 2048 x 2112 x 7168 80.2-80.4 against 84.1-84.5; at K = 4096 no gain.
    // With 4 stages and two buffers 5% slower than config 9 (the ring too shallow for 40 KiB
    // stages); a cooperative form (each warpgroup N = 128 of the rows) 17% slower. On the H100
    // it loses to config 9 (session 44: 7-10% at 1024 x 2112 x 7168, ncu 78.9k cycles against
    // 73.6k). The plan takes it by its own rule (gemm_config.hpp: the swap rule), on a GPU with
    // at least 4,000 GB/s of DRAM bandwidth (kSwapMinMemoryGbps: the H200, not the H100).
    {64, 5, 1, true, true},
};
inline constexpr int kNumGemmConfigs = sizeof(kGemmConfigs) / sizeof(kGemmConfigs[0]);

// Whether configuration `c` needs B column-major (K-major tiles): its B tile (block_n rows, not a
// multiple of the 64-column swizzle atom of a row-major B) is loaded as one box of rows. gemm()
// does not choose it for a row-major B; naming it in GemmTuning::config with one is an error.
constexpr bool gemm_config_needs_k_major_b(const GemmConfig& c) {
  return c.block_n % 64 != 0 || c.swap_ab;
}

// The tile's rows (M): 128, or 256 with swapped operands (GemmConfig::swap_ab).
constexpr int gemm_config_block_m(const GemmConfig& c) {
  return c.swap_ab ? 256 : 128;
}

// Whether a swapped-operand configuration (GemmConfig::swap_ab) runs this product: A row-major
// and B column-major (both K-major: each is loaded as one box of rows per k-block and read by
// wgmma in the other's role), D in the inputs' type with alpha 1 and beta 0 (its epilogue stages
// 16-bit values only, with no C), data-parallel tiles (stream_k_split false). Every other
// configuration: true. gemm() chooses a swapped configuration only where this holds; naming one
// in GemmTuning::config where it does not is an error.
constexpr bool gemm_config_swap_supported(const GemmConfig& c, bool k_major_a, bool k_major_b,
                                          bool plain, bool stream_k_split) {
  return !c.swap_ab || (k_major_a && k_major_b && plain && !stream_k_split);
}

// Whether configuration `c` runs in clusters of `cluster_m` CTAs (1, 2 or 4;
// GemmTuning::cluster_m). The CTAs of a cluster share the B tile, each loading its share and
// multicasting it to all: a K-major B as block_n / cluster_m rows rounded up to a 1024-byte swizzle
// repeat (8 rows of 128 B; where that rounds up, as 144, 176 and 240 do in clusters of 4 and 136
// in clusters of 2 and 4, the last share is moved back to end at block_n and overlaps the one
// before: a few rows arrive twice); an MN-major B's 64-column atoms are dealt out over the CTAs (a
// CTA may get none). Every configuration runs in clusters of 1, 2 and 4 (block_n is a multiple of
// 8: whole swizzle repeats), whatever B's major-ness.
constexpr bool gemm_config_supports_cluster(const GemmConfig& c, int cluster_m) {
  return (cluster_m == 1 || cluster_m == 2 || cluster_m == 4) && c.block_n % 8 == 0;
}

// The form before session 28, when a K-major B's share had to divide block_n (so 144, 176 and 240
// did not run in clusters of 4 with a K-major B). B's major-ness no longer matters.
[[deprecated(
    "B's major-ness no longer matters: use gemm_config_supports_cluster(c, "
    "cluster_m)")]] constexpr bool
gemm_config_supports_cluster(const GemmConfig& c, int cluster_m, bool k_major_b) {
  (void)k_major_b;
  return gemm_config_supports_cluster(c, cluster_m);
}

// Whether configuration `c` runs with a B of this major-ness in clusters of `cluster_m` CTAs: both
// rules above (gemm_config_needs_k_major_b, gemm_config_supports_cluster). What gemm()'s plan may
// choose from and what a GemmTuning may name (with Path::kTma; see gemm_config_tma_only).
constexpr bool gemm_config_allowed(const GemmConfig& c, int cluster_m, bool k_major_b) {
  return (k_major_b || !gemm_config_needs_k_major_b(c)) &&
         gemm_config_supports_cluster(c, cluster_m);
}

// Whether configuration `c` runs on Path::kTma only: a wide ping-pong tile (176 accumulators per
// consumer thread) leaves the ordinary path's epilogue (bounds-checked stores from registers) too
// few registers (ptxas spills 160 B); a swapped-operand tile (swap_ab) stages its transposed
// outputs for TMA stores only. gemm() does not choose it for the ordinary path; naming it in
// GemmTuning::config with Path::kOrdinary is an error.
constexpr bool gemm_config_tma_only(const GemmConfig& c) {
  return (c.pingpong && c.block_n > 128) || c.swap_ab;
}

// Run-time choices; 0 or -1 leaves the choice to gemm()'s heuristics.
struct GemmTuning {
  int config = -1;       // index into kGemmConfigs
  int cluster_m = 0;     // CTAs per cluster along M sharing (multicasting) the B tile: 1, 2 or 4
                         // (4: gemm_config_supports_cluster; fewer SMs may host clusters of 4)
  int raster_group = 0;  // tile rows (in clusters) per group of the grouped raster, >= 1
                         // (odd groups walk their tile columns backwards)
  int max_ctas = 0;      // cap on the persistent grid (0: as many as fit on the GPU, except
                         // that a TMA-path split of one tile row runs at most 3 workers, i.e.
                         // clusters, per split tile: src/ops/gemm_config.hpp,
                         // one_row_split_workers)
  // Stream-K: 0 = heuristic (src/ops/gemm_config.hpp: choose_plan), 1 = off (data-parallel
  // tiles only), 2 = on (the last waves split along K). Any cluster size: a cluster splits its
  // tile rows alike and still multicasts B; cluster_m = 0 lets the heuristic choose
  // it (2 when there are tile rows to pair).
  int stream_k = 0;
  // Programmatic dependent launch: the kernel is launched with
  // cudaLaunchAttributeProgrammaticStreamSerialization, so that its CTAs start (shared-memory
  // barriers, descriptor prefetch, register split) while the stream's previous kernel finishes;
  // every thread waits for that kernel's completion (cudaGridDependencySynchronize) before it
  // touches A, B, C, D or the workspace, so results are the same either way. The kernel also
  // lets the stream's next kernel launch early (cudaTriggerProgrammaticLaunchCompletion at its
  // start): a next kernel launched with the attribute must itself wait before it reads D. Off:
  // plain stream order.
  bool pdl = true;
  // GPC-aware worker order (Path::kTma): the persistent clusters that the GPU places in one GPC
  // (graphics processing cluster) compute tiles of the same rows at the same time, so that the
  // L2 merges their reads of A (+2-5% on H100 at K = 2048; docs/perf-log.md, session 24). The
  // placement is measured at the first launch of each grid (device, cluster size, shared memory,
  // CTA count): short kernels on a private stream after `stream`'s pending work, and a host
  // wait for them (H100, session 24: ~1 ms for the first launch in a process, ~0.05 ms for a
  // further grid; an 8 KiB buffer per device is kept for them). A launch inside a stream capture
  // before that measurement uses the identity order (same results, a little slower): run one
  // launch of the same shape outside the capture first. The results are the same with or
  // without it, bit for bit. Off: the identity order, and no measurement.
  bool gpc_order = true;
};

// What gemm_tuned() ran (after `tuning` overrides): the resolved choices.
struct GemmPlan {
  int config;
  int cluster_m;
  int raster_group;    // cluster rows per raster group (at most the product's cluster rows)
  int ctas;            // persistent grid (0: no main kernel, the edge kernel did all of D)
  int edge_columns;    // D's last columns computed by the edge kernel (Path::kTma; < 16 B per row)
  int stream_k_tiles;  // tiles split along K (0: all tiles data-parallel)
  std::size_t workspace_bytes;  // the stream-K workspace this launch used (0: none)
  bool gpc_order;               // the launch ran the GPC-aware worker order (GemmTuning::gpc_order)
  // The main kernel was a plain one: D in the inputs' type, alpha == 1, beta == 0, compiled with
  // only that epilogue (other products run kernels that choose D's type, alpha and beta at run
  // time; same tiles and schedule). False when no main kernel ran (ctas == 0).
  bool plain_epilogue;
};

// gemm() with explicit choices; throws tma::Error for an invalid tuning value as for any argument.
void gemm_tuned(const GemmArgs& args, cudaStream_t stream, Path path, const GemmTuning& tuning,
                GemmPlan* plan = nullptr);

// The plans worth timing for this product on the current device, as cuBLASLt's heuristic offers
// algorithms to time (cublasLtMatmulAlgoGetHeuristic): [0] is what gemm() runs, its choices made
// explicit; the others are the plans its heuristic could have taken (each configuration that runs
// these arguments, data-parallel and, with K >= 2048, split along K), in the order of its wave
// model's time; at most max_count (>= 1). Each is a GemmTuning that gemm_tuned accepts for these
// arguments and `path` (config, cluster_m and stream_k set, the rest default), and no two resolve
// to the same plan. The heuristic's rules were fitted on measurements of one GPU
// (docs/perf-log.md); where an alternative comes within a few percent, which is faster moves with
// the GPU, its clock and the caller's timing: time them on your own data and keep the fastest
// (tma-bench gemm does: the tma_tuned row, bench/README.md). The plans differ in tiles and, split
// along K, in the order of the k-blocks' sums, so D may differ in its last bits between them.
// When no main kernel runs (D's rows are under 16 bytes) the one plan is GemmTuning{}. Checks the
// arguments as gemm() does; queries the device, launches nothing.
std::vector<GemmTuning> gemm_candidates(const GemmArgs& args, Path path = Path::kTma,
                                        int max_count = 8);

// The workspace bytes gemm_tuned(args, stream, path, tuning) needs on the current device (0 when
// it would not split). Checks the arguments as gemm() does (args.workspace is not looked at);
// queries the device (SM count, occupancy), launches nothing.
std::size_t gemm_workspace_bytes(const GemmArgs& args, Path path = Path::kTma,
                                 const GemmTuning& tuning = GemmTuning{});

}  // namespace tma::ops
