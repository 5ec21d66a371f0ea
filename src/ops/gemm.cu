// tmakit ops: GEMM host entry points: argument checks, the choice of configuration, cluster and
// grid, the tensor maps, and the launch. The kernel is in gemm_kernel.cuh.
//
// Operand layouts: wgmma reads A and B either K-major or MN-major (its transpose immediates, for
// 16-bit types), so every layout is loaded as it is stored, without a transpose pass:
//   A row-major (m x k, k contiguous)    K-major:  TMA box {64 k, 64 m}  -> tnspA = 0
//   A column-major (m contiguous)        MN-major: TMA box {64 m, 64 k}  -> tnspA = 1
//   B column-major (k x n, k contiguous) K-major:  TMA box {64 k, 64 n}  -> tnspB = 0
//   B row-major (n contiguous)           MN-major: TMA box {64 n, 64 k}  -> tnspB = 1
// Each box is 64 x 128 B with SWIZZLE_128B, which is exactly the canonical 128B-swizzled layout
// wgmma reads (device/wgmma_desc.hpp proves it at compile time; tests/gemm checks it against the
// reference model). A tile width that is not a multiple of 64 (gemm_config_needs_k_major_b) loads
// its K-major B as one box of {64 k, block_n / cluster_m n}: the same layout, rows 128 B apart.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemm_edge.cuh"
#include "gemm_kernel.cuh"
#include "gemm_kernels.hpp"
#include "plan.hpp"
#include "tma/host/device_support.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/ops/gemm.hpp"

