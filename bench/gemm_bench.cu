// gemm-bench: times tma::ops::gemm (TMA path and ordinary-loads path) against cuBLAS (cublasLt,
// best of its heuristic's algorithms) on the same buffers in the same run, bf16 in and out, fp32
// accumulation.
//
//   gemm-bench [--quick] [--filter S] [--layout rc|rr|cr|cc] [--sweep] [--reps N] [--warmup N]
//              [--json FILE] [--seed N] [--device N] [--list]
//
// Shapes: squares 1024 .. 16384 and LLM projections, M in {128, 512, 1024, 2048, 4096, 8192,
// 16384} x (N, K) in {(4096, 4096), (11008, 4096), (4096, 11008), (2112, 7168), (7168, 2048),
// (28672, 8192)}. --layout: A row/column-major, B row/column-major (default rc: A row-major,
// B column-major, i.e. X W^T with W [N, K] as nn.Linear stores it; both operands K-major).
// --sweep also times every TMA configuration x cluster size.
//
// Policy (STYLE.md, like tma-bench): random non-zero inputs; each implementation verified once
// (output poisoned with NaN bytes: every element must be written; 1024 sampled elements within
// 8e-3 relative (bf16 output rounding 2^-8 plus accumulation) of an fp64 dot product of the same
// inputs) before it is timed; CUDA events around each run, --warmup untimed runs, the median of
// --reps (>= 20) runs; buffer sets rotated so that consecutive runs touch > 3x the L2, or the L2
// flushed (a 2x-L2 memset, outside the events) when they do not fit; runs queued behind a spin
// kernel so the events time the GPU, not the host. TFLOP/s = 2 M N K / median time.
//
// Output: one table row per case (TFLOP/s of cuBLAS, TMA, ordinary; TMA / cuBLAS; TMA /
// ordinary); --json writes the record (tma-bench's "gpu" object: name, clocks, driver, CUDA
// version). Exit: 0 all verified, 1 a verification failure or error, 2 bad command line,
// 77 no usable GPU.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "json.hpp"
#include "machine.hpp"
#include "tma/host/device_support.hpp"
#include "tma/host/error.hpp"
#include "tma/ops/gemm.hpp"

namespace {

using tma::DataType;
using tma::bench::JsonWriter;
using tma::ops::GemmArgs;
using tma::ops::MatrixLayout;
using tma::ops::Path;

constexpr int kSchema = 1;
constexpr int kRotationFactor = 3;  // as tma-bench (tools/tma_bench/timing.hpp)
constexpr int kFlushFactor = 2;
constexpr std::size_t kMemoryMargin = std::size_t{512} << 20;
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLASLt workspace
constexpr int kHeuristicAlgos = 8;  // algorithms asked of cublasLt's heuristic, each timed
constexpr int kAlgoTrialReps = 5;   // runs per algorithm while choosing
constexpr int kSamples = 1024;      // verified elements per implementation
constexpr double kVerifyBound = 8e-3;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Failure(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                  cudaGetErrorString(e) + ")");
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Failure(std::string(what) + " failed: cublasStatus " +
                  std::to_string(static_cast<int>(s)));
}

// ---- device helpers --------------------------------------------------------------------------

__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

// Random +-[0.5, 1.5) bf16 values over n elements.
__global__ void fill_kernel(__nv_bfloat16* p, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(i) + 0x9E3779B97F4A7C15ull));
    const float mag = 0.5f + static_cast<float>(h >> 40) / static_cast<float>(1ull << 24);
    p[i] = __float2bfloat16((h & 1) ? -mag : mag);
  }
}

__global__ void count_nan_kernel(const __nv_bfloat16* d, std::int64_t n, unsigned long long* out) {
  unsigned long long c = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    c += isnan(__bfloat162float(d[i])) ? 1 : 0;
  if (c) atomicAdd(out, c);
}

struct SampleArgs {
  const __nv_bfloat16* a;
  const __nv_bfloat16* b;
  const __nv_bfloat16* d;
  bool a_row, b_row;
  std::int64_t m, n, k, lda, ldb;
  std::uint64_t seed;
  double* err2;  // [0] sum of squared errors, [1] sum of squared references
};

