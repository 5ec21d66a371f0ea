// tma-bench gemm: verification of a GEMM result (see gemm_check.hpp). Plain oracle kernels: one
// grid-stride scan for the poison, one warp per sampled fp64 dot product.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gemm_check.hpp"
#include "kernels.hpp"

namespace tma::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpSize = 32;
constexpr std::int64_t kMaxBlocks = 8192;
// The poison as a bf16 bit pattern (a tiny negative normal number no dot product of these inputs
// lands on exactly).
constexpr std::uint16_t kPoisonBf16 = static_cast<std::uint16_t>(kPoisonByte << 8 | kPoisonByte);

struct Operands {
  const std::uint16_t* a;  // bf16 bits
  const std::uint16_t* b;
  const std::uint16_t* d;
  bool a_row, b_row;
  std::int64_t m, n, k, lda, ldb, ldd;
};

struct Sample {
  std::int64_t row, col;
  double got, want;
};

struct PoisonScan {
  unsigned long long count;
  unsigned long long first;
};

__device__ double bf16_to_double(std::uint16_t bits) {
  return static_cast<double>(__uint_as_float(static_cast<unsigned>(bits) << 16));
}

// splitmix64's finalizer, as kernels.cu: sample positions from the seed.
__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void scan_poison_kernel(Operands o, PoisonScan* out) {
  const std::int64_t total = o.m * o.n;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += step) {
    const std::int64_t row = p / o.n;
    const std::int64_t col = p - row * o.n;
    const bool unwritten = o.d[row * o.ldd + col] == kPoisonBf16;
    // One pair of atomics per warp: a kernel that wrote nothing leaves every element poisoned.
    const unsigned active = __activemask();
    const unsigned bad_lanes = __ballot_sync(active, unwritten);
    const int lane = static_cast<int>(threadIdx.x % kWarpSize);
    if (bad_lanes != 0 && lane == __ffs(static_cast<int>(active)) - 1) {
      atomicAdd(&out->count, static_cast<unsigned long long>(__popc(bad_lanes)));
      // The lowest bad lane holds the lowest offset: p grows with the lane.
      const int first_lane = __ffs(static_cast<int>(bad_lanes)) - 1;
      atomicMin(&out->first, static_cast<unsigned long long>(p + (first_lane - lane)));
    }
  }
}

// Warp w computes sample w: D[i][j] against sum_k A[i][k] B[k][j] in fp64.
__global__ void sample_kernel(Operands o, std::uint64_t seed, Sample* out) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kWarpSize);
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  if (warp >= kGemmSamples) return;
  const std::uint64_t h = mix(seed + static_cast<std::uint64_t>(warp) * 0x9E3779B97F4A7C15ull);
  const auto i = static_cast<std::int64_t>((h & 0xFFFFFFFFull) % static_cast<std::uint64_t>(o.m));
  const auto j = static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(o.n));
  double sum = 0;
  for (std::int64_t k = lane; k < o.k; k += kWarpSize) {
    const double x = bf16_to_double(o.a[o.a_row ? i * o.lda + k : k * o.lda + i]);
    const double y = bf16_to_double(o.b[o.b_row ? k * o.ldb + j : j * o.ldb + k]);
    sum += x * y;
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
  if (lane == 0) out[warp] = Sample{i, j, bf16_to_double(o.d[i * o.ldd + j]), sum};
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

GemmVerdict verify_gemm(const ops::GemmArgs& g, std::uint64_t seed, cudaStream_t stream) {
  if (g.a_dtype != DataType::kBFloat16 || g.b_dtype != DataType::kBFloat16 ||
      g.d_dtype != DataType::kBFloat16) {
    throw std::logic_error("verify_gemm: checks bf16 A, B and D only");
  }
  const Operands o{static_cast<const std::uint16_t*>(g.a),
                   static_cast<const std::uint16_t*>(g.b),
                   static_cast<const std::uint16_t*>(g.d),
                   g.a_layout == ops::MatrixLayout::kRowMajor,
                   g.b_layout == ops::MatrixLayout::kRowMajor,
                   g.m,
                   g.n,
                   g.k,
                   g.lda,
                   g.ldb,
                   g.ldd};

  // One allocation: the scan's counters, then the samples.
  const std::size_t samples_offset = 256;
  const DeviceBuffer scratch(samples_offset + sizeof(Sample) * kGemmSamples);
  auto* scan = reinterpret_cast<PoisonScan*>(scratch.data());
  auto* samples = reinterpret_cast<Sample*>(scratch.data() + samples_offset);
  PoisonScan scan_result{};
  std::vector<Sample> host(kGemmSamples);
  const PoisonScan init{0, ULLONG_MAX};
  TMA_BENCH_CHECK(cudaMemcpyAsync(scan, &init, sizeof init, cudaMemcpyHostToDevice, stream));
  const auto blocks = static_cast<unsigned>(
      std::clamp<std::int64_t>((g.m * g.n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  scan_poison_kernel<<<blocks, kThreads, 0, stream>>>(o, scan);
  TMA_BENCH_CHECK_LAUNCH();
  sample_kernel<<<kGemmSamples * kWarpSize / kThreads, kThreads, 0, stream>>>(o, seed, samples);
  TMA_BENCH_CHECK_LAUNCH();
  TMA_BENCH_CHECK(
      cudaMemcpyAsync(&scan_result, scan, sizeof scan_result, cudaMemcpyDeviceToHost, stream));
  TMA_BENCH_CHECK(cudaMemcpyAsync(host.data(), samples, sizeof(Sample) * kGemmSamples,
                                  cudaMemcpyDeviceToHost, stream));
  TMA_BENCH_CHECK(cudaStreamSynchronize(stream));

  GemmVerdict v;
  v.unwritten = scan_result.count;
  if (v.unwritten != 0) v.first_unwritten = static_cast<std::int64_t>(scan_result.first);
  double err2 = 0, ref2 = 0, worst = -1;
  for (const Sample& s : host) {
    // A non-finite result makes the error NaN, which fails the bound below.
    const double e = s.got - s.want;
    err2 += e * e;
    ref2 += s.want * s.want;
    if (!(std::abs(e) <= worst)) {
      worst = std::isnan(e) ? INFINITY : std::abs(e);
      v.worst_row = s.row;
      v.worst_col = s.col;
      v.worst_got = s.got;
      v.worst_want = s.want;
    }
  }
  v.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return v;
}

std::string gemm_failure(const GemmVerdict& v, const ops::GemmArgs& g) {
  std::string s;
  if (v.unwritten != 0) {
    s += std::to_string(v.unwritten) + " of " + std::to_string(g.m * g.n) +
         " elements of D not written (still the poison; first at row " +
         std::to_string(v.first_unwritten / g.n) + ", column " +
         std::to_string(v.first_unwritten % g.n) + ")";
  }
  if (!(v.rel_error <= kGemmBound)) {
    if (!s.empty()) s += "; ";
    s += "sampled relative error " + number(v.rel_error) + " > " + number(kGemmBound) + " over " +
         std::to_string(kGemmSamples) + " elements vs fp64; worst D[" +
         std::to_string(v.worst_row) + "][" + std::to_string(v.worst_col) +
         "] = " + number(v.worst_got) + ", expected " + number(v.worst_want);
  }
  return s;
}

}  // namespace tma::bench