namespace tma::ops {
namespace detail::gemm {
namespace {

constexpr const char* kOp = "gemm";

// How many k-blocks longer than an even share the finisher's piece of a one-row split is
// (make_aligned_schedule). Chosen from session 34's traces (H100, gemm_trace, 128 x 4096 x 4096,
// 96 CTAs): a peer's flag came ~4.0k cycles after the finisher's k-loop ended, at ~740 cycles per
// k-block; with P = 3 pieces the finisher's extra d k-blocks end its k-loop d x 740 cycles later
// and its peers' ~d / 2 x 740 earlier, so the wait is gone at d ~ 4.0k / (1.5 x 740) ~ 3.6.
// Measured (H100, session 35, four rounds of tma-bench gemm --no-ordinary, builds alternating,
// docs/perf-log.md): 128 x 4096 x 4096 23.23-23.66 -> 22.98-23.15 us (+2.0% on the medians),
// 128 x 2112 x 7168 and 128 x 4096 x 11008 unchanged (+-0.5%, inside the rounds' spread); the
// aligned split without a lead as the old equal ranges; a lead of 8 1.5-4% slower on all three.
#ifndef TMA_GEMM_SPLIT_LEAD
#define TMA_GEMM_SPLIT_LEAD 4
#endif
constexpr std::int32_t kSplitFinisherLead = TMA_GEMM_SPLIT_LEAD;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(cat("tma::ops::gemm: ", what, " failed: ", cudaGetErrorName(e), " (",
                    cudaGetErrorString(e), ")"),
                0, static_cast<int>(e));
}

bool is_16bit_input(DataType t) {
  return t == DataType::kBFloat16 || t == DataType::kFloat16;
}

bool is_output_type(DataType t) {
  return t == DataType::kBFloat16 || t == DataType::kFloat16 || t == DataType::kFloat32;
}

struct Range {
  std::uintptr_t begin, end;  // [begin, end) in bytes
};

// The bytes a rows x cols matrix with leading dimension ld touches.
Range footprint(const void* p, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                MatrixLayout layout, int esize) {
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::int64_t outer = layout == MatrixLayout::kRowMajor ? rows : cols;
  const std::int64_t inner = layout == MatrixLayout::kRowMajor ? cols : rows;
  const auto elements = static_cast<std::uintptr_t>((outer - 1) * ld + inner);
  return {base, base + elements * static_cast<std::uintptr_t>(esize)};
}

bool overlaps(const Range& a, const Range& b) {
  return a.begin < b.end && b.begin < a.end;
}

std::string range_string(const Range& r) {
  return cat("[", reinterpret_cast<void*>(r.begin), ", ", reinterpret_cast<void*>(r.end), ")");
}

void check_extent(const char* name, std::int64_t v) {
  if (v < 1)
    fail(kOp, cat(name, " = ", v,
                  " is not >= 1: every GEMM extent must be >= 1; skip the call "
                  "for an empty product"));
  if (v > std::numeric_limits<std::int32_t>::max())
    fail(kOp, cat(name, " = ", v,
                  " exceeds 2^31 - 1 (TMA coordinates are signed 32-bit): split "
                  "the product along ",
                  name));
}

void check_pointer(const char* name, const void* p) {
  if (p == nullptr) fail(kOp, cat(name, " is null: pass a device pointer"));
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    fail(kOp, cat(name, " = ", p,
                  " is not 16-byte aligned (TMA's rule for the global address): "
                  "use an aligned allocation or offset"));
}

// `ld` of a matrix `what` whose rows (row-major) or columns (column-major) need `min_ld`
// elements of `esize` bytes.
void check_ld(const char* name, std::int64_t ld, std::int64_t min_ld, const char* min_name,
              const char* what, int esize) {
  if (ld < min_ld)
    fail(kOp, cat(name, " = ", ld, " is smaller than ", min_name, " = ", min_ld, " (", what,
                  "): ", name, " must be >= ", min_ld));
  const std::int64_t bytes = ld * esize;
  if (bytes % 16 != 0)
    fail(kOp,
         cat(name, " = ", ld, " elements x ", esize, " B = ", bytes,
             " B is not a multiple of 16 B (TMA's rule for row strides): pad the leading "
             "dimension to a multiple of ",
             16 / esize, " elements, e.g. ", (ld + 16 / esize - 1) / (16 / esize) * (16 / esize)));
  if (bytes >= (std::int64_t{1} << 40))
    fail(kOp, cat(name, " = ", ld, " elements = ", bytes,
                  " B reaches TMA's 2^40-byte stride limit: split the matrix"));
}

// Every check that needs no GPU, in the order a user would fix them.
void check_args(const GemmArgs& g, Path path, const GemmTuning& t) {
  check_extent("m", g.m);
  check_extent("n", g.n);
  check_extent("k", g.k);
  if (!is_16bit_input(g.a_dtype))
    fail(kOp, cat("a_dtype = ", to_string(g.a_dtype),
                  " is not supported: A and B must be bfloat16 or float16 (wgmma's 16-bit inputs "
                  "with fp32 accumulation); convert A first"));
  if (g.b_dtype != g.a_dtype)
    fail(kOp, cat("b_dtype = ", to_string(g.b_dtype), " but a_dtype = ", to_string(g.a_dtype),
                  ": A and B must have the same type; convert one of them"));
  if (!is_output_type(g.d_dtype))
    fail(kOp, cat("d_dtype = ", to_string(g.d_dtype),
                  " is not supported: D must be bfloat16, float16 or float32"));
  const bool with_c = g.beta != 0.0f;
  if (with_c && g.c_dtype != g.d_dtype)
    fail(kOp, cat("c_dtype = ", to_string(g.c_dtype), " but d_dtype = ", to_string(g.d_dtype),
                  " (beta = ", g.beta, "): C must have D's type; convert C or set beta = 0"));
  if (with_c && g.c == nullptr)
    fail(kOp, cat("c is null but beta = ", g.beta, ": pass C (m x n, row-major) or set beta = 0"));

  check_pointer("a", g.a);
  check_pointer("b", g.b);
  check_pointer("d", g.d);
  if (with_c) check_pointer("c", g.c);

  const int ab = element_bytes(g.a_dtype), cd = element_bytes(g.d_dtype);
  const bool a_row = g.a_layout == MatrixLayout::kRowMajor;
  const bool b_row = g.b_layout == MatrixLayout::kRowMajor;
  check_ld("lda", g.lda, a_row ? g.k : g.m, a_row ? "k" : "m",
           a_row ? "A is row-major m x k" : "A is column-major m x k", ab);
  check_ld("ldb", g.ldb, b_row ? g.n : g.k, b_row ? "n" : "k",
           b_row ? "B is row-major k x n" : "B is column-major k x n", ab);
  check_ld("ldd", g.ldd, g.n, "n", "D is row-major m x n", cd);
  if (with_c) check_ld("ldc", g.ldc, g.n, "n", "C is row-major m x n", cd);

  const Range a = footprint(g.a, g.m, g.k, g.lda, g.a_layout, ab);
  const Range b = footprint(g.b, g.k, g.n, g.ldb, g.b_layout, ab);
  const Range d = footprint(g.d, g.m, g.n, g.ldd, MatrixLayout::kRowMajor, cd);
  if (overlaps(d, a))
    fail(kOp, cat("d ", range_string(d), " overlaps a ", range_string(a),
                  ": D must not alias A (the kernel reads A while writing D); use a separate "
                  "output buffer"));
  if (overlaps(d, b))
    fail(kOp, cat("d ", range_string(d), " overlaps b ", range_string(b),
                  ": D must not alias B (the kernel reads B while writing D); use a separate "
                  "output buffer"));
  if (with_c) {
    const Range c = footprint(g.c, g.m, g.n, g.ldc, MatrixLayout::kRowMajor, cd);
    const bool same = g.c == g.d && g.ldc == g.ldd;
    if (!same && overlaps(c, d))
      fail(kOp, cat("c ", range_string(c), " (ldc = ", g.ldc, ") overlaps d ", range_string(d),
                    " (ldd = ", g.ldd,
                    ") without being the same matrix: pass c == d with ldc == "
                    "ldd for an in-place update, or disjoint buffers"));
  }

  if (t.config < -1 || t.config >= kNumGemmConfigs)
    fail(kOp, cat("tuning.config = ", t.config, " is outside -1..", kNumGemmConfigs - 1,
                  " (kGemmConfigs): use -1 to let gemm() choose"));
  if (t.cluster_m != 0 && t.cluster_m != 1 && t.cluster_m != 2 && t.cluster_m != 4)
    fail(kOp, cat("tuning.cluster_m = ", t.cluster_m,
                  " is not 0 (choose), 1, 2 or 4: the kernel multicasts B within clusters of 1, "
                  "2 or 4 CTAs along M"));
  if (t.cluster_m > 1 && path != Path::kTma)
    fail(kOp, cat("tuning.cluster_m = ", t.cluster_m,
                  " needs Path::kTma: the ordinary path has no multicast; use cluster_m = 0 or 1"));
  if (t.raster_group < 0)
    fail(kOp, cat("tuning.raster_group = ", t.raster_group,
                  " is negative: use 0 (choose) or a group of >= 1 tile rows"));
  if (t.max_ctas < 0)
    fail(kOp, cat("tuning.max_ctas = ", t.max_ctas, " is negative: use 0 (no cap) or >= 1"));
  if (t.config >= 0 && kGemmConfigs[t.config].swap_ab) {
    // What a swapped-operand tile needs (gemm_config_swap_supported), each unmet need named.
    std::string unmet;
    const auto need = [&](bool ok, const std::string& what) {
      if (!ok) unmet += (unmet.empty() ? "" : ", ") + what;
    };
    need(g.a_layout == MatrixLayout::kRowMajor, "A row-major (A is column-major)");
    need(g.b_layout == MatrixLayout::kColMajor, "B column-major (B is row-major)");
    need(g.d_dtype == g.a_dtype, "D in the inputs' type");
    need(g.alpha == 1.0f, cat("alpha = 1 (alpha = ", g.alpha, ")"));
    need(g.beta == 0.0f, cat("beta = 0 (beta = ", g.beta, ")"));
    need(t.stream_k != 2, "no split (tuning.stream_k = 2)");
    need(path == Path::kTma, "Path::kTma");
    if (!unmet.empty())
      fail(kOp, cat("tuning.config = ", t.config,
                    " (256 x 64 tiles with swapped operands) runs only with A row-major, B "
                    "column-major, D in the inputs' type, alpha = 1, beta = 0, data-parallel "
                    "tiles and Path::kTma; this call lacks ",
                    unmet, ": use another configuration or -1"));
  }
  if (t.config >= 0 && !kGemmConfigs[t.config].swap_ab &&
      gemm_config_needs_k_major_b(kGemmConfigs[t.config]) && g.b_layout != MatrixLayout::kColMajor)
    fail(kOp, cat("tuning.config = ", t.config, " (128 x ", kGemmConfigs[t.config].block_n,
                  " tiles) needs B column-major (K-major tiles: block_n is not a multiple of the "
                  "64-column atoms a row-major B is loaded in); use another configuration or -1"));
  if (t.config >= 0 && gemm_config_tma_only(kGemmConfigs[t.config]) && path != Path::kTma)
    fail(kOp, cat("tuning.config = ", t.config, " (128 x ", kGemmConfigs[t.config].block_n,
                  " ping-pong tiles) needs Path::kTma: the ordinary path has no kernel for it "
                  "(its epilogue does not fit the registers left next to 176 accumulators); use "
                  "another configuration or -1"));
  if (t.stream_k < 0 || t.stream_k > 2)
    fail(kOp, cat("tuning.stream_k = ", t.stream_k,
                  " is not 0 (choose), 1 (off: data-parallel tiles) or 2 (on: split the last "
                  "waves along K)"));

  if ((g.workspace == nullptr) != (g.workspace_bytes == 0))
    fail(kOp, cat("workspace = ", g.workspace, " with workspace_bytes = ", g.workspace_bytes,
                  ": pass both (a buffer of at least gemm_workspace_bytes() bytes) or neither "
                  "(gemm allocates one stream-ordered when it splits)"));
  if (g.workspace != nullptr) {
    if (reinterpret_cast<std::uintptr_t>(g.workspace) % 16 != 0)
      fail(kOp, cat("workspace = ", g.workspace,
                    " is not 16-byte aligned (the partial tiles are stored as float4): use an "
                    "aligned allocation or offset"));
    const auto base = reinterpret_cast<std::uintptr_t>(g.workspace);
    const Range w{base, base + g.workspace_bytes};
    // C only when it is read (beta != 0); otherwise its range stands in for D's.
    const Range c = with_c ? footprint(g.c, g.m, g.n, g.ldc, MatrixLayout::kRowMajor, cd) : d;
    const std::pair<const char*, Range> others[] = {{"a", a}, {"b", b}, {"d", d}, {"c", c}};
    for (const auto& [name, range] : others)
      if (overlaps(w, range))
        fail(kOp, cat("workspace ", range_string(w), " overlaps ", name, " ", range_string(range),
                      ": the workspace is scratch the kernel writes; give it its own buffer"));
  }
}

// The tiled-mode map of a 16-bit operand, loaded in 64 x 64 atoms (SwizzledTile128; MN-major), or
// (K-major) in boxes of 64 k x `rows` rows of MN: A's kBlockM rows, B's block_n / cluster_m.
TensorMapSpec operand_spec(DataType dt, const void* p, MatrixMajor major, std::int64_t mn,
                           std::int64_t k, std::int64_t ld, int rows = 64) {
  TensorMapSpec s;
  s.dtype = dt;
  s.rank = 2;
  s.address = p;
  const bool k_major = major == MatrixMajor::kK;
  s.dims_inner_first = {static_cast<std::uint64_t>(k_major ? k : mn),
                        static_cast<std::uint64_t>(k_major ? mn : k), 0, 0, 0};
  s.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(ld) * 2, 0, 0, 0};
  s.box_inner_first = {64, static_cast<std::uint32_t>(rows), 0, 0, 0};
  s.swizzle = Swizzle::k128B;
  s.l2_promotion = L2Promotion::k256B;
  return s;
}

// The map of C or D (row-major m x n): boxes of one 128 B swizzle row x 64 rows (the epilogue's
// chunks), or of `cols` columns x 64 rows (a tile's last, narrower chunk; rows padded to the
// swizzle span in shared memory).
TensorMapSpec output_spec(DataType dt, const void* p, std::int64_t m, std::int64_t n,
                          std::int64_t ld, int cols = 0) {
  const int e = element_bytes(dt);
  TensorMapSpec s;
  s.dtype = dt;
  s.rank = 2;
  s.address = p;
  s.dims_inner_first = {static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m), 0, 0, 0};
  s.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(ld) * e, 0, 0, 0};
  s.box_inner_first = {static_cast<std::uint32_t>(cols > 0 ? cols : 128 / e), 64, 0, 0, 0};
  s.swizzle = Swizzle::k128B;
  return s;
}

