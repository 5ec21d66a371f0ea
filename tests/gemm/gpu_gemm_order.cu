// GPU test of the GEMM's GPC-aware worker order (src/ops/gemm_order.hpp), in a process of its own
// (the order's measurements are cached per process, and the first of them is what it tests):
//   1. stream capture first: a launch captured into a graph before this device and cluster shape
//      were measured runs the identity order (GemmPlan::gpc_order false, nothing launched besides
//      the GEMM), and the graph computes D correctly (fp64 reference on the CPU);
//   2. the same launch outside a capture measures the device and runs the GPC-aware order, with
//      D bit for bit the graph's; a second capture now records the GPC-aware order, same bits;
//   3. the measurements themselves: the SM groups (clusters of 16) form at least two GPCs; a
//      one-wave launch of 2-CTA clusters of the GEMM's shape puts each cluster inside one group,
//      one CTA per SM; so does a launch of fewer clusters (how many of them land where the full
//      wave put its first ones is reported: few, so the library measures each grid size);
//   4. the plan's launches at 2048^3 (data-parallel) and 1024 x 2112 x 7168 (stream-K) run the
//      GPC-aware order and give D bit for bit as the identity order does (the worker of a cluster
//      changes which SM computes a tile, never how).
// Also reported (INFO, not checked: timing): the host time of the first launch that measures and
// of the next, and of the probes themselves.
// Inputs are fresh random values (+-[0.5, 1.5), never zero), D is poisoned (0xFF, NaN) before
// every launch. Exit 0 (all passed), 1 (a failure), 77 (no usable GPU: the reason is printed).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gemm_config.hpp"  // src/ops: smem_bytes_for's configurations, kThreads
#include "gemm_order.hpp"   // src/ops: the probes
#include "gpu_test.hpp"
#include "tma/host/error.hpp"
#include "tma/ops/gemm.hpp"

namespace {

using tma::DataType;
using tma::ops::GemmArgs;
using tma::ops::GemmPlan;
using tma::ops::GemmTuning;
using tma::ops::MatrixLayout;
using tma::ops::Path;
namespace gemm = tma::ops::detail::gemm;

int g_failures = 0;

// printf into a std::string (GCC 12's -Wrestrict misfires on chains of std::string +).
template <class... T>
std::string fmt(const char* f, T... v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, v...);
  return buf;
}

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++g_failures;
}

// A row-major A (m x k), a column-major B (k x n, as nn.Linear stores weights), a bf16 D; the
// inputs random, rounded to bf16, kept on the host for the reference.
struct Problem {
  std::int64_t m, n, k;
  std::vector<__nv_bfloat16> a, b;
  void* d_a = nullptr;
  void* d_b = nullptr;
  void* d_d = nullptr;
  Problem(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::uint64_t seed)
      : m(m_),
        n(n_),
        k(k_),
        a(static_cast<std::size_t>(m_ * k_)),
        b(static_cast<std::size_t>(n_ * k_)) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> mag(0.5f, 1.5f);
    for (auto* v : {&a, &b})
      for (auto& x : *v)
        x = __float2bfloat16((rng() & 1) != 0 ? mag(rng) : -mag(rng));
    CHECK_CUDA(cudaMalloc(&d_a, a.size() * 2));
    CHECK_CUDA(cudaMalloc(&d_b, b.size() * 2));
    CHECK_CUDA(cudaMalloc(&d_d, static_cast<std::size_t>(m * n) * 2));
    CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  }
  ~Problem() {
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_d);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
  GemmArgs args() const {
    GemmArgs g;
    g.m = m, g.n = n, g.k = k;
    g.a = d_a, g.a_layout = MatrixLayout::kRowMajor, g.lda = k;
    g.b = d_b, g.b_layout = MatrixLayout::kColMajor, g.ldb = k;
    g.d = d_d, g.d_dtype = DataType::kBFloat16, g.ldd = n;
    return g;
  }
  void poison(cudaStream_t s) const {
    CHECK_CUDA(cudaMemsetAsync(d_d, 0xFF, static_cast<std::size_t>(m * n) * 2, s));
  }
  std::vector<std::uint16_t> result() const {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(m * n));
    CHECK_CUDA(cudaMemcpy(out.data(), d_d, out.size() * 2, cudaMemcpyDeviceToHost));
    return out;
  }
  // ||D - ref||_F / ||ref||_F over every row of `rows` sampled rows (all columns), fp64
  // reference from the rounded inputs; NaN (an unwritten element) makes it NaN.
  double rel_error(const std::vector<std::uint16_t>& bits, int rows) const {
    double err2 = 0, ref2 = 0;
    for (int s = 0; s < rows; ++s) {
      const std::int64_t i = (s * 7919) % m;
      for (std::int64_t j = 0; j < n; ++j) {
        double ref = 0;
        for (std::int64_t q = 0; q < k; ++q)
          ref += static_cast<double>(__bfloat162float(a[i * k + q])) *
                 static_cast<double>(__bfloat162float(b[j * k + q]));
        __nv_bfloat16_raw raw;
        raw.x = bits[static_cast<std::size_t>(i * n + j)];
        const __nv_bfloat16 got(raw);
        const double e = static_cast<double>(__bfloat162float(got)) - ref;
        err2 += e * e;
        ref2 += ref * ref;
      }
    }
    return std::sqrt(err2 / ref2);
  }
};

