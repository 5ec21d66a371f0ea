// store_load_mix: an experiment, not a benchmark of record. Do an SM's output stores slow its
// TMA loads, and does it matter whether the stores go through the TMA unit or through st.global?
// Question (docs/perf-log.md, session 29): a cooperative GEMM tile's epilogue drains at ~15
// B/cycle per SM (2.2k cycles for 64 KiB at 8192 x 4096 x 4096) whether or not the other SMs
// write at the same time, half a lone SM's store rate (store_rate); and the next tile's first
// stage then arrives 400-500 cycles after the epilogue although it was requested thousands of
// cycles before. Are loads queued behind stores?
//   store_load_mix [ctas = all SMs] [stores: none | tma | lsu] [loads: 0 | 1] [rounds = 16]
// One CTA per SM. Stores (as store_rate's tma / lsu-smem modes): each round 32 KiB from shared
// memory to the CTA's own tile of an L2-resident matrix, thread 0 with 4 TMA boxes of 64 x 64
// (two staging sets alternating) or the 128 threads of warps 0-3 with ld.shared.v4 +
// st.global.v4. Loads (warp 4, lane 0): bulk copies of 16 KiB from the CTA's own L2-resident 256
// KiB region into a ring of 4 stages, each re-issued as soon as it lands, 16 x rounds of them (the
// same bytes in as a GEMM k-loop of 128 x 256 tiles brings per 32 KiB out, roughly), the latency
// of each recorded. Prints per-SM rates: stores (bytes over cycles to completion), loads (bytes
// over cycles), and the loads' mean latency (issue to landing).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "experiment.cuh"
#include "tma/device.cuh"
#include "tma/tma.hpp"

