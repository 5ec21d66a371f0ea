// tma_rate: an experiment, not a benchmark of record. How many bytes per cycle does one SM take
// in through TMA when it does nothing else: tensor loads of the GEMM's K-major boxes (rows of
// 128 bytes, SWIZZLE_128B), the same bytes as contiguous bulk copies, and the tensor loads with a
// tensor prefetch (cp.async.bulk.prefetch.tensor) of the box `stages` loads ahead beside each?
// Question (docs/perf-log.md, session 25, item 6): the GEMM's k-loop slowed by up to 2.5x when
// its producer added one such prefetch per load; does a prefetch cost the TMA unit a load's work?
// (Answer, H100, session 25 calls 12-13: not the TMA unit, the L2. One issuing thread loses 4%
// to a prefetch per load; but with 4 issuing warps per SM and every SM reading one shared region
// the loads fall from 72 to 33.5 B/cycle per SM. One thread manages ~370 cycles per box and
// barrier (44.6 B/cycle), 4 warps ~108 B/cycle: a lone SM's intake. 132 SMs: 3.8-3.9 KB/cycle
// on unique data, 9.0-10.5 on a shared region.)
//   tma_rate [ctas = all SMs] [box_rows = 128] [mode: load | bulk | prefetch | prefetch-cold]
//            [source: unique | shared] [stages = 4] [issuers = 1]
// One CTA per SM; lane 0 of each of `issuers` warps issues into its own ring of `stages` boxes
// (each re-issued as soon as it lands; no consumer), starting one row block apart. prefetch-cold
// prefetches boxes of a separate 1 GiB buffer instead (DRAM). The source is L2-resident: a 256-row
// x 512-column bf16 region per CTA (256 KiB; `shared`: every CTA reads CTA 0's region), walked box
// by box. Prints the per-SM bytes per cycle (mean and min over the CTAs) and the aggregate (bytes
// over the longest CTA's cycles; TB/s at the SM clock attribute, not measured).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "experiment.cuh"
#include "tma/device.cuh"
#include "tma/tma.hpp"

