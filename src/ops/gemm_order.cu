// tmakit ops: the GEMM's GPC-aware worker order, the device side: which SMs share a GPC (once
// per device) and where the hardware puts the persistent grid's clusters (once per device, cluster
// size, shared-memory size and grid size); gemm_order.hpp says why and what is done with it. The
// first launch in a process that measures took 1.0-1.4 ms of host time (the GPC probe 0.3 ms,
// a grid's placement 0.05 ms; H100, session 24: gpu_gemm_order reports them); later launches
// look the result up (0.03 ms for the whole gemm_tuned).
//
// The probes never throw and never leave an error behind: a user's stream is only waited on, the
// kernels run on a private non-blocking stream, every failure clears its (non-sticky) error with
// cudaGetLastError and leaves the identity order. While the caller's stream is being captured
// nothing is launched (a capture would record the probes, or be invalidated by them); the
// identity order is used until a launch outside a capture has measured the device.
#include <cuda_runtime.h>
#include <cuda/ptx>

#include <array>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "gemm_config.hpp"
#include "gemm_order.hpp"

namespace tma::ops::detail::gemm {
namespace {

// Long enough that every CTA of the GPC probe's wave is on its SM before the first one exits
// (a launch of 1,024 small CTAs takes a few microseconds): ~100 us at 1.98 GHz.
constexpr long long kGpcSpinCycles = 200'000;
// The placement probe waits until all its CTAs have arrived, or this long (~1 ms), after which it
// reports that they were not resident at once (another kernel holding SMs).
constexpr long long kPlaceSpinCycles = 2'000'000;
constexpr int kGpcProbeClusters = 64;
// Attempts per key before the identity is kept for good (a busy GPU can fail a probe).
constexpr int kProbeAttempts = 3;

// Clusters of `gridDim / cluster` CTAs stay inside one GPC: each CTA records its SM and stays
// resident a while, so that the wave's clusters spread over the GPU.
__global__ void gpc_probe_kernel(int* sm_of_cta, long long spin) {
  if (threadIdx.x != 0) return;
  sm_of_cta[blockIdx.x] = static_cast<int>(cuda::ptx::get_sreg_smid());
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}

// The GEMM's launch shape (384 threads, its shared memory: one CTA per SM, clusters of
// cluster_m): each CTA records its SM, then waits until all `ctas` have, or gives up and marks
// its entry -1 (the wave was not resident at once, so it says nothing of the GEMM's placement).
__global__ void place_probe_kernel(int* sm_of_cta, unsigned* arrived, unsigned ctas,
                                   long long spin) {
  if (threadIdx.x != 0) return;
  sm_of_cta[blockIdx.x] = static_cast<int>(cuda::ptx::get_sreg_smid());
  atomicAdd(arrived, 1u);
  const long long t0 = clock64();
  while (*static_cast<volatile unsigned*>(arrived) < ctas) {
    if (clock64() - t0 > spin) {
      sm_of_cta[blockIdx.x] = -1;
      return;
    }
  }
}

// True when e is cudaSuccess; otherwise clears the error the runtime keeps for the thread.
bool ok(cudaError_t e) {
  if (e == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

// This thread may make calls a global-mode capture in another thread forbids (stream creation,
// allocation): the probe runs in relaxed mode, the caller's mode is restored on every path.
struct RelaxedCapture {
  cudaStreamCaptureMode saved = cudaStreamCaptureModeRelaxed;
  RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&saved); }
  ~RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&saved); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;
};

// The probes' device memory: kProbeInts ints per device, allocated (cudaMalloc) at the first probe
// and kept for the process's life. Not a stream-ordered allocation: the first cudaMallocAsync of
// a process initializes the device's default memory pool, which took 10.9 ms on the H100 (session
// 24, against 0.08 ms later), and would touch a pool the caller may have configured; freeing a
// cudaMalloc buffer would synchronize the device. The probes run one at a time (probe_mutex).
constexpr int kProbeInts = 2048;  // >= 64 x 16 (GPC probe), kWorkerMap x 4 + 1 (placement)
static_assert(kProbeInts >= kGpcProbeClusters * 16 && kProbeInts >= kWorkerMap * 4 + 1,
              "the probe buffer holds the GPC probe's CTAs and the largest placement");
std::mutex probe_mutex;
int* probe_buffer() {
  static std::map<int, int*> buffers;
  int dev = 0;
  if (!ok(cudaGetDevice(&dev))) return nullptr;
  int*& p = buffers[dev];
  if (p == nullptr && !ok(cudaMalloc(&p, sizeof(int) * kProbeInts))) p = nullptr;
  return p;
}

// A private non-blocking stream that starts after `after`'s pending work; destroyed when it goes
// out of scope (after a wait for it).
struct ProbeStream {
  cudaStream_t s = nullptr;
  bool good = false;
  explicit ProbeStream(cudaStream_t after) {
    if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) return;
    cudaEvent_t e = nullptr;
    if (!ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming))) return;
    good = ok(cudaEventRecord(e, after)) && ok(cudaStreamWaitEvent(s, e, 0));
    (void)cudaEventDestroy(e);
  }
  ~ProbeStream() {
    if (s == nullptr) return;
    (void)ok(cudaStreamSynchronize(s));
    (void)cudaStreamDestroy(s);
  }
  ProbeStream(const ProbeStream&) = delete;
  ProbeStream& operator=(const ProbeStream&) = delete;
};