// One warp per sampled element: its fp64 dot product against D's value.
__global__ void sample_check_kernel(SampleArgs s) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (warp >= kSamples) return;
  const std::uint64_t h = mix(s.seed + static_cast<std::uint64_t>(warp));
  const std::int64_t i = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(s.m));
  const std::int64_t j = static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(s.n));
  double sum = 0;
  for (std::int64_t k = lane; k < s.k; k += 32) {
    const double x = __bfloat162float(s.a[s.a_row ? i * s.lda + k : k * s.lda + i]);
    const double y = __bfloat162float(s.b[s.b_row ? k * s.ldb + j : j * s.ldb + k]);
    sum += x * y;
  }
  for (int o = 16; o > 0; o /= 2)
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
  if (lane == 0) {
    const double got = __bfloat162float(s.d[i * s.n + j]);
    atomicAdd(&s.err2[0], (got - sum) * (got - sum));
    atomicAdd(&s.err2[1], sum * sum);
  }
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles)
    __nanosleep(500);
}

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 8192));
}

// ---- cases -----------------------------------------------------------------------------------

struct Shape {
  std::string family, name;
  std::int64_t m, n, k;
  bool quick;
};

std::vector<Shape> shapes() {
  std::vector<Shape> v;
  for (std::int64_t s : {1024, 2048, 4096, 8192, 16384})
    v.push_back({"square", "square/" + std::to_string(s), s, s, s, s <= 4096});
  const std::int64_t kNK[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008},
                                 {2112, 7168}, {7168, 2048},  {28672, 8192}};
  for (std::int64_t m : {128, 512, 1024, 2048, 4096, 8192, 16384})
    for (const auto& nk : kNK)
      v.push_back({"llm",
                   "llm/M" + std::to_string(m) + "/N" + std::to_string(nk[0]) + "/K" +
                       std::to_string(nk[1]),
                   m, nk[0], nk[1], (m == 128 || m == 4096) && nk[1] == 4096});
  return v;
}

struct Options {
  bool quick = false, list = false, sweep = false;
  std::string filter, json_path, layout = "rc", command_line;
  int reps = 20, warmup = 3, device = 0;
  std::uint64_t seed = 0;
};

// ---- timing ----------------------------------------------------------------------------------

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  double host_us_per_launch = 0;
  bool host_bound = false;
};

class Timer {
 public:
  Timer(cudaStream_t stream, int sm_clock_khz, void* flush, std::size_t flush_bytes)
      : stream_(stream), sm_clock_khz_(sm_clock_khz), flush_(flush), flush_bytes_(flush_bytes) {}

  // `launch(set)` enqueues one run on the stream using rotation set `set`.
  Timing time(const std::function<void(int)>& launch, int sets, bool flush, int warmup, int reps) {
    std::vector<cudaEvent_t> start(static_cast<std::size_t>(reps)),
        stop(static_cast<std::size_t>(reps));
    for (int r = 0; r < reps; ++r) {
      check(cudaEventCreate(&start[static_cast<std::size_t>(r)]), "cudaEventCreate");
      check(cudaEventCreate(&stop[static_cast<std::size_t>(r)]), "cudaEventCreate");
    }
    Timing t;
    int next = 0;
    std::vector<double> host;
    for (int w = 0; w < warmup; ++w) {
      const auto t0 = std::chrono::steady_clock::now();
      launch(next++ % sets);
      host.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    check(cudaStreamSynchronize(stream_), "warm-up");
    std::sort(host.begin(), host.end());
    t.host_us_per_launch = host[host.size() / 2];
    double spin_us = std::clamp(2.0 * reps * (t.host_us_per_launch + 5.0), 50.0, 500000.0);
    for (int attempt = 1;; ++attempt) {
      spin_kernel<<<1, 1, 0, stream_>>>(static_cast<long long>(spin_us * sm_clock_khz_ * 1e-3));
      check(cudaGetLastError(), "spin kernel");
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) {
        if (flush) check(cudaMemsetAsync(flush_, r & 0xFF, flush_bytes_, stream_), "L2 flush");
        check(cudaEventRecord(start[static_cast<std::size_t>(r)], stream_), "cudaEventRecord");
        launch(next++ % sets);
        check(cudaEventRecord(stop[static_cast<std::size_t>(r)], stream_), "cudaEventRecord");
      }
      const double enqueued =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      check(cudaStreamSynchronize(stream_), "timed runs");
      t.host_bound = enqueued > spin_us;
      if (!t.host_bound || attempt == 3 || spin_us >= 500000.0) break;
      spin_us = std::min(500000.0, 2.0 * enqueued + 50.0);
    }
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      float x = 0;
      check(cudaEventElapsedTime(&x, start[static_cast<std::size_t>(r)],
                                 stop[static_cast<std::size_t>(r)]),
            "cudaEventElapsedTime");
      ms.push_back(x);
      cudaEventDestroy(start[static_cast<std::size_t>(r)]);
      cudaEventDestroy(stop[static_cast<std::size_t>(r)]);
    }
    std::sort(ms.begin(), ms.end());
    t.reps = reps;
    t.min_ms = ms.front();
    t.max_ms = ms.back();
    t.median_ms = reps % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    return t;
  }

 private:
  cudaStream_t stream_;
  int sm_clock_khz_;
  void* flush_;
  std::size_t flush_bytes_;
};