namespace {

constexpr int kTile = 128;
constexpr int kCols = 2048;
constexpr int kTileBytes = kTile * kTile * 2;  // 32 KiB
constexpr int kBoxBytes = 64 * 64 * 2;         // 8 KiB
constexpr int kLoadBytes = 16 * 1024;
constexpr int kLoadStages = 4;
constexpr std::int64_t kRegionBytes = 256 * 1024;  // each CTA's load source
constexpr int kSmemBytes = 2 * kTileBytes + kLoadStages * kLoadBytes + 1024;

enum class Stores { kNone, kTma, kLsu };

__global__ void __launch_bounds__(256, 1)
    mix_kernel(const __grid_constant__ tma::TensorMap map, unsigned char* d,
               const unsigned char* src, Stores stores, bool loads, int rounds, long long* out) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (1024 - tma::ptx::smem_addr(raw) % 1024) % 1024;
  unsigned char* ring = smem + 2 * kTileBytes;
  __shared__ tma::Barrier bars[kLoadStages];
  __shared__ long long store_cycles, load_cycles, latency_sum;
  const int t = static_cast<int>(threadIdx.x);
  const int tile_row = static_cast<int>(blockIdx.x) / (kCols / kTile);
  const int tile_col = static_cast<int>(blockIdx.x) % (kCols / kTile);
  for (int i = t; i < 2 * kTileBytes / 4; i += blockDim.x)
    reinterpret_cast<unsigned*>(smem)[i] = 0x3C003C00u + static_cast<unsigned>(i);
  if (t == 0) {
    for (auto& b : bars)
      b.init(1);
    tma::fence_barrier_init();
    store_cycles = load_cycles = latency_sum = 0;
  }
  tma::fence_proxy_async_shared();
  __syncthreads();
  unsigned char* tile =
      d + (static_cast<std::int64_t>(tile_row) * kTile * kCols + tile_col * kTile) * 2;
  if (stores == Stores::kTma && t == 0) {
    const long long start = clock64();
    for (int r = 0; r < rounds; ++r) {
      const unsigned char* set = smem + (r % 2) * kTileBytes;
      if (r >= 2) tma::wait_group_read<1>();
      for (int b = 0; b < 4; ++b) {
        const std::int32_t c[2] = {tile_col * kTile + (b % 2) * 64,
                                   tile_row * kTile + (b / 2) * 64};
        tma::store(&map, set + b * kBoxBytes, c);
      }
      tma::commit_group();
    }
    tma::wait_group<0>();
    store_cycles = clock64() - start;
  } else if (stores == Stores::kLsu && t < 128) {
    const long long start = clock64();
    for (int r = 0; r < rounds; ++r) {
      const unsigned char* set = smem + (r % 2) * kTileBytes;
      for (int pass = 0; pass < kTile / 8; ++pass) {
        const int row = pass * 8 + t / 16, col16 = t % 16;
        const uint4 v = *reinterpret_cast<const uint4*>(set + row * kTile * 2 + col16 * 16);
        *reinterpret_cast<uint4*>(tile + static_cast<std::int64_t>(row) * kCols * 2 + col16 * 16) =
            v;
      }
    }
    __threadfence();
    const long long span = clock64() - start;
    atomicMax(reinterpret_cast<unsigned long long*>(&store_cycles),
              static_cast<unsigned long long>(span));
  } else if (loads && t == 128) {
    const unsigned char* region = src + static_cast<std::int64_t>(blockIdx.x) * kRegionBytes;
    const int n = 16 * rounds;
    long long issued_at[kLoadStages] = {};
    long long lat = 0;
    std::uint32_t phase = 0;
    std::int64_t off = 0;
    const long long start = clock64();
    for (int i = 0; i < n + kLoadStages; ++i) {
      const int s = i % kLoadStages;
      if (i >= kLoadStages) {
        bars[s].wait(phase);
        lat += clock64() - issued_at[s];
      }
      if (i < n) {
        bars[s].arrive_expect_tx(kLoadBytes);
        issued_at[s] = clock64();
        tma::bulk_load(ring + s * kLoadBytes, region + off, kLoadBytes, bars[s]);
        off += kLoadBytes;
        if (off == kRegionBytes) off = 0;
      }
      if (s == kLoadStages - 1 && i >= kLoadStages) phase ^= 1u;
    }
    load_cycles = clock64() - start;
    latency_sum = lat / n;
  }
  __syncthreads();
  if (t == 0) {
    out[3 * blockIdx.x] = store_cycles;
    out[3 * blockIdx.x + 1] = load_cycles;
    out[3 * blockIdx.x + 2] = latency_sum;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SMs");
  const int ctas = argc > 1 ? std::atoi(argv[1]) : sms;
  const std::string_view st = argc > 2 ? argv[2] : "tma";
  const bool loads = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 16;
  if (ctas < 1 || ctas > sms || (st != "none" && st != "tma" && st != "lsu") || rounds < 1 ||
      rounds > 4096 || (st == "none" && !loads)) {
    std::fprintf(stderr,
                 "usage: store_load_mix [ctas 1..%d] [none|tma|lsu] [loads 0|1] [rounds 1..4096] "
                 "(stores none needs loads 1)\n",
                 sms);
    return 2;
  }
  const Stores stores = st == "tma" ? Stores::kTma : st == "lsu" ? Stores::kLsu : Stores::kNone;
  const int tile_rows = (sms + kCols / kTile - 1) / (kCols / kTile);
  const std::int64_t rows = static_cast<std::int64_t>(tile_rows) * kTile;
  unsigned char* d = nullptr;
  experiment::check(cudaMalloc(&d, rows * kCols * 2), "malloc D");
  unsigned short* src = nullptr;
  experiment::check(cudaMalloc(&src, kRegionBytes * sms), "malloc source");
  experiment::fill<<<264, 256>>>(src, static_cast<std::size_t>(kRegionBytes * sms / 2), 7);
  experiment::check(cudaGetLastError(), "fill");
  const tma::TensorMap map = tma::make_tensor_map(tma::make_tiled_spec<tma::bf16>(
      d, {rows, kCols}, {}, {64, 64}, {.swizzle = tma::Swizzle::k128B}));
  long long* out = nullptr;
  experiment::check(cudaMalloc(&out, 3 * sizeof(long long) * ctas), "malloc out");
  experiment::check(
      cudaFuncSetAttribute(mix_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes),
      "smem attribute");
  for (int r = 0; r < 3; ++r) {  // the last run is reported
    mix_kernel<<<ctas, 256, kSmemBytes>>>(map, d, reinterpret_cast<const unsigned char*>(src),
                                          stores, loads, rounds, out);
    experiment::check(cudaGetLastError(), "launch");
    experiment::check(cudaDeviceSynchronize(), "run");
  }
  std::vector<long long> h(3 * static_cast<std::size_t>(ctas));
  experiment::check(cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost),
                    "copy out");
  double store_rate = 0, load_rate = 0, latency = 0;
  for (int b = 0; b < ctas; ++b) {
    if (h[3 * b] > 0) store_rate += static_cast<double>(rounds) * kTileBytes / h[3 * b];
    if (h[3 * b + 1] > 0) load_rate += static_cast<double>(rounds) * 16 * kLoadBytes / h[3 * b + 1];
    latency += static_cast<double>(h[3 * b + 2]);
  }
  std::printf(
      "store_load_mix: %d CTAs, stores %.*s, loads %s, %d rounds: per SM stores %.1f B/cycle, "
      "loads %.1f B/cycle, load latency %.0f cycles (means over the CTAs)\n",
      ctas, static_cast<int>(st.size()), st.data(), loads ? "on" : "off", rounds, store_rate / ctas,
      load_rate / ctas, latency / ctas);
  return 0;
}