std::uint32_t smem_bytes_for(int config) {
  return with_config(config, [](auto cfg) { return Config<decltype(cfg)::value>::kSmemBytes; });
}

// One cluster of the GEMM's launch shape (the caller sets the grid); attr: room for 2. pdl:
// programmatic dependent launch (GemmTuning::pdl; gemm_kernel.cuh), the second attribute.
cudaLaunchConfig_t launch_config(int cluster_m, std::uint32_t smem, cudaStream_t stream,
                                 cudaLaunchAttribute* attr, bool pdl) {
  cudaLaunchConfig_t cfg = cluster_config(1, cluster_m, kThreads, smem, stream, attr);
  if (pdl) {
    attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[1].val.programmaticStreamSerializationAllowed = 1;
    cfg.numAttrs = 2;
  }
  return cfg;
}

// compute() for `key`, asked once per key for the process's life and kept (facts of a device
// and a launch shape that do not change while it runs), thread-safe: the first caller computes
// under the lock, so two threads never compute (or create) one key's answer twice. Each call
// site's lambda type gives it a cache of its own. Nothing is kept when compute() throws.
template <class Key, class Compute>
auto once_per_key(const Key& key, Compute compute) -> decltype(compute()) {
  using Value = decltype(compute());
  static std::mutex mutex;
  static std::map<Key, Value> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = known.find(key);
  if (found != known.end()) return found->second;
  return known.emplace(key, compute()).first->second;
}