// ---- one case --------------------------------------------------------------------------------

struct Impl {
  std::string name, role, detail;
  bool verified = false;
  std::string failure;
  double verify_rel = 0;
  std::optional<Timing> timing;
  double tflops = 0;
};

struct CaseResult {
  Shape shape;
  std::string status = "ok", note, l2_policy;
  std::vector<Impl> impls;
  const Impl* find(const std::string& n) const {
    for (const Impl& i : impls)
      if (i.name == n) return &i;
    return nullptr;
  }
};

struct Operands {
  const __nv_bfloat16* a;
  const __nv_bfloat16* b;
  __nv_bfloat16* d;
};

class Bench {
 public:
  Bench(const Options& o, const tma::DeviceSupport& gpu) : o_(o), gpu_(gpu) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasLtCreate(&lt_), "cublasLtCreate");
    check(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc(workspace)");
    flush_bytes_ = static_cast<std::size_t>(kFlushFactor) * gpu.l2_bytes;
    check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc(flush)");
    check(cudaMalloc(&scratch_, 64), "cudaMalloc(scratch)");
    timer_.emplace(stream_, gpu.sm_clock_khz, flush_, flush_bytes_);
  }
  ~Bench() {
    cudaFree(scratch_);
    cudaFree(flush_);
    cudaFree(workspace_);
    cublasLtDestroy(lt_);
    cudaStreamDestroy(stream_);
  }

  CaseResult run(const Shape& s, std::uint64_t seed) {
    CaseResult r;
    r.shape = s;
    a_row_ = o_.layout[0] == 'r';
    b_row_ = o_.layout[1] == 'r';
    lda_ = a_row_ ? s.k : s.m;
    ldb_ = b_row_ ? s.n : s.k;
    const std::size_t a_bytes = static_cast<std::size_t>(s.m * s.k) * 2;
    const std::size_t b_bytes = static_cast<std::size_t>(s.k * s.n) * 2;
    const std::size_t d_bytes = static_cast<std::size_t>(s.m * s.n) * 2;
    const std::size_t set_bytes = a_bytes + b_bytes + d_bytes;
    std::size_t free_bytes = 0, total = 0;
    check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    const std::size_t room = free_bytes > kMemoryMargin ? free_bytes - kMemoryMargin : 0;
    if (set_bytes > room) {
      r.status = "skipped";
      r.note = "needs " + std::to_string(set_bytes >> 20) + " MiB, " +
               std::to_string(free_bytes >> 20) + " MiB free";
      return r;
    }
    int sets = static_cast<int>(kRotationFactor * gpu_.l2_bytes / set_bytes + 1);
    bool flush = false;
    if (static_cast<std::size_t>(sets) * set_bytes > room) {
      sets = 1;
      flush = true;
    }
    r.l2_policy =
        flush ? "flush 2x L2 between runs" : "rotate " + std::to_string(sets) + " sets > 3x L2";
    void* mem = nullptr;
    check(cudaMalloc(&mem, static_cast<std::size_t>(sets) * set_bytes), "cudaMalloc(buffers)");
    std::vector<Operands> ops;
    for (int i = 0; i < sets; ++i) {
      auto* base = static_cast<unsigned char*>(mem) + static_cast<std::size_t>(i) * set_bytes;
      Operands op{reinterpret_cast<__nv_bfloat16*>(base),
                  reinterpret_cast<__nv_bfloat16*>(base + a_bytes),
                  reinterpret_cast<__nv_bfloat16*>(base + a_bytes + b_bytes)};
      fill_kernel<<<blocks_for(s.m * s.k), 256, 0, stream_>>>(const_cast<__nv_bfloat16*>(op.a),
                                                              s.m * s.k, seed * 2 + 1);
      fill_kernel<<<blocks_for(s.k * s.n), 256, 0, stream_>>>(const_cast<__nv_bfloat16*>(op.b),
                                                              s.k * s.n, seed * 2 + 2);
      ops.push_back(op);
    }
    check(cudaGetLastError(), "fill");
    try {
      r.impls.push_back(measure_cublas(s, ops, flush));
      r.impls.push_back(measure_ours(s, ops, flush, "tma", Path::kTma, {}));
      r.impls.push_back(measure_ours(s, ops, flush, "ordinary", Path::kOrdinary, {}));
      if (o_.sweep) {
        for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
          for (int cluster = 1; cluster <= 2; ++cluster) {
            tma::ops::GemmTuning t;
            t.config = config;
            t.cluster_m = cluster;
            r.impls.push_back(measure_ours(
                s, ops, flush, "tma_cfg" + std::to_string(config) + "_cl" + std::to_string(cluster),
                Path::kTma, t));
          }
      }
    } catch (...) {
      cudaFree(mem);
      throw;
    }
    check(cudaFree(mem), "cudaFree");
    for (const Impl& i : r.impls)
      if (!i.verified) r.status = "failed";
    return r;
  }

 private:
  // Verifies `launch(0)` (poisoned output), then times it.
  Impl measure(const Shape& s, const std::vector<Operands>& ops, bool flush, Impl impl,
               const std::function<void(int)>& launch) {
    try {
      const std::int64_t n = s.m * s.n;
      check(cudaMemsetAsync(ops[0].d, 0xFF, static_cast<std::size_t>(n) * 2, stream_), "poison");
      launch(0);
      check(cudaMemsetAsync(scratch_, 0, 64, stream_), "memset");
      count_nan_kernel<<<blocks_for(n), 256, 0, stream_>>>(
          ops[0].d, n, static_cast<unsigned long long*>(scratch_));
      SampleArgs sa{ops[0].a,
                    ops[0].b,
                    ops[0].d,
                    a_row_,
                    b_row_,
                    s.m,
                    s.n,
                    s.k,
                    lda_,
                    ldb_,
                    o_.seed ^ 0x5A5Aull,
                    static_cast<double*>(scratch_) + 1};
      sample_check_kernel<<<kSamples * 32 / 256, 256, 0, stream_>>>(sa);
      check(cudaGetLastError(), "verification kernels");
      check(cudaStreamSynchronize(stream_), "verification");
      unsigned long long nans = 0;
      double err[2] = {0, 0};
      check(cudaMemcpy(&nans, scratch_, 8, cudaMemcpyDeviceToHost), "copy");
      check(cudaMemcpy(err, static_cast<double*>(scratch_) + 1, 16, cudaMemcpyDeviceToHost),
            "copy");
      impl.verify_rel = err[1] > 0 ? std::sqrt(err[0] / err[1]) : 0;
      if (nans != 0) {
        impl.failure = std::to_string(nans) + " output elements not written (still NaN poison)";
      } else if (!(impl.verify_rel <= kVerifyBound)) {
        impl.failure = "sampled relative error " + std::to_string(impl.verify_rel) + " > " +
                       std::to_string(kVerifyBound);
      } else {
        impl.verified = true;
      }
      if (!impl.verified) {
        std::printf("VERIFY FAILED %s [%s]: %s\n", s.name.c_str(), impl.name.c_str(),
                    impl.failure.c_str());
        return impl;
      }
      impl.timing = timer_->time(launch, static_cast<int>(ops.size()), flush, o_.warmup, o_.reps);
      impl.tflops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                    static_cast<double>(s.k) / (impl.timing->median_ms * 1e-3) / 1e12;
    } catch (const tma::Error& e) {
      impl.verified = false;
      impl.failure = std::string("error: ") + e.what();
      std::printf("ERROR %s [%s]: %s\n", s.name.c_str(), impl.name.c_str(), e.what());
    }
    return impl;
  }

  Impl measure_ours(const Shape& s, const std::vector<Operands>& ops, bool flush,
                    const std::string& name, Path path, const tma::ops::GemmTuning& tuning) {
    Impl impl;
    impl.name = name;
    impl.role = name == "tma" ? "ours" : "peer";
    tma::ops::GemmPlan plan{};
    auto launch = [&, path](int set) {
      GemmArgs g;
      g.m = s.m;
      g.n = s.n;
      g.k = s.k;
      g.a = ops[static_cast<std::size_t>(set)].a;
      g.a_layout = a_row_ ? MatrixLayout::kRowMajor : MatrixLayout::kColMajor;
      g.lda = lda_;
      g.b = ops[static_cast<std::size_t>(set)].b;
      g.b_layout = b_row_ ? MatrixLayout::kRowMajor : MatrixLayout::kColMajor;
      g.ldb = ldb_;
      g.d = ops[static_cast<std::size_t>(set)].d;
      g.ldd = s.n;
      tma::ops::gemm_tuned(g, stream_, path, tuning, &plan);
    };
    impl = measure(s, ops, flush, impl, launch);
    impl.detail = std::string("tma::ops::gemm Path::") +
                  (path == Path::kTma ? "kTma" : "kOrdinary") + " config " +
                  std::to_string(plan.config) + " (128x" +
                  std::to_string(tma::ops::kGemmConfigs[plan.config].block_n) + ") cluster " +
                  std::to_string(plan.cluster_m) + " raster group " +
                  std::to_string(plan.raster_group) + " ctas " + std::to_string(plan.ctas);
    return impl;
  }

  // cuBLASLt in column-major terms: D^T (n x m) = B^T (n x k) A^T (k x m).
  Impl measure_cublas(const Shape& s, const std::vector<Operands>& ops, bool flush) {
    Impl impl;
    impl.name = "cublasLt";
    impl.role = "peer";
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    const cublasOperation_t ta = b_row_ ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t tb = a_row_ ? CUBLAS_OP_N : CUBLAS_OP_T;
    check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
          "set TRANSA");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
          "set TRANSB");
    // "A" = our B: row-major k x n is column-major n x k; column-major k x n is k x n (op T).
    check(
        cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, static_cast<std::uint64_t>(b_row_ ? s.n : s.k),
                                   static_cast<std::uint64_t>(b_row_ ? s.k : s.n), ldb_),
        "layout A");
    // "B" = our A: row-major m x k is column-major k x m; column-major m x k is m x k (op T).
    check(
        cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, static_cast<std::uint64_t>(a_row_ ? s.k : s.m),
                                   static_cast<std::uint64_t>(a_row_ ? s.m : s.k), lda_),
        "layout B");
    check(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, static_cast<std::uint64_t>(s.n),
                                     static_cast<std::uint64_t>(s.m), s.n),
          "layout C");
    check(cublasLtMatmulPreferenceCreate(&pref), "PreferenceCreate");
    const std::size_t ws = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof ws),
          "set workspace");
    cublasLtMatmulHeuristicResult_t results[kHeuristicAlgos] = {};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(lt_, op, la, lb, lc, lc, pref, kHeuristicAlgos, results,
                                         &found),
          "AlgoGetHeuristic");
    const float alpha = 1.0f, beta = 0.0f;
    const cublasLtMatmulAlgo_t* algo = nullptr;
    auto launch = [&](int set) {
      const Operands& x = ops[static_cast<std::size_t>(set)];
      check(cublasLtMatmul(lt_, op, &alpha, x.b, la, x.a, lb, &beta, x.d, lc, x.d, lc, algo,
                           workspace_, kWorkspaceBytes, stream_),
            "cublasLtMatmul");
    };
    // Each algorithm the heuristic offers, briefly; the fastest is timed with the full policy.
    double best_ms = 1e30;
    int best = -1;
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      algo = &results[i].algo;
      try {
        const Timing t =
            timer_->time(launch, static_cast<int>(ops.size()), flush, 2, kAlgoTrialReps);
        if (t.median_ms < best_ms) {
          best_ms = t.median_ms;
          best = i;
        }
      } catch (const Failure&) {
        // An algorithm the heuristic offered but that fails to run: skip it.
        (void)cudaGetLastError();
      }
    }
    if (best < 0) {
      impl.failure =
          "cublasLt found no algorithm that runs (" + std::to_string(found) + " offered)";
    } else {
      algo = &results[best].algo;
      impl.detail = "cublasLtMatmul bf16 -> bf16, fp32 compute, best of " + std::to_string(found) +
                    " heuristic algorithms (index " + std::to_string(best) + ")";
      impl = measure(s, ops, flush, impl, launch);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(op);
    return impl;
  }

  const Options& o_;
  const tma::DeviceSupport& gpu_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  void* flush_ = nullptr;
  void* scratch_ = nullptr;
  std::size_t flush_bytes_ = 0;
  std::optional<Timer> timer_;
  bool a_row_ = true, b_row_ = false;
  std::int64_t lda_ = 0, ldb_ = 0;
};

