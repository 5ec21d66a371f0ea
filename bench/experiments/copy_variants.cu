// copy_variants: an experiment, not a benchmark of record. Why is tma::ops::copy at ~0.91x of
// cudaMemcpyAsync on large contiguous buffers (docs/perf-log.md, copy v1)? Times, round-robin
// on the same buffers: cudaMemcpyAsync, tma::ops::copy (TMA tensor path), a 1-D bulk-copy
// (cp.async.bulk, non-tensor) pipeline with several chunk sizes and CTAs per SM, and a plain
// 16-byte load/store grid-stride loop. Every variant is verified (byte compare) first.
//   copy_variants [MiB=1024] [reps=20]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tma/device.cuh"
#include "tma/ops/copy.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// One thread per CTA: chunk c of the buffer goes global -> shared -> global with bulk copies,
// kStages buffers, loads kLookahead chunks ahead.
template <int kStages, int kLookahead, bool kPartitioned = false>
__global__ void __launch_bounds__(32)
    bulk_copy_kernel(const unsigned char* src, unsigned char* dst, std::uint64_t chunks,
                     std::uint32_t chunk_bytes) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ tma::Barrier full[kStages];
  if (threadIdx.x != 0) return;
  for (auto& b : full)
    b.init(1);
  tma::fence_barrier_init();
  // Interleaved: CTA b takes chunks b, b + grid, ... (all CTAs sweep one window together).
  // Partitioned: CTA b takes one contiguous range of chunks (the CTAs spread over the buffer).
  const std::uint64_t per = (chunks + gridDim.x - 1) / gridDim.x;
  const std::uint64_t first = kPartitioned ? blockIdx.x * per : blockIdx.x;
  const std::uint64_t step = kPartitioned ? 1 : gridDim.x;
  const std::uint64_t mine = kPartitioned
                                 ? (first < chunks ? min(per, chunks - first) : 0)
                                 : (first < chunks ? (chunks - first + step - 1) / step : 0);
  std::uint32_t phase_bits = 0;
  auto load = [&](std::uint64_t k) {
    const int s = static_cast<int>(k % kStages);
    full[s].arrive_expect_tx(chunk_bytes);
    tma::bulk_load(smem + s * chunk_bytes, src + (first + k * step) * chunk_bytes, chunk_bytes,
                   full[s]);
  };
  for (std::uint64_t k = 0; k < mine && k < kLookahead; ++k)
    load(k);
  for (std::uint64_t k = 0; k < mine; ++k) {
    const int s = static_cast<int>(k % kStages);
    full[s].wait((phase_bits >> s) & 1u);
    phase_bits ^= 1u << s;
    tma::bulk_store(dst + (first + k * step) * chunk_bytes, smem + s * chunk_bytes, chunk_bytes);
    tma::commit_group();
    if (k + kLookahead < mine) {
      tma::wait_group_read<kStages - kLookahead>();
      load(k + kLookahead);
    }
  }
  tma::wait_group<0>();
}

__global__ void plain_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                  std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride)
    dst[i] = src[i];
}

// As plain_copy_kernel with streaming cache hints: loads bypass L1 and are marked evict-first
// (ld.global.nc.L1::no_allocate.L2::evict_first via __ldcs), stores evict-first (__stcs).
__global__ void plain_streaming_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                       std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(src + i), b = __ldcs(src + i + stride), c = __ldcs(src + i + 2 * stride),
                d = __ldcs(src + i + 3 * stride);
    __stcs(dst + i, a);
    __stcs(dst + i + stride, b);
    __stcs(dst + i + 2 * stride, c);
    __stcs(dst + i + 3 * stride, d);
  }
  for (; i < n; i += stride)
    __stcs(dst + i, __ldcs(src + i));
}

// Partitioned: thread t of the grid copies 4 consecutive 16-byte vectors per step of a
// per-block contiguous range.
__global__ void plain_partitioned_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                         std::uint64_t n) {
  const std::uint64_t per = (n + gridDim.x - 1) / gridDim.x;
  const std::uint64_t lo = blockIdx.x * per, hi = min(n, lo + per);
  for (std::uint64_t i = lo + threadIdx.x; i < hi; i += 4 * blockDim.x) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * blockDim.x < hi) v[u] = src[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * blockDim.x < hi) dst[i + u * blockDim.x] = v[u];
  }
}

__global__ void fill_kernel(std::uint32_t* p, std::uint64_t n, std::uint32_t seed) {
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    p[i] = x ^ (x >> 13) ^ static_cast<std::uint32_t>(i >> 32);
  }
}

__global__ void diff_kernel(const std::uint32_t* a, const std::uint32_t* b, std::uint64_t n,
                            unsigned long long* count) {
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    if (a[i] != b[i]) atomicAdd(count, 1ull);
}