// How many clusters of `cluster_m` CTAs of `kernel` can be resident at once (clusters live inside
// one GPC, so this can be fewer than SMs / cluster_m): the persistent grid's limit. The answer is
// a property of the device and the launch shape, so it is asked once per (device, kernel, shared
// memory, cluster size) and kept for the process's life (the occupancy query cost ~0.6-0.7 us of
// a ~9-12 us launch: bench/experiments/gemm_host, docs/perf-log.md session 26). The kernel's
// shared-memory attribute is still set on every launch (~0.5 us): a cudaDeviceReset drops it,
// and a launch without it would fail.
int max_clusters(KernelFn kernel, std::uint32_t smem, int cluster_m, int device) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem)),
             "cudaFuncSetAttribute(max dynamic shared memory)");
  const std::tuple<int, const void*, std::uint32_t, int> key{
      device, reinterpret_cast<const void*>(kernel), smem, cluster_m};
  return once_per_key(key, [&] {
    cudaLaunchAttribute attr[2];
    const cudaLaunchConfig_t cfg = launch_config(cluster_m, smem, nullptr, attr, false);
    int clusters = 0;
    check_cuda(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg),
               "cudaOccupancyMaxActiveClusters");
    if (clusters < 1)
      throw Error(cat("tma::ops::gemm: no cluster of ", cluster_m, " CTAs with ", kThreads,
                      " threads and ", smem,
                      " B of shared memory fits on this GPU (is another context holding its "
                      "shared memory, or is it not an sm_90 GPU?)"),
                  0);
    return clusters;
  });
}

// The device's compute capability, SM count and peak DRAM bandwidth, asked once per device
// (immutable).
struct DeviceInfo {
  int cc_major = 0, cc_minor = 0, sms = 0;
  double memory_gbps = 0;  // peak_memory_gbps (PlanRequest::memory_gbps)
};
DeviceInfo device_info(int dev) {
  return once_per_key(dev, [dev] {
    DeviceInfo info;
    check_cuda(cudaDeviceGetAttribute(&info.cc_major, cudaDevAttrComputeCapabilityMajor, dev),
               "compute capability query");
    check_cuda(cudaDeviceGetAttribute(&info.cc_minor, cudaDevAttrComputeCapabilityMinor, dev),
               "compute capability query");
    check_cuda(cudaDeviceGetAttribute(&info.sms, cudaDevAttrMultiProcessorCount, dev),
               "SM count query");
    int mem_clock_khz = 0, bus_bits = 0;
    check_cuda(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev),
               "memory clock query");
    check_cuda(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev),
               "memory bus width query");
    info.memory_gbps = peak_memory_gbps(mem_clock_khz, bus_bits);
    return info;
  });
}

// Everything gemm_tuned decides before it launches (gemm_workspace_bytes stops here).
struct Resolved {
  Params p;
  int config;
  int cluster_m;
  std::int64_t n_main;  // D's columns the main kernel computes (0: none, only the edge kernel)
  KernelFn kernel;      // null when n_main == 0
  bool plain;           // kernel is a plain one (gemm_kernel.cuh: kPlain); false when null
  int workers;          // persistent clusters
  std::uint64_t workspace_bytes;  // 0 unless the schedule splits
};