// bf16 output rounding (2^-8) plus fp32 accumulation over K (tests/gemm/gpu_gemm.cu: bound_for).
double bound_for(std::int64_t k) {
  return std::ldexp(1.0, -8) + 1e-5 * std::max(1.0, static_cast<double>(k) / 1024.0);
}

GemmPlan launch(const Problem& p, cudaStream_t s, const GemmTuning& t) {
  GemmPlan plan{};
  p.poison(s);
  tma::ops::gemm_tuned(p.args(), s, Path::kTma, t, &plan);
  CHECK_CUDA(cudaGetLastError());
  return plan;
}

// 1 and 2: capture before and after the measurement.
void capture_test() {
  Problem p(1024, 1024, 1024, 24001);
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Clusters of 1 with configuration 0: a cluster shape no launch of this process has used.
  GemmTuning t;
  t.config = 0;
  t.cluster_m = 1;
  t.stream_k = 1;
  const auto captured = [&](GemmPlan& plan) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    plan = GemmPlan{};
    bool threw = false;
    try {
      tma::ops::gemm_tuned(p.args(), s, Path::kTma, t, &plan);
    } catch (const tma::Error& e) {
      std::printf("FAIL capture: gemm_tuned threw: %s\n", e.what());
      threw = true;
    }
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    if (threw || end != cudaSuccess) {
      check(false, fmt("capture ended: %s", cudaGetErrorString(end)));
      return std::vector<std::uint16_t>{};
    }
    std::size_t nodes = 0;
    CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
    check(nodes == 1,
          fmt("the captured graph holds the GEMM kernel alone (%zu node(s)): no probe", nodes));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    p.poison(s);
    CHECK_CUDA(cudaGraphLaunch(exec, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
    return p.result();
  };
  GemmPlan first{};
  const std::vector<std::uint16_t> graph_bits = captured(first);
  check(!first.gpc_order, "a capture before the device was measured runs the identity order");
  if (!graph_bits.empty()) {
    const double rel = p.rel_error(graph_bits, 64);
    check(rel <= bound_for(p.k), fmt("the graph's D: rel %.2e <= %.2e", rel, bound_for(p.k)));
  }
  // The host time of the first launch outside the capture (it measures the device: the GPC probe
  // and this grid's placement) against the next one (looked up), reported.
  CHECK_CUDA(cudaStreamSynchronize(s));
  const auto t0 = std::chrono::steady_clock::now();
  const GemmPlan eager = launch(p, s, t);
  const auto t1 = std::chrono::steady_clock::now();
  CHECK_CUDA(cudaStreamSynchronize(s));
  const auto t2 = std::chrono::steady_clock::now();
  (void)launch(p, s, t);
  const auto t3 = std::chrono::steady_clock::now();
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::printf("INFO host time of gemm_tuned: %.3f ms the first time (measures), %.3f ms next\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t3 - t2).count());
  const std::vector<std::uint16_t> eager_bits = p.result();
  check(eager.gpc_order, "the first launch outside a capture measures and runs the GPC order");
  check(eager_bits == graph_bits, "D is the same bits in either order");
  GemmPlan second{};
  const std::vector<std::uint16_t> graph2_bits = captured(second);
  check(second.gpc_order, "a capture after the measurement records the GPC order");
  check(graph2_bits == eager_bits, "the second graph's D is the same bits");
  CHECK_CUDA(cudaStreamDestroy(s));
}

// 3: the probes.
void probe_test(int sms) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto g0 = Clock::now();
  const std::vector<int> groups = gemm::probe_sm_groups(nullptr);
  const auto g1 = Clock::now();
  check(static_cast<int>(groups.size()) == sms, "probe_sm_groups: one entry per SM");
  if (static_cast<int>(groups.size()) != sms) return;
  std::vector<int> size;
  int loose = 0;
  for (int g : groups) {
    if (g < 0) {
      ++loose;
      continue;
    }
    if (g >= static_cast<int>(size.size())) size.resize(static_cast<std::size_t>(g) + 1, 0);
    ++size[static_cast<std::size_t>(g)];
  }
  std::string sizes;
  for (int n : size)
    sizes += fmt(" %d", n);
  std::printf("INFO SM groups (clusters of 16): %zu of sizes%s; %d loose SMs\n", size.size(),
              sizes.c_str(), loose);
  check(size.size() >= 2, "the SMs form at least two groups (GPCs)");
  const std::uint32_t smem = 200 * 1024;  // one CTA per SM, as every GEMM configuration
  const int full = gemm::probe_max_clusters(2, smem);
  const auto p0 = Clock::now();
  const std::vector<int> wave = gemm::probe_placement(full, 2, smem, nullptr);
  const auto p1 = Clock::now();
  std::printf("INFO host time: probe_sm_groups %.3f ms, probe_placement (%d clusters) %.3f ms\n",
              ms(g0, g1), full, ms(p0, p1));
  const std::vector<int> cluster_group = gemm::cluster_groups(wave, 2, groups);
  check(full >= 1 && static_cast<int>(cluster_group.size()) == full,
        fmt("a wave of %d 2-CTA clusters: one CTA per SM, each cluster inside one group", full));
  if (cluster_group.empty()) return;
  std::string line;
  for (int c = 0; c < full; ++c)
    line += fmt(" %d:%d(%d,%d)", c, cluster_group[c], wave[2 * c], wave[2 * c + 1]);
  std::printf("INFO cluster:group(SMs):%s\n", line.c_str());
  // Smaller grids: each is a valid one-wave placement of its own (the library measures every
  // grid size: session 24 found a smaller grid not placed like the full wave's first clusters).
  for (const int n : {1, 8, 20, 33, 50, full - 1}) {
    if (n < 1 || n >= full) continue;
    const std::vector<int> part = gemm::probe_placement(n, 2, smem, nullptr);
    const bool valid = static_cast<int>(gemm::cluster_groups(part, 2, groups).size()) == n;
    int same = 0;
    for (int c = 0; c < n && valid; ++c)
      same += part[2 * c] == wave[2 * c] && part[2 * c + 1] == wave[2 * c + 1];
    check(valid, fmt("a launch of %d clusters: one CTA per SM, each cluster inside one group", n));
    std::printf("INFO a launch of %d clusters: %d of them where the full wave put them\n", n, same);
  }
  const std::vector<int> perm = gemm::gpc_worker_order(cluster_group, 8);
  std::set<int> seen(perm.begin(), perm.end());
  check(static_cast<int>(seen.size()) == full && *seen.begin() == 0 && *seen.rbegin() == full - 1,
        "the measured order is a permutation of the workers");
}

// 4: the plan's own launches, GPC order against the identity.
void plan_test(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
  Problem p(m, n, k, seed);
  const std::string name = fmt("%lldx%lldx%lld", static_cast<long long>(m),
                               static_cast<long long>(n), static_cast<long long>(k));
  GemmTuning t;
  const GemmPlan gpc = launch(p, nullptr, t);
  CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> gpc_bits = p.result();
  t.gpc_order = false;
  const GemmPlan id = launch(p, nullptr, t);
  CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> id_bits = p.result();
  std::printf("INFO %s: config %d, cluster %d, %d CTAs, %d stream-K tiles\n", name.c_str(),
              gpc.config, gpc.cluster_m, gpc.ctas, gpc.stream_k_tiles);
  check(gpc.gpc_order && !id.gpc_order,
        fmt("%s: the plan's launch runs the GPC order, and the identity when asked", name.c_str()));
  check(gpc_bits == id_bits, fmt("%s: D is the same bits in either order", name.c_str()));
  const double rel = p.rel_error(gpc_bits, 8);
  check(rel <= bound_for(k), fmt("%s: rel %.2e <= %.2e", name.c_str(), rel, bound_for(k)));
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  if (const int skip = tma::test::skip_unless_sm90("gpu_gemm_order", &prop)) return skip;
  std::printf("gpu_gemm_order: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  capture_test();  // first: it needs a cluster shape no launch has measured
  probe_test(prop.multiProcessorCount);
  plan_test(2048, 2048, 2048, 24002);
  plan_test(1024, 2112, 7168, 24003);
  std::printf("gpu_gemm_order: %d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