struct Variant {
  std::string name;
  std::function<void(int set)> run;
};

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::uint64_t bytes = mib << 20;
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attr");
  // Two buffer pairs, alternated: consecutive runs never find their input in the L2 (>= 256 MiB).
  std::vector<unsigned char*> src(2), dst(2);
  for (int s = 0; s < 2; ++s) {
    check(cudaMalloc(&src[s], bytes), "malloc");
    check(cudaMalloc(&dst[s], bytes), "malloc");
    fill_kernel<<<1024, 256>>>(reinterpret_cast<std::uint32_t*>(src[s]), bytes / 4, 17u + s);
  }
  unsigned long long* count = nullptr;
  check(cudaMalloc(&count, 8), "malloc");
  cudaStream_t stream = nullptr;

  std::vector<Variant> v;
  v.push_back({"cudaMemcpyAsync", [&](int s) {
                 check(cudaMemcpyAsync(dst[s], src[s], bytes, cudaMemcpyDeviceToDevice, stream),
                       "memcpy");
               }});
  v.push_back({"ops::copy (TMA tensor)", [&](int s) {
                 const tma::ops::TensorView a = tma::ops::contiguous(
                     src[s], tma::DataType::kUInt8, {static_cast<std::int64_t>(bytes)});
                 const tma::ops::TensorView b = tma::ops::contiguous(
                     dst[s], tma::DataType::kUInt8, {static_cast<std::int64_t>(bytes)});
                 tma::ops::copy(b, a, stream);
               }});
  auto add_bulk = [&](auto kernel, const char* stages, std::uint32_t chunk, int per_sm, int ns) {
    const int smem = ns * static_cast<int>(chunk);
    const std::uint64_t chunks = bytes / chunk;
    v.push_back(
        {std::string("bulk ") + stages + " chunk " + std::to_string(chunk >> 10) + " KiB x" +
             std::to_string(per_sm) + "/SM",
         [=, &src, &dst](int s) {
           // Per launch: two variants may share a kernel with different shared memory.
           check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                 "attr");
           kernel<<<sms * per_sm, 32, smem, stream>>>(src[s], dst[s], chunks, chunk);
         }});
  };
  add_bulk(bulk_copy_kernel<4, 2>, "4/2", 32768, 2, 4);
  add_bulk(bulk_copy_kernel<3, 2>, "3/2", 65536, 1, 3);
  add_bulk(bulk_copy_kernel<6, 4>, "6/4", 32768, 1, 6);
  add_bulk(bulk_copy_kernel<3, 2, true>, "3/2 partitioned", 65536, 1, 3);
  for (int per_sm : {4, 16})
    v.push_back(
        {"plain partitioned 256t x" + std::to_string(per_sm) + "/SM", [=, &src, &dst](int s) {
           plain_partitioned_kernel<<<sms * per_sm, 256, 0, stream>>>(
               reinterpret_cast<const uint4*>(src[s]), reinterpret_cast<uint4*>(dst[s]),
               bytes / 16);
         }});
  for (int per_sm : {4, 8})
    v.push_back(
        {"plain streaming x4 256t x" + std::to_string(per_sm) + "/SM", [=, &src, &dst](int s) {
           plain_streaming_kernel<<<sms * per_sm, 256, 0, stream>>>(
               reinterpret_cast<const uint4*>(src[s]), reinterpret_cast<uint4*>(dst[s]),
               bytes / 16);
         }});
  for (int per_sm : {4})
    v.push_back({"plain uint4 x4 256t x" + std::to_string(per_sm) + "/SM", [=, &src, &dst](int s) {
                   plain_copy_kernel<<<sms * per_sm, 256, 0, stream>>>(
                       reinterpret_cast<const uint4*>(src[s]), reinterpret_cast<uint4*>(dst[s]),
                       bytes / 16);
                 }});

  // Verify every variant: destination poisoned, one run, compared with the source.
  for (const Variant& x : v) {
    check(cudaMemset(dst[0], 0xA5, bytes), "poison");
    x.run(0);
    check(cudaGetLastError(), x.name.c_str());
    check(cudaMemset(count, 0, 8), "memset");
    diff_kernel<<<1024, 256>>>(reinterpret_cast<const std::uint32_t*>(src[0]),
                               reinterpret_cast<const std::uint32_t*>(dst[0]), bytes / 4, count);
    unsigned long long c = 0;
    check(cudaMemcpy(&c, count, 8, cudaMemcpyDeviceToHost), "copy");
    if (c != 0) {
      std::printf("VERIFY FAILED %s: %llu words differ\n", x.name.c_str(), c);
      return 1;
    }
  }
  // Round-robin timing: every variant meets the same clocks.
  std::vector<std::vector<float>> ms(v.size());
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  for (int r = -3; r < reps; ++r) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      check(cudaEventRecord(e0, stream), "record");
      v[i].run((r + 8) % 2);
      check(cudaEventRecord(e1, stream), "record");
      check(cudaEventSynchronize(e1), "sync");
      check(cudaGetLastError(), v[i].name.c_str());
      float t = 0;
      check(cudaEventElapsedTime(&t, e0, e1), "elapsed");
      if (r >= 0) ms[i].push_back(t);
    }
  }
  double memcpy_gbps = 0;
  std::printf("%llu MiB, %d reps, round-robin; GB/s = 2 x bytes / median time\n",
              static_cast<unsigned long long>(mib), reps);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::sort(ms[i].begin(), ms[i].end());
    const double med = ms[i][ms[i].size() / 2];
    const double gbps = 2.0 * static_cast<double>(bytes) / (med * 1e-3) / 1e9;
    if (i == 0) memcpy_gbps = gbps;
    std::printf("  %-34s %8.1f GB/s  %5.3fx memcpy\n", v[i].name.c_str(), gbps, gbps / memcpy_gbps);
  }
  return 0;
}