// The cluster's workers: all resident clusters, at most one per tile unless the tiles are split
// (then every worker gets a share of the iterations), capped by tuning.max_ctas.
int workers_for(int clusters, std::int64_t tiles, bool split, int max_ctas, int cluster_m) {
  std::int64_t n = split ? clusters : std::min<std::int64_t>(clusters, tiles);
  if (max_ctas > 0) n = std::max<std::int64_t>(1, std::min<std::int64_t>(n, max_ctas / cluster_m));
  return static_cast<int>(n);
}

#if TMA_GEMM_TRACE
// bench/experiments/gemm_trace.cu: where the next launches stamp their trace (trace_slot).
unsigned long long* g_trace = nullptr;
#endif

// What the plan (gemm_config.hpp: choose_plan) is asked for these arguments and this tuning.
PlanRequest plan_request(const GemmArgs& g, Path path, const GemmTuning& tuning,
                         const DeviceInfo& info) {
  PlanRequest request;
  request.memory_gbps = info.memory_gbps;
  request.config = tuning.config;
  request.cluster_m = tuning.cluster_m;
  request.stream_k = tuning.stream_k;
  request.may_cluster = path == Path::kTma;
  request.k_major_b = g.b_layout == MatrixLayout::kColMajor;
  request.k_major_a = g.a_layout == MatrixLayout::kRowMajor;
  request.plain = g.d_dtype == g.a_dtype && g.alpha == 1.0f && g.beta == 0.0f;
  return request;
}

Resolved resolve(const GemmArgs& g, Path path, const GemmTuning& tuning) {
  check_args(g, path, tuning);
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  const DeviceInfo info = device_info(dev);
  const int cc_major = info.cc_major, cc_minor = info.cc_minor, sms = info.sms;
  if (cc_major != 9 || cc_minor != 0)
    throw Error(
        cat("tma::ops::gemm: device ", dev, " has compute capability ", cc_major, ".", cc_minor,
            "; the GEMM kernels are built for sm_90a (wgmma, setmaxnreg) and "
            "run only on compute capability 9.0 (H100 / H200)"),
        0);

  Resolved r{};
  // The TMA path's kernel computes D's first n_main columns, which end on a 16-byte boundary of
  // each row (its TMA stores write whole 16-byte chunks: tma_store_columns), and the edge kernel
  // the rest; the ordinary path's stores are bounds-checked element by element at the edge, so
  // its kernel computes all n columns.
  const int cd = element_bytes(g.d_dtype);
  r.n_main = path == Path::kTma ? tma_store_columns(g.n, cd) : g.n;
  // Configuration, cluster and split together (gemm_config.hpp: choose_plan), estimated with one
  // CTA per SM; the launch below sizes the grid by the real occupancy.
  const GemmChoice choice =
      choose_plan(g.m, r.n_main, g.k, sms, plan_request(g, path, tuning, info));
  r.config = choice.config;
  const int block_n = kGemmConfigs[r.config].block_n;
  Params& p = r.p;
#if TMA_GEMM_TRACE
  p.trace = g_trace;
#endif
  p.m = static_cast<std::int32_t>(g.m);
  p.n = static_cast<std::int32_t>(r.n_main);
  p.k = static_cast<std::int32_t>(g.k);
  p.alpha = g.alpha;
  p.beta = g.beta;
  const int block_m = gemm_config_block_m(kGemmConfigs[r.config]);
  p.tiles_m = static_cast<std::int32_t>((g.m + block_m - 1) / block_m);
  p.tiles_n = static_cast<std::int32_t>((r.n_main + block_n - 1) / block_n);
  p.k_blocks = static_cast<std::int32_t>((g.k + kBlockK - 1) / kBlockK);
  const std::int32_t raster_group =
      tuning.raster_group > 0 ? tuning.raster_group : kDefaultRasterGroup;
  p.out = g.d_dtype == DataType::kBFloat16  ? OutKind::kBF16
          : g.d_dtype == DataType::kFloat16 ? OutKind::kF16
                                            : OutKind::kF32;
  const int ab = element_bytes(g.a_dtype);
  p.a = static_cast<const unsigned char*>(g.a);
  p.b = static_cast<const unsigned char*>(g.b);
  p.c = static_cast<const unsigned char*>(g.beta != 0.0f ? g.c : g.d);
  p.d = static_cast<unsigned char*>(g.d);
  p.lda_bytes = g.lda * ab;
  p.ldb_bytes = g.ldb * ab;
  p.ldc_bytes = (g.beta != 0.0f ? g.ldc : g.ldd) * cd;
  p.ldd_bytes = g.ldd * cd;

  const auto cluster_tiles_for = [&](int cluster_m) {
    const std::int64_t rows = (p.tiles_m + cluster_m - 1) / cluster_m;
    const std::int64_t tiles = rows * p.tiles_n;
    if (tiles > std::numeric_limits<std::int32_t>::max())
      fail(kOp, cat("m = ", g.m, " x n = ", g.n, " makes ", tiles,
                    " output tiles, more than the kernel's 2^31 - 1: split the product"));
    return tiles;
  };
  if (r.n_main == 0) {
    // No main kernel (a row of D has fewer than 16 bytes): the edge kernel computes all of D.
    r.cluster_m = 1;
    p.cluster_tiles = p.tiles_m * p.tiles_n;
    p.raster = make_raster(p.tiles_m, p.tiles_n, raster_group);
    p.sched = make_schedule(p.cluster_tiles, p.k_blocks, 1, false);
    return r;
  }
  const bool f16 = g.a_dtype == DataType::kFloat16;
  const MatrixMajor a_major =
      g.a_layout == MatrixLayout::kRowMajor ? MatrixMajor::kK : MatrixMajor::kMN;
  const MatrixMajor b_major =
      g.b_layout == MatrixLayout::kColMajor ? MatrixMajor::kK : MatrixMajor::kMN;
  // The plain kernels (gemm_kernel.cuh: kPlain) for D = A B in the inputs' type, the kernels with
  // every epilogue for anything else.
  r.plain = g.d_dtype == g.a_dtype && g.alpha == 1.0f && g.beta == 0.0f;
  if (path == Path::kTma) {
    r.kernel = r.plain ? kernel_for<true, true>(r.config, f16, a_major, b_major)
                       : kernel_for<true, false>(r.config, f16, a_major, b_major);
  } else {
    r.kernel = r.plain ? kernel_for<false, true>(r.config, f16, a_major, b_major)
                       : kernel_for<false, false>(r.config, f16, a_major, b_major);
  }
  if (r.kernel == nullptr)  // unreachable: check_args and choose_plan keep these apart
    throw Error(cat("tma::ops::gemm: internal error: configuration ", r.config,
                    " has no kernel for these operand layouts, this epilogue and path"),
                0);
  const std::uint32_t smem = smem_bytes_for(r.config);

  r.cluster_m = choice.cluster_m;
  p.cluster_tiles = static_cast<std::int32_t>(cluster_tiles_for(r.cluster_m));
  p.raster = make_raster((p.tiles_m + r.cluster_m - 1) / r.cluster_m, p.tiles_n, raster_group);
  const int clusters = max_clusters(r.kernel, smem, r.cluster_m, dev);
  // A split of one tile row over the whole GPU runs fewer workers, so that each finisher has
  // fewer pieces to add (gemm_config.hpp: one_row_split_workers); a caller's max_ctas is taken as
  // it is.
  const bool one_row_split = (p.tiles_m + r.cluster_m - 1) / r.cluster_m == 1 &&
                             path == Path::kTma && tuning.max_ctas == 0;
  int split_workers = workers_for(clusters, p.cluster_tiles, true, tuning.max_ctas, r.cluster_m);
  if (one_row_split) split_workers = one_row_split_workers(split_workers, p.cluster_tiles);
  bool split = choice.split;
  if (split && !stream_k_fits(p.cluster_tiles, p.k_blocks, split_workers)) {
    if (tuning.stream_k == 2)
      fail(kOp,
           cat("tuning.stream_k = 2 but the split tiles x ", p.k_blocks, " k-blocks (k = ", g.k,
               ") reach 2^31 iterations, beyond the kernel's 32-bit schedule: use "
               "stream_k = 0 or 1, or split the product along k"));
    split = false;
  }
  r.workers = split ? split_workers
                    : workers_for(clusters, p.cluster_tiles, false, tuning.max_ctas, r.cluster_m);
  // The one-row split with its pieces aligned to the tiles (gemm_schedule.hpp:
  // make_aligned_schedule): the finisher's piece kSplitFinisherLead k-blocks longer.
  const std::int32_t pieces = split && p.cluster_tiles > 0 ? r.workers / p.cluster_tiles : 0;
  if (split && one_row_split && pieces >= 2 && pieces * p.cluster_tiles == r.workers &&
      p.k_blocks >= 2 * pieces) {
    p.sched = make_aligned_schedule(p.cluster_tiles, p.k_blocks, pieces, kSplitFinisherLead);
  } else {
    p.sched = make_schedule(p.cluster_tiles, p.k_blocks, r.workers, split);
  }
  // One slot and two flags per CTA (gemm_schedule.hpp: cta_slot).
  if (split) r.workspace_bytes = workspace_bytes(r.workers * r.cluster_m, kBlockM, block_n);
  return r;
}

