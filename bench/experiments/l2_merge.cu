// l2_merge: an experiment, not a benchmark of record (docs/perf-log.md, session 17). Three
// questions about where a persistent kernel's CTAs run and what the L2 sees of their reads:
//   1. which SMs share a GPC: clusters of 16 CTAs (all in one GPC) record their SMs (%smid);
//   2. where a GEMM-like launch puts its clusters: 2-CTA clusters of 384 threads, one CTA per SM
//      (200 KiB of shared memory each), the SM count rounded down to even, as a 1-D grid (tmakit's
//      GEMM) and as a (2, clusters) grid (cuBLASLt's kernels); cluster i -> GPC, SMs;
//   3. whether identical bulk (TMA) reads that several SMs issue at about the same time are
//      looked up once: every CTA (one per SM) reads `iters` chunks of 32 KiB; in mode
//        0 each CTA its own sequence,        1 all CTAs the same sequence,
//        2 the CTAs of a GPC the same one,   3 the two CTAs of a TPC (%smid / 2) the same one,
//        4 the CTAs with the same index inside their GPC the same one (one per GPC).
//      Run it under ncu (lts__t_sectors_srcunit_tex_op_read.sum against the bytes delivered,
//      l1tex__m_xbar2l1tex_read_bytes.sum): the kernels are named merge_kernel, one launch per
//      mode.
//   l2_merge [iters=4000]
#include <cuda/ptx>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <vector>

#include "experiment.cuh"
#include "tma/device.cuh"

