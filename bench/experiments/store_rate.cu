// store_rate: an experiment, not a benchmark of record. How fast does one SM push an output tile
// to global memory: TMA tensor stores from shared memory (the GEMM's epilogue), contiguous bulk
// stores, or ordinary st.global from threads (from shared memory, from registers, or in the
// wgmma accumulator's fragment order)?
// Question (docs/perf-log.md, session 29): the GEMM's epilogues drain at ~29 B/cycle per SM
// through TMA stores (sessions 11, 27); a ping-pong warpgroup's last 128 x 128 bf16 tile (32 KiB)
// takes ~2.5k cycles. Is that the SM's write path or the TMA unit?
// (Answer, H100, session 29 calls 1 and 4: neither; the L2's intake when every SM writes. One SM
// alone: TMA stores 31 B/cycle, st.global.v4 29-30 (from shared memory or registers), bulk
// stores 24; 8-66 SMs at once still ~30 each. All 132 SMs: ~17 B/cycle each, ~2.0 KB/cycle in
// all, whatever the path (TMA, bulk, st.global), the L2 hint (evict_first / evict_last: no
// change) or whether the lines are already in L2. A burst of 32 KiB per SM (4.2 MB) takes ~2k
// cycles. The fragment-order st.global.b32 (no staging) reaches 3.4-4.1 B/cycle per SM. Inside
// the GEMM on many-wave shapes a tile's epilogue is not held by this intake: perf-log session 29,
// item 6.)
//   store_rate [ctas = all SMs] [mode: tma | tma-ef | tma-el | bulk | lsu-smem | lsu-reg | frag]
//              [rounds = 16] [warpgroups = 1] [same | fresh]
// One CTA per SM; each round every CTA writes its own 128 x 128 bf16 tile (32 KiB) of a
// (128 x tile rows) x 2048 row-major matrix, the same tile every round (L2-resident after the
// first; `fresh`: each round a new region, rounds x 4.3 MB in all). tma: thread 0 stores 4 boxes
// of 64 x 64 (SWIZZLE_128B) from 4 staging buffers, two sets alternating (wait_group_read<1>
// before a set is reused); tma-ef / tma-el: the same with an L2 evict_first / evict_last policy;
// bulk: 128 contiguous 256-byte rows per round with cp.async.bulk; lsu-smem: the warpgroups
// ld.shared.v4 + st.global.v4 (16 B per thread, 8 threads per 128-byte row segment); lsu-reg:
// st.global.v4 of register values; frag: st.global.b32 of bf16 pairs in the m64nNk16
// accumulator layout (a quad writes 16 B of a row, a warp instruction 8 rows). With 2
// warpgroups each writes half the rows.
// Prints per-SM cycles from the start to the last issue and to completion (TMA: wait_group<0>;
// threads: __threadfence), mean and max over the CTAs, and bytes per cycle (mean of per-SM
// rates; all: total bytes over the longest CTA's cycles to completion).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string_view>
#include <vector>

#include "experiment.cuh"
#include "tma/device.cuh"
#include "tma/tma.hpp"