bool launch_clusters(const void* kernel, int clusters, int cluster, int threads, std::size_t smem,
                     cudaStream_t stream, void** args) {
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(clusters, cluster, threads, smem, stream, attr);
  return ok(cudaLaunchKernelExC(&cfg, kernel, args));
}

std::vector<int> sm_of_ctas(ProbeStream& ps, const void* kernel, int clusters, int cluster,
                            int threads, std::size_t smem, void** args, int* device_sms,
                            std::size_t count) {
  std::vector<int> out(count);
  if (!launch_clusters(kernel, clusters, cluster, threads, smem, ps.s, args) ||
      !ok(cudaMemcpyAsync(out.data(), device_sms, sizeof(int) * count, cudaMemcpyDeviceToHost,
                          ps.s)) ||
      !ok(cudaStreamSynchronize(ps.s)))
    return {};
  return out;
}

int device_sms() {
  int dev = 0, sms = 0;
  if (!ok(cudaGetDevice(&dev)) ||
      !ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)))
    return 0;
  return sms;
}

}  // namespace

cudaLaunchConfig_t cluster_config(int clusters, int cluster, int threads, std::size_t smem,
                                  cudaStream_t stream, cudaLaunchAttribute* attr) {
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * cluster));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

std::vector<int> probe_sm_groups(cudaStream_t stream) {
  const int sms = device_sms();
  if (sms < 1) return {};
  const void* kernel = reinterpret_cast<const void*>(gpc_probe_kernel);
  int cluster = 16;  // the largest cluster size (non-portable): the most SMs of a GPC at once
  if (!ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)))
    cluster = 8;  // the portable maximum
  RelaxedCapture relaxed;
  const std::lock_guard<std::mutex> lock(probe_mutex);
  ProbeStream ps(stream);
  const std::size_t count = static_cast<std::size_t>(kGpcProbeClusters) * cluster;
  int* d_sms = probe_buffer();
  if (d_sms == nullptr || !ps.good) return {};
  long long spin = kGpcSpinCycles;
  void* args[] = {&d_sms, &spin};
  const std::vector<int> sm_of_cta =
      sm_of_ctas(ps, kernel, kGpcProbeClusters, cluster, 32, 0, args, d_sms, count);
  if (sm_of_cta.empty()) return {};
  return sm_groups(sm_of_cta, cluster, sms);
}

int probe_max_clusters(int cluster_m, std::uint32_t smem) {
  const void* kernel = reinterpret_cast<const void*>(place_probe_kernel);
  if (!ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem))))
    return 0;
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(1, cluster_m, kThreads, smem, nullptr, attr);
  int clusters = 0;
  if (!ok(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg))) return 0;
  return clusters;
}