// ---- output ----------------------------------------------------------------------------------

std::string cell(const Impl* i) {
  if (i == nullptr) return "-";
  if (!i->verified) return "FAIL";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", i->tflops);
  return buf;
}

std::optional<double> ratio(const Impl* x, const Impl* y) {
  if (!x || !y || !x->timing || !y->timing || y->tflops <= 0) return std::nullopt;
  return x->tflops / y->tflops;
}

void print_row(const CaseResult& r) {
  std::printf("%-30s %6lld %6lld %6lld", r.shape.name.c_str(), static_cast<long long>(r.shape.m),
              static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k));
  if (r.status == "skipped") {
    std::printf("  skipped: %s\n", r.note.c_str());
    return;
  }
  const Impl *cu = r.find("cublasLt"), *tma = r.find("tma"), *ord = r.find("ordinary");
  std::printf(" %9s %9s %9s", cell(cu).c_str(), cell(tma).c_str(), cell(ord).c_str());
  const auto vs_cublas = ratio(tma, cu), vs_ord = ratio(tma, ord);
  vs_cublas ? std::printf(" %9.2f", *vs_cublas) : std::printf(" %9s", "-");
  vs_ord ? std::printf(" %9.2f", *vs_ord) : std::printf(" %9s", "-");
  for (const Impl& i : r.impls)
    if (i.name.rfind("tma_cfg", 0) == 0) std::printf("  %s %s", i.name.c_str(), cell(&i).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

void write_impl(JsonWriter& j, const Impl& i) {
  j.begin_object();
  j.key("role").value(i.role);
  j.key("detail").value(i.detail);
  j.key("verified").value(i.verified);
  if (i.failure.empty()) {
    j.key("failure").null();
  } else {
    j.key("failure").value(i.failure);
  }
  j.key("verify_rel_error").value(i.verify_rel);
  if (i.timing) {
    j.key("median_ms").value(i.timing->median_ms);
    j.key("min_ms").value(i.timing->min_ms);
    j.key("max_ms").value(i.timing->max_ms);
    j.key("reps").value(i.timing->reps);
    j.key("tflops").value(i.tflops);
    j.key("host_us_per_launch").value(i.timing->host_us_per_launch);
    j.key("host_bound").value(i.timing->host_bound);
  } else {
    for (const char* k : {"median_ms", "min_ms", "max_ms", "reps", "tflops"})
      j.key(k).null();
  }
  j.end_object();
}

std::string to_json(const Options& o, const tma::bench::MachineInfo& m,
                    const std::vector<CaseResult>& results) {
  JsonWriter j;
  j.begin_object();
  j.key("tool").value("gemm-bench");
  j.key("schema").value(kSchema);
  j.key("timestamp").value(m.timestamp);
  j.key("command_line").value(o.command_line);
  j.key("seed").value(o.seed);
  j.key("policy").begin_object();
  j.key("warmup").value(o.warmup);
  j.key("reps").value(o.reps);
  j.key("statistic").value("median of reps, CUDA events, launches queued behind a spin kernel");
  j.key("rotation_factor").value(kRotationFactor);
  j.key("flush_factor").value(kFlushFactor);
  j.key("tflops").value("2 m n k / median time / 1e12");
  j.key("verification")
      .value(
          "output poisoned with NaN; every element written; 1024 sampled elements vs fp64, "
          "relative error <= 8e-3");
  j.end_object();
  j.key("gpu");
  tma::bench::write_json(j, m);
  j.key("cases").begin_array();
  for (const CaseResult& r : results) {
    j.begin_object();
    j.key("suite").value("gemm");
    j.key("name").value(r.shape.name);
    j.key("family").value(r.shape.family);
    j.key("dtype").value("bf16");
    j.key("out_dtype").value("bf16");
    j.key("layout").value(o.layout);
    j.key("m").value(r.shape.m);
    j.key("n").value(r.shape.n);
    j.key("k").value(r.shape.k);
    j.key("flops").value(2.0 * static_cast<double>(r.shape.m) * static_cast<double>(r.shape.n) *
                         static_cast<double>(r.shape.k));
    j.key("status").value(r.status);
    j.key("note").value(r.note);
    j.key("l2_policy").value(r.l2_policy);
    j.key("implementations").begin_object();
    for (const Impl& i : r.impls) {
      j.key(i.name);
      write_impl(j, i);
    }
    j.end_object();
    j.key("ratio_vs_cublas").value(ratio(r.find("tma"), r.find("cublasLt")));
    j.key("tma_vs_ordinary").value(ratio(r.find("tma"), r.find("ordinary")));
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--filter S] [--layout rc|rr|cr|cc] [--sweep] [--reps N>=20] "
               "[--warmup N>=3] [--json FILE] [--seed N] [--device N] [--list]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  for (int i = 0; i < argc; ++i) {
    if (i > 0) o.command_line += ' ';
    o.command_line += argv[i];
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--quick")
        o.quick = true;
      else if (a == "--list")
        o.list = true;
      else if (a == "--sweep")
        o.sweep = true;
      else if (a == "--filter")
        o.filter = value();
      else if (a == "--json")
        o.json_path = value();
      else if (a == "--layout")
        o.layout = value();
      else if (a == "--reps")
        o.reps = std::stoi(value());
      else if (a == "--warmup")
        o.warmup = std::stoi(value());
      else if (a == "--seed")
        o.seed = std::stoull(value());
      else if (a == "--device")
        o.device = std::stoi(value());
      else
        return usage(argv[0]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gemm-bench: %s\n", e.what());
      return usage(argv[0]);
    }
  }
  const bool layout_ok = o.layout.size() == 2 && (o.layout[0] == 'r' || o.layout[0] == 'c') &&
                         (o.layout[1] == 'r' || o.layout[1] == 'c');
  if (!layout_ok || o.reps < 20 || o.warmup < 3) {
    std::fprintf(stderr, "gemm-bench: --layout is rc, rr, cr or cc; --reps >= 20; --warmup >= 3\n");
    return usage(argv[0]);
  }
  std::vector<Shape> cases;
  for (const Shape& s : shapes())
    if ((!o.quick || s.quick) && (o.filter.empty() || s.name.find(o.filter) != std::string::npos))
      cases.push_back(s);
  if (o.list) {
    for (const Shape& s : cases)
      std::printf("%s\n", s.name.c_str());
    return 0;
  }

  const tma::DeviceSupport gpu = tma::device_support(o.device);
  if (!gpu.tma || gpu.cc_major != 9 || gpu.cc_minor != 0) {
    std::printf(
        "SKIP gemm-bench: %s\n",
        gpu.tma ? "the GEMM kernels are built for sm_90a (H100 / H200 only)" : gpu.reason.c_str());
    return 77;
  }
  int failures = 0;
  try {
    if (cudaSetDevice(o.device) != cudaSuccess) throw Failure("cudaSetDevice failed");
    tma::bench::MachineInfo machine = tma::bench::collect_machine(gpu);
    std::printf("%s\nlayout %s (A %s, B %s), bf16 -> bf16, seed %llu\n",
                tma::bench::describe(machine).c_str(), o.layout.c_str(),
                o.layout[0] == 'r' ? "row-major" : "column-major",
                o.layout[1] == 'r' ? "row-major" : "column-major",
                static_cast<unsigned long long>(o.seed));
    std::printf("%-30s %6s %6s %6s %9s %9s %9s %9s %9s   (TFLOP/s)\n", "case", "M", "N", "K",
                "cublasLt", "tma", "ordinary", "tma/cuBL", "tma/ord");
    Bench bench(o, gpu);
    std::vector<CaseResult> results;
    std::uint64_t index = 0;
    for (const Shape& s : cases) {
      results.push_back(bench.run(s, o.seed + 7919 * index++));
      print_row(results.back());
      if (results.back().status == "failed") ++failures;
    }
    machine.smi_after = tma::bench::read_nvidia_smi(gpu.device);
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path);
      f << to_json(o, machine, results) << "\n";
      if (!f) throw Failure("cannot write " + o.json_path);
      std::printf("wrote %s\n", o.json_path.c_str());
    }
  } catch (const std::exception& e) {
    std::printf("gemm-bench: stopped: %s\n", e.what());
    return 1;
  }
  std::printf("gemm-bench: %zu cases, %d with a failed verification\n", cases.size(), failures);
  return failures == 0 ? 0 : 1;
}