// The memory pool that launches without a caller's workspace draw theirs from: one per device,
// tmakit's own (the device's default pool and its settings are left alone), created on first use
// and kept for the process's life. Its release threshold is the maximum, so a freed workspace stays
// mapped for the next launch: with the default pool's threshold of 0 every synchronization handed
// the memory back to the driver and the next split launch mapped it again (back-to-back loops ran
// 3-7 us per split launch slower than with a caller's workspace: docs/perf-log.md, session 15).
cudaMemPool_t workspace_pool() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return once_per_key(device, [device] {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    check_cuda(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate(stream-K workspace pool)");
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
               "cudaMemPoolSetAttribute(release threshold)");
    return pool;
  });
}

// A stream-ordered allocation freed (stream-ordered) when it goes out of scope, also when a
// launch in between throws.
struct AsyncBuffer {
  void* p = nullptr;
  cudaStream_t stream = nullptr;
  AsyncBuffer() = default;
  AsyncBuffer(const AsyncBuffer&) = delete;
  AsyncBuffer& operator=(const AsyncBuffer&) = delete;
  ~AsyncBuffer() {
    if (p != nullptr) cudaFreeAsync(p, stream);
  }
};

// The edge kernel for D's columns [col0, g.n) (fewer than kMaxEdgeColumns), on `stream`.
void launch_edge(const GemmArgs& g, std::int64_t col0, cudaStream_t stream) {
  const bool a_row = g.a_layout == MatrixLayout::kRowMajor;
  const bool b_row = g.b_layout == MatrixLayout::kRowMajor;
  EdgeParams e{};
  e.a = g.a;
  e.b = g.b;
  e.c = g.beta != 0.0f ? g.c : nullptr;
  e.d = g.d;
  e.a_row = a_row ? g.lda : 1;
  e.a_k = a_row ? 1 : g.lda;
  e.b_k = b_row ? g.ldb : 1;
  e.b_col = b_row ? 1 : g.ldb;
  e.ldc = g.ldc;
  e.ldd = g.ldd;
  e.m = static_cast<std::int32_t>(g.m);
  e.k = static_cast<std::int32_t>(g.k);
  e.col0 = static_cast<std::int32_t>(col0);
  e.cols = static_cast<std::int32_t>(g.n - col0);
  e.alpha = g.alpha;
  e.beta = g.beta;
  e.a_row_major = a_row;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>((g.m + kEdgeRows - 1) / kEdgeRows));
  cfg.blockDim = dim3(kEdgeThreads);
  cfg.stream = stream;
  const auto run = [&](auto in, auto out) {
    using In = decltype(in);
    using Out = decltype(out);
    check_cuda(cudaLaunchKernelEx(&cfg, gemm_edge_kernel<In, Out>, e),
               "launching gemm_edge_kernel");
  };
  const auto with_out = [&](auto in) {
    switch (g.d_dtype) {
      case DataType::kBFloat16:
        return run(in, __nv_bfloat16{});
      case DataType::kFloat16:
        return run(in, __half{});
      default:
        return run(in, float{});
    }
  };
  if (g.a_dtype == DataType::kFloat16) {
    with_out(__half{});
  } else {
    with_out(__nv_bfloat16{});
  }
}