std::vector<int> probe_placement(int clusters, int cluster_m, std::uint32_t smem,
                                 cudaStream_t stream) {
  if (clusters < 1 || cluster_m < 1 || clusters > probe_max_clusters(cluster_m, smem)) return {};
  const std::size_t count = static_cast<std::size_t>(clusters) * cluster_m;
  if (count + 1 > static_cast<std::size_t>(kProbeInts)) return {};
  RelaxedCapture relaxed;
  const std::lock_guard<std::mutex> lock(probe_mutex);
  ProbeStream ps(stream);
  int* mem = probe_buffer();
  if (mem == nullptr || !ps.good || !ok(cudaMemsetAsync(mem + count, 0, sizeof(int), ps.s)))
    return {};
  int* d_sms = mem;
  auto* arrived = reinterpret_cast<unsigned*>(mem + count);
  auto ctas = static_cast<unsigned>(count);
  long long spin = kPlaceSpinCycles;
  void* args[] = {&d_sms, &arrived, &ctas, &spin};
  std::vector<int> sm_of_cta = sm_of_ctas(ps, reinterpret_cast<const void*>(place_probe_kernel),
                                          clusters, cluster_m, kThreads, smem, args, d_sms, count);
  for (int s : sm_of_cta)
    if (s < 0) return {};
  return sm_of_cta;
}

bool worker_order(std::uint8_t* worker_of, int workers, int cluster_m, std::uint32_t smem,
                  int classes, cudaStream_t stream) {
  identity_order(worker_of);
  if (workers < 2 || workers > kWorkerMap || classes < 2) return false;
  int dev = 0;
  if (!ok(cudaGetDevice(&dev))) return false;

  // Per device: the SM groups. Per (device, cluster_m, smem, workers): each cluster's group in
  // a launch of that many clusters (measured per size: a launch of fewer clusters does not put
  // them where a full wave put its first ones, session 24). Per launch shape: the order. A probe
  // that fails counts an attempt; after kProbeAttempts the identity stays.
  struct Measured {
    std::vector<int> groups;  // empty: not measured (yet)
    int attempts = 0;
  };
  using Order = std::array<std::uint8_t, kWorkerMap>;
  static std::mutex mutex;
  static std::map<int, Measured> sm_group_of;
  static std::map<std::tuple<int, int, std::uint32_t, int>, Measured> placement_of;
  static std::map<std::tuple<int, int, std::uint32_t, int, int>, Order> order_of;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(dev, cluster_m, smem, workers, classes);
  const auto found = order_of.find(key);
  if (found != order_of.end()) {
    std::copy(found->second.begin(), found->second.end(), worker_of);
    return true;
  }
  Measured& place = placement_of[std::make_tuple(dev, cluster_m, smem, workers)];
  if (place.groups.empty()) {
    if (place.attempts >= kProbeAttempts) return false;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (!ok(cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
      return false;  // not an attempt: the next launch outside a capture measures
    ++place.attempts;
    Measured& groups = sm_group_of[dev];
    if (groups.groups.empty() && groups.attempts < kProbeAttempts) {
      ++groups.attempts;
      groups.groups = probe_sm_groups(stream);
    }
    if (groups.groups.empty()) return false;
    place.groups =
        cluster_groups(probe_placement(workers, cluster_m, smem, stream), cluster_m, groups.groups);
    if (static_cast<int>(place.groups.size()) != workers) {
      place.groups.clear();
      return false;
    }
  }
  const std::vector<int> perm = gpc_worker_order(place.groups, classes);
  Order order;
  for (int i = 0; i < kWorkerMap; ++i)
    order[i] = static_cast<std::uint8_t>(i < workers ? perm[i] : i);
  order_of.emplace(key, order);
  std::copy(order.begin(), order.end(), worker_of);
  return true;
}

}  // namespace tma::ops::detail::gemm