namespace {

constexpr int kTile = 128;                         // rows and columns of a CTA's tile
constexpr int kCols = 2048;                        // the matrix's columns (16 tiles per row)
constexpr int kTileBytes = kTile * kTile * 2;      // 32 KiB
constexpr int kBoxBytes = 64 * 64 * 2;             // 8 KiB
constexpr int kSmemBytes = 2 * kTileBytes + 1024;  // two staging sets, 1024-aligned

enum class Mode { kTma, kTmaEvictFirst, kTmaEvictLast, kBulk, kLsuSmem, kLsuReg, kFrag };

__global__ void __launch_bounds__(256, 1)
    store_kernel(const __grid_constant__ tma::TensorMap map, unsigned char* d, Mode mode,
                 int rounds, int warpgroups, bool fresh, std::int64_t round_rows, long long* out) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (1024 - tma::ptx::smem_addr(raw) % 1024) % 1024;
  const int tile_row = static_cast<int>(blockIdx.x) / (kCols / kTile);
  const int tile_col = static_cast<int>(blockIdx.x) % (kCols / kTile);
  const int t = static_cast<int>(threadIdx.x);
  const int threads = warpgroups * 128;
  const bool tma_mode =
      mode == Mode::kTma || mode == Mode::kTmaEvictFirst || mode == Mode::kTmaEvictLast;
  // Staging data: any non-zero bytes.
  for (int i = t; i < 2 * kTileBytes / 4; i += blockDim.x)
    reinterpret_cast<unsigned*>(smem)[i] = 0x3C003C00u + static_cast<unsigned>(i);
  tma::fence_proxy_async_shared();
  __syncthreads();
  unsigned char* tile =
      d + (static_cast<std::int64_t>(tile_row) * kTile * kCols + tile_col * kTile) * 2;
  long long start = 0, issued = 0, done = 0;
  if (t < threads) {
    start = clock64();
    if (tma_mode || mode == Mode::kBulk) {
      if (t == 0) {
        const tma::CacheHint hint = mode == Mode::kTmaEvictFirst  ? tma::CacheHint::kEvictFirst
                                    : mode == Mode::kTmaEvictLast ? tma::CacheHint::kEvictLast
                                                                  : tma::CacheHint::kNone;
        for (int r = 0; r < rounds; ++r) {
          const unsigned char* set = smem + (r % 2) * kTileBytes;
          if (r >= 2) tma::wait_group_read<1>();  // the set's previous stores have read it
          const std::int64_t shift = fresh ? r * round_rows : 0;  // fresh: a new region
          if (tma_mode) {
            for (int b = 0; b < 4; ++b) {
              const std::int32_t c[2] = {
                  tile_col * kTile + (b % 2) * 64,
                  static_cast<std::int32_t>(shift + tile_row * kTile + (b / 2) * 64)};
              tma::store(&map, set + b * kBoxBytes, c, hint);
            }
          } else {
            for (int row = 0; row < kTile; ++row)
              tma::bulk_store(tile + (shift + row) * kCols * 2, set + row * kTile * 2, kTile * 2);
          }
          tma::commit_group();
        }
        issued = clock64();
        tma::wait_group<0>();
        done = clock64();
      }
    } else {
      // Rows of this thread's part: warpgroup w writes rows w * 128 / warpgroups onwards.
      const int rows = kTile / warpgroups;
      const int row0 = (t / 128) * rows;
      const int u = t % 128;
      for (int r = 0; r < rounds; ++r) {
        const unsigned char* set = smem + (r % 2) * kTileBytes;
        unsigned char* tile_r = tile + (fresh ? r * round_rows * kCols * 2 : 0);
        if (mode == Mode::kLsuSmem || mode == Mode::kLsuReg) {
          // 16 B per thread; 16 threads per 256-byte row, 8 rows per pass of 128 threads.
          for (int pass = 0; pass < rows / 8; ++pass) {
            const int row = row0 + pass * 8 + u / 16;
            const int col16 = u % 16;
            uint4 v;
            if (mode == Mode::kLsuSmem) {
              v = *reinterpret_cast<const uint4*>(set + row * kTile * 2 + col16 * 16);
            } else {
              v = make_uint4(r + row, col16, 3, 4);
            }
            *reinterpret_cast<uint4*>(tile_r + static_cast<std::int64_t>(row) * kCols * 2 +
                                      col16 * 16) = v;
          }
        } else {
          // The accumulator layout of m64nNk16 per 64 rows: warp w's rows 16 w + l / 4 and + 8,
          // columns 8 j + 2 (l % 4) .. + 1 of every 8-column group j.
          const int warp = u / 32, lane = u % 32;
          for (int half = 0; half < rows / 64; ++half) {
            for (int j = 0; j < kTile / 8; ++j) {
              for (int e = 0; e < 2; ++e) {
                const int row = row0 + half * 64 + warp * 16 + lane / 4 + 8 * e;
                const int col = 8 * j + 2 * (lane % 4);
                *reinterpret_cast<unsigned*>(tile_r +
                                             (static_cast<std::int64_t>(row) * kCols + col) * 2) =
                    0x3C003C00u + r + j;
              }
            }
          }
        }
      }
      issued = clock64();
      __threadfence();
      done = clock64();
    }
  }
  __shared__ long long spans[2][8];
  if (t % 32 == 0) {
    spans[0][t / 32] = issued - start;
    spans[1][t / 32] = done - start;
  }
  __syncthreads();
  if (t == 0) {
    long long a = 0, b = 0;
    const int warps = (tma_mode || mode == Mode::kBulk) ? 1 : threads / 32;
    for (int w = 0; w < warps; ++w)
      a = a > spans[0][w] ? a : spans[0][w], b = b > spans[1][w] ? b : spans[1][w];
    out[2 * blockIdx.x] = a;
    out[2 * blockIdx.x + 1] = b;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  const int ctas = argc > 1 ? std::atoi(argv[1]) : sms;
  const std::string_view m = argc > 2 ? argv[2] : "tma";
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 16;
  const int warpgroups = argc > 4 ? std::atoi(argv[4]) : 1;
  const bool fresh = argc > 5 && std::string_view(argv[5]) == "fresh";
  // The modes by name: the one table both the parse and the check read.
  constexpr struct {
    std::string_view name;
    Mode mode;
  } kModes[] = {
      {"tma", Mode::kTma},   {"tma-ef", Mode::kTmaEvictFirst}, {"tma-el", Mode::kTmaEvictLast},
      {"bulk", Mode::kBulk}, {"lsu-smem", Mode::kLsuSmem},     {"lsu-reg", Mode::kLsuReg},
      {"frag", Mode::kFrag}};
  const auto named = std::find_if(std::begin(kModes), std::end(kModes),
                                  [&](const auto& e) { return e.name == m; });
  if (ctas < 1 || ctas > sms || rounds < 1 || rounds > 4096 || named == std::end(kModes) ||
      warpgroups < 1 || warpgroups > 2) {
    std::fprintf(stderr,
                 "usage: store_rate [ctas 1..%d] [tma|tma-ef|tma-el|bulk|lsu-smem|lsu-reg|frag] "
                 "[rounds 1..4096] [warpgroups 1|2] [same|fresh]\n",
                 sms);
    return 2;
  }
  const Mode mode = named->mode;
  const int tile_rows = (sms + kCols / kTile - 1) / (kCols / kTile);
  const std::int64_t round_rows = static_cast<std::int64_t>(tile_rows) * kTile;
  const std::int64_t rows = round_rows * (fresh ? rounds : 1);
  unsigned char* d = nullptr;
  experiment::check(cudaMalloc(&d, rows * kCols * 2), "malloc D");
  const tma::TensorMap map = tma::make_tensor_map(tma::make_tiled_spec<tma::bf16>(
      d, {rows, kCols}, {}, {64, 64}, {.swizzle = tma::Swizzle::k128B}));
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, 2 * sizeof(long long) * ctas), "malloc out");
  experiment::check(
      cudaFuncSetAttribute(store_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes),
      "smem attribute");
  for (int r = 0; r < 3; ++r) {  // the last run is reported (the first ones warm L2 and code)
    store_kernel<<<ctas, 256, kSmemBytes>>>(map, d, mode, rounds, warpgroups, fresh, round_rows,
                                            out);
    experiment::check(cudaGetLastError(), "launch");
    experiment::check(cudaDeviceSynchronize(), "run");
  }
  std::vector<long long> h(2 * static_cast<std::size_t>(ctas));
  experiment::check(cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost),
                    "copy out");
  double issue_sum = 0, done_sum = 0, issue_max = 0, done_max = 0, rate_sum = 0;
  const double bytes = static_cast<double>(rounds) * kTileBytes;
  for (int b = 0; b < ctas; ++b) {
    const double i = static_cast<double>(h[2 * b]), c = static_cast<double>(h[2 * b + 1]);
    issue_sum += i, done_sum += c, issue_max = std::max(issue_max, i),
                                   done_max = std::max(done_max, c), rate_sum += bytes / c;
  }
  std::printf(
      "store_rate: %d CTAs, %.*s, %d rounds of 32 KiB (%s), %d warpgroup(s): issued %.0f cycles "
      "mean "
      "(max %.0f), done %.0f mean (max %.0f); per SM %.1f B/cycle; all %.0f B/cycle\n",
      ctas, static_cast<int>(m.size()), m.data(), rounds, fresh ? "fresh regions" : "same region",
      warpgroups, issue_sum / ctas, issue_max, done_sum / ctas, done_max, rate_sum / ctas,
      bytes * ctas / done_max);
  return 0;
}