// The stream-K flag tag of the next launch that splits (gemm_schedule.hpp: flag_epoch). The
// counter starts at a random value, so that two processes sharing memory (or a buffer handed from
// one to the other) do not repeat each other's tags.
std::uint64_t next_flag_epoch() {
  static std::atomic<std::uint64_t> counter{
      (std::uint64_t{std::random_device{}()} << 32) ^ std::uint64_t{std::random_device{}()} ^
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  for (;;) {
    const std::uint64_t e = flag_epoch(counter.fetch_add(1, std::memory_order_relaxed));
    if (e != 0 && e != ~std::uint64_t{0}) return e;
  }
}

}  // namespace
#if TMA_GEMM_TRACE
void set_trace(unsigned long long* buffer) {
  g_trace = buffer;
}
#endif
}  // namespace detail::gemm

void gemm_tuned(const GemmArgs& g, cudaStream_t stream, Path path, const GemmTuning& tuning,
                GemmPlan* plan) {
  namespace d = detail::gemm;
  using detail::cat;
  d::Resolved r = d::resolve(g, path, tuning);
  d::Params& p = r.p;
  int ctas = 0;  // no main kernel when a row of D has fewer than 16 bytes (n_main == 0)
  bool gpc_order = false;
  d::AsyncBuffer own;
  if (r.n_main > 0) {
    // a, b, c, d, c's and d's last-chunk maps; unused (zeros) on the ordinary path.
    TensorMap maps[6]{};
    if (path == Path::kTma) {
      const MatrixMajor a_major =
          g.a_layout == MatrixLayout::kRowMajor ? MatrixMajor::kK : MatrixMajor::kMN;
      const MatrixMajor b_major =
          g.b_layout == MatrixLayout::kColMajor ? MatrixMajor::kK : MatrixMajor::kMN;
      const int block_n = kGemmConfigs[r.config].block_n;
      // K-major: one box of the CTA's rows per k-block; MN-major: 64 x 64 atoms (produce_tma).
      const int a_rows =
          a_major == MatrixMajor::kK ? gemm_config_block_m(kGemmConfigs[r.config]) : 64;
      const int b_rows = b_major == MatrixMajor::kK ? d::row_box_rows(block_n, r.cluster_m) : 64;
      maps[0] = make_tensor_map(d::operand_spec(g.a_dtype, g.a, a_major, g.m, g.k, g.lda, a_rows));
      maps[1] = make_tensor_map(d::operand_spec(g.b_dtype, g.b, b_major, g.n, g.k, g.ldb, b_rows));
      maps[3] = make_tensor_map(d::output_spec(g.d_dtype, g.d, g.m, r.n_main, g.ldd));
      // C is only read: its map keeps all n columns (the loads past n_main are discarded).
      maps[2] = g.beta != 0.0f ? make_tensor_map(d::output_spec(g.c_dtype, g.c, g.m, g.n, g.ldc))
                               : maps[3];
      const int tail = d::tail_columns(block_n, element_bytes(g.d_dtype));
      maps[5] = tail > 0
                    ? make_tensor_map(d::output_spec(g.d_dtype, g.d, g.m, r.n_main, g.ldd, tail))
                    : maps[3];
      maps[4] = tail > 0 && g.beta != 0.0f
                    ? make_tensor_map(d::output_spec(g.c_dtype, g.c, g.m, g.n, g.ldc, tail))
                : tail > 0 ? maps[5]
                           : maps[2];
    }
    if (r.workspace_bytes > 0) {
      void* ws = g.workspace;
      if (ws == nullptr) {
        own.stream = stream;
        d::check_cuda(
            cudaMallocFromPoolAsync(&own.p, r.workspace_bytes, d::workspace_pool(), stream),
            "cudaMallocFromPoolAsync(stream-K workspace; pass GemmArgs::workspace to avoid it)");
        ws = own.p;
      } else if (g.workspace_bytes < r.workspace_bytes) {
        detail::fail(d::kOp,
                     cat("workspace_bytes = ", g.workspace_bytes, " but this launch splits ",
                         p.sched.sk_tiles, " tiles along K over ", r.workers * r.cluster_m,
                         " CTAs and needs ", r.workspace_bytes,
                         " B: pass gemm_workspace_bytes(args, path, tuning) bytes (or no "
                         "workspace: gemm allocates one)"));
      }
      auto* bytes = static_cast<unsigned char*>(ws);
      const std::uint64_t flag_bytes = d::workspace_flag_bytes(r.workers * r.cluster_m);
      p.sk_flags = reinterpret_cast<std::uint64_t*>(bytes);
      p.sk_slots = reinterpret_cast<float*>(bytes + flag_bytes);
      p.sk_epoch = d::next_flag_epoch();  // no memset of the flags: gemm_schedule.hpp
    }
    const std::uint32_t smem = d::smem_bytes_for(r.config);
    // Any permutation is correct; the GPC-aware one is faster (gemm_order.hpp).
    const int classes = static_cast<int>(p.raster.rows.d);
    if (path == Path::kTma && tuning.gpc_order) {
      // The identity where it returns false.
      gpc_order = d::worker_order(p.worker_of, r.workers, r.cluster_m, smem, classes, stream);
    } else {
      d::identity_order(p.worker_of);
    }
    for (int c = 0; c < d::kWorkerMap; ++c) {
      p.first_tile[c] = c < r.workers
                            ? d::first_tile_of(p.sched, p.raster, p.worker_of[c], r.cluster_m)
                            : d::kNoFirstTile;
    }
    cudaLaunchAttribute attr[2];
    cudaLaunchConfig_t cfg = d::launch_config(r.cluster_m, smem, stream, attr, tuning.pdl);
    ctas = r.workers * r.cluster_m;
    cfg.gridDim = dim3(static_cast<unsigned>(ctas));
    d::check_cuda(
        cudaLaunchKernelEx(&cfg, r.kernel, maps[0], maps[1], maps[2], maps[3], maps[4], maps[5], p),
        "launching gemm_kernel");
  }
  // Same stream, after the main kernel; the two write disjoint columns of D. In place (C == D),
  // the main kernel only reads the edge columns, so the edge kernel still finds C there.
  if (r.n_main < g.n) d::launch_edge(g, r.n_main, stream);
  if (plan != nullptr)
    *plan = GemmPlan{r.config,
                     r.cluster_m,
                     static_cast<int>(p.raster.rows.d),
                     ctas,
                     static_cast<int>(g.n - r.n_main),
                     p.sched.sk_tiles,
                     static_cast<std::size_t>(r.workspace_bytes),
                     gpc_order,
                     r.plain};
}