namespace {

constexpr std::uint32_t kChunk = 32 * 1024;
constexpr std::uint32_t kPlaceSmem = 200 * 1024;  // one CTA per SM

__global__ void where_kernel(int* smid, long long spin) {
  if (threadIdx.x == 0) smid[blockIdx.x] = static_cast<int>(cuda::ptx::get_sreg_smid());
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}

__global__ void place_kernel(int* smid, long long spin) {
  extern __shared__ unsigned char pad[];
  if (threadIdx.x == 0) {
    smid[blockIdx.y * gridDim.x + blockIdx.x] = static_cast<int>(cuda::ptx::get_sreg_smid());
    pad[0] = 1;
  }
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}

// One thread per CTA: two chunk buffers, each iteration loads chunk i into buffer i % 2 and
// waits for chunk i - 1.
__global__ void merge_kernel(const unsigned char* src, std::uint32_t chunks, const int* gpc_of,
                             const int* index_in_gpc, int mode, int iters,
                             unsigned long long* sink) {
  extern __shared__ __align__(128) unsigned char buf[];
  __shared__ tma::Barrier bar[2];
  if (threadIdx.x != 0) return;
  const int sm = static_cast<int>(cuda::ptx::get_sreg_smid());
  int group = 0;
  switch (mode) {
    case 0:
      group = static_cast<int>(blockIdx.x);
      break;
    case 1:
      group = 0;
      break;
    case 2:
      group = gpc_of[sm];
      break;
    case 3:
      group = sm / 2;
      break;
    default:
      group = index_in_gpc[sm];
      break;
  }
  bar[0].init(1);
  bar[1].init(1);
  tma::fence_barrier_init();
  tma::Phase phase[2];
  const std::uint32_t first = static_cast<std::uint32_t>(group) * 7919u;
  for (int i = 0; i <= iters; ++i) {
    if (i < iters) {
      const std::uint32_t c = (first + static_cast<std::uint32_t>(i)) % chunks;
      bar[i % 2].arrive_expect_tx(kChunk);
      tma::bulk_load(buf + (i % 2) * kChunk, src + std::size_t{c} * kChunk, kChunk, bar[i % 2]);
    }
    if (i > 0) bar[(i - 1) % 2].wait_next(phase[(i - 1) % 2]);
  }
  sink[blockIdx.x] = buf[blockIdx.x % (2 * kChunk)];
}

void launch_clusters(const void* kernel, dim3 grid, int cluster, int threads, std::size_t smem,
                     void** args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  experiment::check(cudaLaunchKernelExC(&cfg, kernel, args), "cluster launch");
  experiment::check(cudaDeviceSynchronize(), "cluster kernel");
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 4000;
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SM count");
  int max_smid = 0;
  // 1. GPCs: clusters of 16 (or the largest size the driver allows), many of them.
  int cl = 16;
  if (cudaFuncSetAttribute(reinterpret_cast<const void*>(where_kernel),
                           cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
    cl = 8;
  (void)cudaGetLastError();
  const int clusters = 64;
  int* d_smid = nullptr;
  experiment::check(cudaMalloc(&d_smid, sizeof(int) * clusters * cl), "malloc");
  long long spin = 200000;
  void* args1[] = {&d_smid, &spin};
  launch_clusters(reinterpret_cast<const void*>(where_kernel), dim3(clusters * cl), cl, 32, 0,
                  args1);
  std::vector<int> smid(clusters * cl);
  experiment::check(
      cudaMemcpy(smid.data(), d_smid, sizeof(int) * smid.size(), cudaMemcpyDeviceToHost), "copy");
  for (int s : smid)
    max_smid = std::max(max_smid, s);
  std::vector<int> parent(max_smid + 1 > sms ? max_smid + 1 : sms);
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int c = 0; c < clusters; ++c)
    for (int r = 1; r < cl; ++r)
      parent[find(smid[c * cl + r])] = find(smid[c * cl]);
  std::map<int, std::vector<int>> groups;
  for (int s = 0; s < static_cast<int>(parent.size()); ++s)
    groups[find(s)].push_back(s);
  std::vector<int> gpc_of(parent.size(), 0), index_in_gpc(parent.size(), 0);
  std::printf("clusters of %d: %zu groups of SMs (GPCs, or parts of one that no cluster joined)\n",
              cl, groups.size());
  int g = 0;
  for (auto& [root, members] : groups) {
    std::printf("  group %d (%zu SMs):", g, members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
      std::printf(" %d", members[i]);
      gpc_of[members[i]] = g;
      index_in_gpc[members[i]] = static_cast<int>(i);
    }
    std::printf("\n");
    ++g;
  }
  // 2. A GEMM-like launch: 2-CTA clusters, one CTA per SM.
  experiment::check(cudaFuncSetAttribute(reinterpret_cast<const void*>(place_kernel),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kPlaceSmem),
                    "smem attribute");
  const int grid = sms / 2 * 2;
  std::vector<int> place(grid);
  void* args2[] = {&d_smid, &spin};
  // The grid as tmakit's GEMM launches it (x = all CTAs) and as cuBLASLt's kernels do (x = the
  // cluster, y = the clusters: ncu LaunchStats, docs/perf-log.md session 17), 384 threads each.
  for (const bool two_d : {false, true}) {
    const dim3 g = two_d ? dim3(2, grid / 2) : dim3(grid);
    launch_clusters(reinterpret_cast<const void*>(place_kernel), g, 2, 384, kPlaceSmem, args2);
    experiment::check(cudaMemcpy(place.data(), d_smid, sizeof(int) * grid, cudaMemcpyDeviceToHost),
                      "copy");
    int same_tpc = 0;
    std::printf("2-CTA clusters, grid %s, one CTA per SM: cluster -> GPC group (SMs)\n ",
                two_d ? "(2, clusters)" : "(CTAs)");
    for (int c = 0; c < grid / 2; ++c) {
      std::printf(" %d:%d(%d,%d)", c, gpc_of[place[2 * c]], place[2 * c], place[2 * c + 1]);
      same_tpc += place[2 * c] / 2 == place[2 * c + 1] / 2;
    }
    std::printf("\n  clusters whose two CTAs share a TPC (same %%smid / 2): %d of %d\n", same_tpc,
                grid / 2);
  }
  // 3. Merged lookups.
  const std::uint32_t chunks = 1024;  // 32 MiB
  unsigned char* src = nullptr;
  unsigned long long* sink = nullptr;
  int *d_gpc = nullptr, *d_index = nullptr;
  experiment::check(cudaMalloc(&src, std::size_t{chunks} * kChunk), "malloc");
  experiment::check(cudaMemset(src, 1, std::size_t{chunks} * kChunk), "memset");
  experiment::check(cudaMalloc(&sink, sizeof(unsigned long long) * sms), "malloc");
  experiment::check(cudaMalloc(&d_gpc, sizeof(int) * gpc_of.size()), "malloc");
  experiment::check(cudaMalloc(&d_index, sizeof(int) * gpc_of.size()), "malloc");
  experiment::check(
      cudaMemcpy(d_gpc, gpc_of.data(), sizeof(int) * gpc_of.size(), cudaMemcpyHostToDevice),
      "copy");
  experiment::check(
      cudaMemcpy(d_index, index_in_gpc.data(), sizeof(int) * gpc_of.size(), cudaMemcpyHostToDevice),
      "copy");
  experiment::check(cudaFuncSetAttribute(reinterpret_cast<const void*>(merge_kernel),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kPlaceSmem),
                    "smem attribute");
  const char* names[] = {"own", "all", "gpc", "tpc", "index-in-gpc"};
  for (int mode = 0; mode < 5; ++mode) {
    cudaEvent_t e0, e1;
    experiment::check(cudaEventCreate(&e0), "event");
    experiment::check(cudaEventCreate(&e1), "event");
    experiment::check(cudaEventRecord(e0), "record");
    merge_kernel<<<sms, 32, kPlaceSmem>>>(src, chunks, d_gpc, d_index, mode, iters, sink);
    experiment::check(cudaGetLastError(), "merge_kernel");
    experiment::check(cudaEventRecord(e1), "record");
    experiment::check(cudaEventSynchronize(e1), "sync");
    float ms = 0;
    experiment::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    const double bytes = double(sms) * iters * kChunk;
    std::printf("merge mode %d (%s): %.3f ms, %.0f GB/s delivered, %.0f sectors delivered\n", mode,
                names[mode], ms, bytes / ms / 1e6, bytes / 32);
  }
  return 0;
}