namespace {

constexpr int kMaxStages = 12;
constexpr int kMaxIssuers = 4;
constexpr int kRegionRows = 256;
constexpr int kRegionCols = 512;  // bf16: 1 KiB per row, 8 k-blocks of 64
constexpr int kIters = 8192;      // boxes per CTA (the first 4 x 8 warm the L2 too)

enum class Mode { kLoad, kBulk, kPrefetch, kPrefetchCold };

// kPrefetchCold's prefetch source: 1 GiB of bf16, 512 columns (rows of 1 KiB), walked box by box
// (so every prefetch misses L2 and goes to DRAM).
constexpr std::int64_t kColdRows = (std::int64_t{1} << 30) / (kRegionCols * 2);

__global__ void __launch_bounds__(128, 1)
    rate_kernel(const __grid_constant__ tma::TensorMap map,
                const __grid_constant__ tma::TensorMap cold, const unsigned char* src,
                std::int64_t src_row_bytes, int box_rows, int stages, int issuers, Mode mode,
                bool shared_source, long long* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tma::Barrier bars[kMaxIssuers][kMaxStages];
  __shared__ long long spans[kMaxIssuers];
  const std::uint32_t box_bytes = static_cast<std::uint32_t>(box_rows) * 128;
  if (threadIdx.x == 0) {
    for (int w = 0; w < issuers; ++w)
      for (int i = 0; i < stages; ++i)
        bars[w][i].init(1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  constexpr int kWarm = 4 * (kRegionCols / 64);  // boxes before the clock starts (a warm-up pass)
  // Lane 0 of warps 0 .. issuers - 1 issue, each into its own ring, on its own part of the walk.
  const int issuer = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x % 32 == 0 && issuer < issuers) {
    tma::Barrier* bar = bars[issuer];
    unsigned char* ring = smem + issuer * stages * box_bytes;
    const int region = shared_source ? 0 : static_cast<int>(blockIdx.x);
    const int row_blocks = kRegionRows / box_rows;
    constexpr int kColBlocks = kRegionCols / 64;  // 8
    // The walk, stepped without divisions (one thread issues; a division per box made the loop,
    // not the TMA unit, the limit in this program's first version): box i is k-block i % 8 of row
    // block (i / 8) % row_blocks of the region. `ahead` walks `stages` boxes in front (prefetch).
    struct Walk {
      int kb = 0, rb = 0;
      __device__ void step(int row_blocks) {
        if (++kb == kColBlocks) {
          kb = 0;
          if (++rb == row_blocks) rb = 0;
        }
      }
    };
    Walk at, ahead;
    for (int j = 0; j < issuer * kColBlocks; ++j) {  // issuer w starts w row blocks in
      at.step(row_blocks);
      ahead.step(row_blocks);
    }
    for (int j = 0; j < stages; ++j)
      ahead.step(row_blocks);
    const std::int64_t region_bytes = std::int64_t{kRegionRows} * src_row_bytes;
    const unsigned char* bulk_base = src + region * region_bytes;
    std::int64_t bulk_off = 0;
    std::int64_t cold_row =
        (static_cast<std::int64_t>(blockIdx.x) * issuers + issuer) * kIters * box_rows % kColdRows;
    int stage = 0;
    std::uint32_t phase = 0;  // of the stage's barrier, for its next wait
    long long start = 0;
    for (int i = 0; i < kIters + stages; ++i) {
      if (i == kWarm) start = clock64();        // after a warm-up pass
      if (i >= stages) bar[stage].wait(phase);  // the box issued `stages` boxes ago
      if (i < kIters) {
        tma::Barrier& b = bar[stage];
        unsigned char* dst = ring + stage * box_bytes;
        b.arrive_expect_tx(box_bytes);
        if (mode == Mode::kBulk) {
          // The same bytes as one contiguous range: the region's box_bytes-sized pieces in turn.
          tma::bulk_load(dst, bulk_base + bulk_off, box_bytes, b);
          bulk_off += box_bytes;
          if (bulk_off == region_bytes) bulk_off = 0;
        } else {
          const std::int32_t c[2] = {at.kb * 64, region * kRegionRows + at.rb * box_rows};
          tma::load(dst, &map, b, c);
          if (mode == Mode::kPrefetch) {
            const std::int32_t p[2] = {ahead.kb * 64, region * kRegionRows + ahead.rb * box_rows};
            tma::prefetch_tile(&map, p);
          } else if (mode == Mode::kPrefetchCold) {
            const std::int32_t p[2] = {0, static_cast<std::int32_t>(cold_row)};
            tma::prefetch_tile(&cold, p);
            cold_row += box_rows;
            if (cold_row >= kColdRows) cold_row = 0;
          }
        }
        at.step(row_blocks);
        ahead.step(row_blocks);
      }
      if (++stage == stages) {
        stage = 0;
        if (i >= stages) phase ^= 1u;
      }
    }
    const long long stop = clock64();
    spans[issuer] = stop - start;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long span = 0;
    for (int w = 0; w < issuers; ++w)
      span = spans[w] > span ? spans[w] : span;
    out[2 * blockIdx.x] = span;
    out[2 * blockIdx.x + 1] = static_cast<long long>(kIters - kWarm) * box_bytes * issuers;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  const int clock_khz = experiment::device_attribute(cudaDevAttrClockRate, "clock");
  const int ctas = argc > 1 ? std::atoi(argv[1]) : sms;
  const int box_rows = argc > 2 ? std::atoi(argv[2]) : 128;
  const std::string_view m = argc > 3 ? argv[3] : "load";
  const std::string_view s = argc > 4 ? argv[4] : "unique";
  const int stages = argc > 5 ? std::atoi(argv[5]) : 4;
  const int issuers = argc > 6 ? std::atoi(argv[6]) : 1;
  const Mode mode = m == "bulk"            ? Mode::kBulk
                    : m == "prefetch"      ? Mode::kPrefetch
                    : m == "prefetch-cold" ? Mode::kPrefetchCold
                                           : Mode::kLoad;
  if (ctas < 1 || ctas > sms || (box_rows != 64 && box_rows != 128 && box_rows != 256) ||
      (m != "load" && m != "bulk" && m != "prefetch" && m != "prefetch-cold") ||
      (s != "unique" && s != "shared") || stages < 1 || stages > kMaxStages || issuers < 1 ||
      issuers > kMaxIssuers || issuers * stages * box_rows * 128 > 200 * 1024) {
    std::fprintf(
        stderr,
        "usage: tma_rate [ctas 1..%d] [box_rows 64|128|256] "
        "[load|bulk|prefetch|prefetch-cold] [unique|shared] [stages 1..%d] [issuers 1..%d] "
        "(issuers x stages boxes <= 200 KiB)\n",
        sms, kMaxStages, kMaxIssuers);
    return 2;
  }
  const std::int64_t rows = static_cast<std::int64_t>(sms) * kRegionRows;
  unsigned short* src = nullptr;
  experiment::check(cudaMalloc(&src, rows * kRegionCols * 2), "malloc source");
  experiment::fill<<<264, 256>>>(src, static_cast<std::size_t>(rows) * kRegionCols, 7);
  experiment::check(cudaGetLastError(), "fill");
  const tma::TensorMap map = tma::make_tensor_map(tma::make_tiled_spec<tma::bf16>(
      src, {rows, kRegionCols}, {}, {box_rows, 64}, {.swizzle = tma::Swizzle::k128B}));
  unsigned short* cold_src = nullptr;
  experiment::check(cudaMalloc(&cold_src, kColdRows * kRegionCols * 2), "malloc cold source");
  const tma::TensorMap cold = tma::make_tensor_map(tma::make_tiled_spec<tma::bf16>(
      cold_src, {kColdRows, kRegionCols}, {}, {box_rows, 64}, {.swizzle = tma::Swizzle::k128B}));
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, 2 * sizeof(long long) * ctas), "malloc out");
  const int smem = issuers * stages * box_rows * 128 + 1024;
  // 200 KiB of dynamic shared memory keeps one CTA per SM.
  const int smem_launch = std::max(smem, 200 * 1024);
  experiment::check(
      cudaFuncSetAttribute(rate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_launch),
      "smem attribute");
  for (int r = 0; r < 3; ++r) {  // the last run is reported
    rate_kernel<<<ctas, 128, smem_launch>>>(map, cold, reinterpret_cast<const unsigned char*>(src),
                                            kRegionCols * 2, box_rows, stages, issuers, mode,
                                            s == "shared", out);
    experiment::check(cudaGetLastError(), "launch");
    experiment::check(cudaDeviceSynchronize(), "run");
  }
  std::vector<long long> h(2 * static_cast<std::size_t>(ctas));
  experiment::check(cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost),
                    "copy out");
  double sum = 0, lo = 1e30, total_bytes = 0, longest = 0;
  for (int b = 0; b < ctas; ++b) {
    const double cycles = static_cast<double>(h[2 * b]), bytes = static_cast<double>(h[2 * b + 1]);
    const double rate = bytes / cycles;
    sum += rate, lo = std::min(lo, rate), total_bytes += bytes, longest = std::max(longest, cycles);
  }
  std::printf(
      "tma_rate: %d CTAs, %d-row boxes (%d B), %d stages x %d issuers, %.*s, %.*s source: per "
      "SM %.1f B/cycle mean, %.1f min; all %.0f B/cycle (%.2f TB/s at %d MHz)\n",
      ctas, box_rows, box_rows * 128, stages, issuers, static_cast<int>(m.size()), m.data(),
      static_cast<int>(s.size()), s.data(), sum / ctas, lo, total_bytes / longest,
      total_bytes / longest * clock_khz * 1e3 / 1e12, clock_khz / 1000);
  return 0;
}