std::size_t gemm_workspace_bytes(const GemmArgs& args, Path path, const GemmTuning& tuning) {
  return static_cast<std::size_t>(detail::gemm::resolve(args, path, tuning).workspace_bytes);
}

std::vector<GemmTuning> gemm_candidates(const GemmArgs& args, Path path, int max_count) {
  namespace d = detail::gemm;
  if (max_count < 1)
    detail::fail("gemm_candidates",
                 detail::cat("max_count = ", max_count,
                             " asks for no plan: pass 1 or more (tma-bench times 8)"));
  // The plan itself, resolved as gemm() resolves it (this checks the arguments and the device).
  const d::Resolved plan = d::resolve(args, path, GemmTuning{});
  const auto tuning_of = [](int config, int cluster_m, bool split) {
    GemmTuning t;
    t.config = config;
    t.cluster_m = cluster_m;
    t.stream_k = split ? 2 : 1;
    return t;
  };
  std::vector<GemmTuning> out;
  if (plan.n_main == 0) {
    // No main kernel (D's rows are under 16 bytes): the edge kernel computes D, nothing to choose.
    out.push_back(GemmTuning{});
    return out;
  }
  const bool plan_split = plan.p.sched.sk_tiles > 0;
  out.push_back(tuning_of(plan.config, plan.cluster_m, plan_split));
  int dev = 0;
  d::check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  const d::DeviceInfo info = d::device_info(dev);
  const std::vector<d::GemmChoice> choices =
      d::candidate_plans(args.m, plan.n_main, args.k, info.sms,
                         d::plan_request(args, path, GemmTuning{}, info), kNumGemmConfigs * 2 + 1);
  // Each alternative as gemm_tuned resolves it: one it refuses for this launch (a split that
  // does not fit the real worker count) is left out, one that resolves to a plan already listed
  // too.
  std::vector<std::tuple<int, int, bool>> seen{{plan.config, plan.cluster_m, plan_split}};
  for (std::size_t i = 1; i < choices.size() && static_cast<int>(out.size()) < max_count; ++i) {
    const GemmTuning t = tuning_of(choices[i].config, choices[i].cluster_m, choices[i].split);
    d::Resolved r;
    try {
      r = d::resolve(args, path, t);
    } catch (const Error&) {
      continue;
    }
    const std::tuple<int, int, bool> key{r.config, r.cluster_m, r.p.sched.sk_tiles > 0};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(t);
  }
  return out;
}

void gemm(const GemmArgs& args, cudaStream_t stream, Path path) {
  gemm_tuned(args, stream, path, GemmTuning{}, nullptr);
}

}  // namespace tma::ops
