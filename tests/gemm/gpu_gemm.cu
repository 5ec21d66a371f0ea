// GPU test of tma::ops::gemm: both paths (TMA and ordinary loads), every operand layout, bf16 and
// fp16 inputs, bf16 / fp16 / fp32 outputs, ragged, tiny and large shapes, alpha / beta with a
// separate C and in place (C == D), both tile configurations, 1- and 2-CTA clusters, persistent
// grids that wrap around many tiles, and stream-K (tuning.stream_k = 2, forced on ragged, tall-K,
// M = 1 and the N = 2112 LLM shapes, with clusters of 1 (streamk/) and 2 (streamk2/: odd tile-row
// counts too); with a caller's workspace poisoned with 0xFF, which the op must not take for set
// flags; run twice and compared bit for bit (the fixed summation order), the partial tiles
// poisoned again between the runs and the first run's flags left in place). Every TMA case runs
// the GPC-aware worker order where the device could be measured (the case line says
// "gpc-order"); the order-id/ cases run the identity (GemmTuning::gpc_order = false).
//
// Per case: fresh random inputs (values +-[0.5, 1.5), never zero, rounded to the input type); the
// whole D allocation poisoned with 0xFF bytes (a NaN in bf16, fp16 and fp32) except, in place, the
// view itself, which holds C; an fp64 reference computed on the GPU by a plain tiled kernel from
// the same rounded inputs (and the same C); then
//   - every element of the view must be written (no NaN left),
//   - the padding between n and ldd must still be poison (nothing written outside the view),
//   - rel = ||D - ref||_F / ||ref||_F <= bound(K, D's type), where
//       bound = u(D) + acc(K),  u = 2^-8 (bf16), 2^-11 (fp16), 0 (fp32): rounding the exact result
//               to D's type moves each element by at most u relative (round to nearest), so the
//               norm by at most u;
//       acc(K) = 1e-5 * max(1, K / 1024): fp32 accumulation of K products. Round-to-nearest
//               would give ~2^-24 sqrt(K) (2e-6 at K = 4096); tensor cores truncate their partial
//               sums (Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021), which can
//               grow like (K / 16) 2^-24 (1.5e-5 at K = 4096), hence the slope in K.
//     The measured rel and its bound are printed for every case, so margins are visible.
// One line per case, a summary, exit 0 (all passed), 1 (a failure), 77 (no usable GPU: the reason
// is printed). --quick runs the small cases only (for compute-sanitizer); --filter S runs the
// cases whose name contains S; --list prints the names.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gemm_config.hpp"  // kBlockM, kSplitPiecesPerTile
#include "gemm_schedule.hpp"
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

// A launch that has not finished after this long is a hang (the slowest case, 4096^3 through the
// ordinary path under no sanitizer, takes milliseconds; the fp64 reference about a second).
constexpr double kHangSeconds = 120.0;

// ---- device helpers --------------------------------------------------------------------------

__device__ double load_as_double(const void* p, std::int64_t i, DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DataType::kFloat16:
      return __half2float(static_cast<const __half*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

// Fills a rows x cols view (leading dimension ld, row-major storage of `rows` lines) with
// +-[0.5, 1.5) in type t.
__global__ void fill_kernel(void* p, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                            DataType t, std::uint64_t seed) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / cols, c = i % cols;
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(i) + 0x9E3779B97F4A7C15ull));
    const float mag = 0.5f + static_cast<float>(h >> 40) / static_cast<float>(1ull << 24);
    const float v = (h & 1) ? -mag : mag;
    const std::int64_t at = r * ld + c;
    switch (t) {
      case DataType::kBFloat16:
        static_cast<__nv_bfloat16*>(p)[at] = __float2bfloat16(v);
        break;
      case DataType::kFloat16:
        static_cast<__half*>(p)[at] = __float2half(v);
        break;
      default:
        static_cast<float*>(p)[at] = v;
        break;
    }
  }
}

// The fp64 reference, 16 x 16 outputs per block: ref = alpha A B + beta C, from the stored
// (rounded) inputs. c == nullptr means beta is not applied.
struct RefArgs {
  const void* a;
  const void* b;
  const void* c;
  DataType ab, cd;
  bool a_row, b_row;
  std::int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
  double* ref;  // m x n, dense
};

__global__ void reference_kernel(RefArgs r) {
  __shared__ double sa[16][17];
  __shared__ double sb[16][17];
  const std::int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  double sum = 0;
  for (std::int64_t k0 = 0; k0 < r.k; k0 += 16) {
    const std::int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    const std::int64_t arow = blockIdx.y * 16 + threadIdx.y, bcol = blockIdx.x * 16 + threadIdx.x;
    sa[threadIdx.y][threadIdx.x] =
        arow < r.m && ka < r.k
            ? load_as_double(r.a, r.a_row ? arow * r.lda + ka : ka * r.lda + arow, r.ab)
            : 0.0;
    sb[threadIdx.y][threadIdx.x] =
        kb < r.k && bcol < r.n
            ? load_as_double(r.b, r.b_row ? kb * r.ldb + bcol : bcol * r.ldb + kb, r.ab)
            : 0.0;
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      sum += sa[threadIdx.y][kk] * sb[kk][threadIdx.x];
    __syncthreads();
  }
  if (row < r.m && col < r.n) {
    double v = r.alpha * sum;
    if (r.c != nullptr) v += r.beta * load_as_double(r.c, row * r.ldc + col, r.cd);
    r.ref[row * r.n + col] = v;
  }
}

struct Stats {
  double err2;                         // sum (d - ref)^2 over the view
  double ref2;                         // sum ref^2
  unsigned long long unwritten;        // NaN (poison) left in the view
  unsigned long long padding_written;  // padding bytes that are no longer poison
  unsigned long long first_bad;        // lowest flat index of a NaN in the view (or ~0)
};

__device__ bool is_poison(const void* p, std::int64_t i, DataType t) {
  if (t == DataType::kFloat32) return static_cast<const std::uint32_t*>(p)[i] == 0xFFFFFFFFu;
  return static_cast<const std::uint16_t*>(p)[i] == 0xFFFFu;
}

__global__ void compare_kernel(const void* d, DataType t, std::int64_t m, std::int64_t n,
                               std::int64_t ldd, const double* ref, Stats* out) {
  double e2 = 0, r2 = 0;
  unsigned long long unwritten = 0, padding = 0, first = ~0ull;
  const std::int64_t total = m * ldd;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t row = i / ldd, col = i % ldd;
    if (col >= n) {
      if (!is_poison(d, i, t)) ++padding;
      continue;
    }
    const double v = load_as_double(d, i, t);
    const double w = ref[row * n + col];
    if (isnan(v)) {
      ++unwritten;
      first = min(first, static_cast<unsigned long long>(row * n + col));
      continue;
    }
    e2 += (v - w) * (v - w);
    r2 += w * w;
  }
  atomicAdd(&out->err2, e2);
  atomicAdd(&out->ref2, r2);
  if (unwritten) atomicAdd(&out->unwritten, unwritten);
  if (padding) atomicAdd(&out->padding_written, padding);
  if (first != ~0ull) atomicMin(&out->first_bad, first);
}

// ---- host ------------------------------------------------------------------------------------

enum class CMode { kNone, kSeparate, kInPlace };

struct Case {
  std::string name;
  std::int64_t m, n, k;
  MatrixLayout a_layout, b_layout;
  DataType ab, out;
  Path path;
  float alpha = 1.0f, beta = 0.0f;
  CMode c_mode = CMode::kNone;
  GemmTuning tuning{};
  int pad = 0;  // extra elements of leading dimension (multiple of 8)
  bool quick = false;
  // Pass a workspace of gemm_workspace_bytes() (poisoned), run the GEMM twice and require the
  // same bits both times (stream-K sums in a fixed order). Only with beta = 0 or C separate.
  bool own_workspace = false;
  // In place (C == D) with beta != 0: launch the product twice back to back on one stream, no
  // synchronization between (D = alpha A B + beta (alpha A B + beta C)): the second kernel reads
  // the first one's D as its C, so with GemmTuning::pdl it must wait for the first to complete.
  bool chain = false;
  // >= 0: run tma::ops::gemm_candidates(args, path)[candidate] instead of `tuning` (entry 0 must
  // be the plan gemm() runs); an index past the list passes with a NONE line.
  int candidate = -1;
};

const char* dtype_name(DataType t) {
  return t == DataType::kBFloat16 ? "bf16" : t == DataType::kFloat16 ? "fp16" : "fp32";
}

double unit_roundoff(DataType t) {
  return t == DataType::kBFloat16  ? std::ldexp(1.0, -8)
         : t == DataType::kFloat16 ? std::ldexp(1.0, -11)
                                   : 0.0;
}

double bound_for(const Case& c) {
  return unit_roundoff(c.out) + 1e-5 * std::max(1.0, static_cast<double>(c.k) / 1024.0);
}

std::int64_t round_up(std::int64_t v, std::int64_t q) {
  return (v + q - 1) / q * q;
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { CHECK_CUDA(cudaMalloc(&p, bytes < 16 ? 16 : bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Waits for the device, treating a wait longer than kHangSeconds as a hang (exits: a hung kernel
// cannot be recovered in-process).
void synchronize_or_die(const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(nullptr);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      std::printf("FATAL %s: %s (%s); the CUDA context is lost, stopping\n", what.c_str(),
                  cudaGetErrorName(e), cudaGetErrorString(e));
      std::fflush(stdout);
      std::_Exit(1);
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > kHangSeconds) {
      std::printf(
          "FATAL %s: still running after %.0f s: the kernel hangs (a pipeline barrier that "
          "never completes?); stopping\n",
          what.c_str(), s);
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 4096));
}

// Runs one case; prints its line; returns true when it passed.
bool run_case(const Case& c, std::uint64_t seed) {
  const int ab = 2, cd = c.out == DataType::kFloat32 ? 4 : 2;
  const bool a_row = c.a_layout == MatrixLayout::kRowMajor;
  const bool b_row = c.b_layout == MatrixLayout::kRowMajor;
  const std::int64_t lda = round_up(a_row ? c.k : c.m, 8) + c.pad;
  const std::int64_t ldb = round_up(b_row ? c.n : c.k, 8) + c.pad;
  const std::int64_t ldd = round_up(c.n, 16 / cd) + c.pad;
  const std::int64_t ldc = ldd;
  const std::int64_t a_lines = a_row ? c.m : c.k, a_cols = a_row ? c.k : c.m;
  const std::int64_t b_lines = b_row ? c.k : c.n, b_cols = b_row ? c.n : c.k;

  DeviceBuffer a(static_cast<std::size_t>(a_lines * lda * ab));
  DeviceBuffer b(static_cast<std::size_t>(b_lines * ldb * ab));
  DeviceBuffer d(static_cast<std::size_t>(c.m * ldd * cd));
  DeviceBuffer sep(c.c_mode == CMode::kSeparate ? static_cast<std::size_t>(c.m * ldc * cd) : 16);
  DeviceBuffer ref(static_cast<std::size_t>(c.m * c.n) * sizeof(double));
  DeviceBuffer stats(sizeof(Stats));

  fill_kernel<<<blocks_for(a_lines * a_cols), 256>>>(a.p, a_lines, a_cols, lda, c.ab, seed * 3 + 1);
  fill_kernel<<<blocks_for(b_lines * b_cols), 256>>>(b.p, b_lines, b_cols, ldb, c.ab, seed * 3 + 2);
  // D poisoned and, in place (C == D), filled with C's values: before the product, and again after
  // a candidates/ case's run of gemm()'s own plan.
  const auto prepare_d = [&] {
    CHECK_CUDA(cudaMemset(d.p, 0xFF, static_cast<std::size_t>(c.m * ldd * cd)));
    if (c.c_mode == CMode::kInPlace)
      fill_kernel<<<blocks_for(c.m * c.n), 256>>>(d.p, c.m, c.n, ldd, c.out, seed * 3 + 3);
  };
  prepare_d();
  const void* c_ptr = c.c_mode == CMode::kInPlace ? d.p : nullptr;
  if (c.c_mode == CMode::kSeparate) {
    CHECK_CUDA(cudaMemset(sep.p, 0xFF, static_cast<std::size_t>(c.m * ldc * cd)));
    fill_kernel<<<blocks_for(c.m * c.n), 256>>>(sep.p, c.m, c.n, ldc, c.out, seed * 3 + 3);
    c_ptr = sep.p;
  }
  CHECK_CUDA(cudaGetLastError());

  RefArgs r{a.p,
            b.p,
            c_ptr,
            c.ab,
            c.out,
            a_row,
            b_row,
            c.m,
            c.n,
            c.k,
            lda,
            ldb,
            ldc,
            static_cast<double>(c.chain ? c.alpha * (1.0f + c.beta) : c.alpha),
            static_cast<double>(c.chain ? c.beta * c.beta : c.beta),
            static_cast<double*>(ref.p)};
  const dim3 grid(static_cast<unsigned>((c.n + 15) / 16), static_cast<unsigned>((c.m + 15) / 16));
  reference_kernel<<<grid, dim3(16, 16)>>>(r);
  CHECK_CUDA(cudaGetLastError());
  synchronize_or_die(c.name + ": reference");

  GemmArgs g;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.a = a.p;
  g.a_dtype = c.ab;
  g.a_layout = c.a_layout;
  g.lda = lda;
  g.b = b.p;
  g.b_dtype = c.ab;
  g.b_layout = c.b_layout;
  g.ldb = ldb;
  g.c = c_ptr;
  g.c_dtype = c.out;
  g.ldc = ldc;
  g.d = d.p;
  g.d_dtype = c.out;
  g.ldd = ldd;
  g.alpha = c.alpha;
  g.beta = c.beta;
  // candidates/ cases: the tuning is tma::ops::gemm_candidates' entry c.candidate for these
  // arguments; entry 0 must be the plan gemm() runs.
  GemmTuning tuning = c.tuning;
  bool plan_matches = true;
  GemmPlan default_plan{};
  if (c.candidate >= 0) {
    std::vector<GemmTuning> list;
    try {
      list = tma::ops::gemm_candidates(g, c.path);
      if (c.candidate == 0) tma::ops::gemm_tuned(g, nullptr, c.path, GemmTuning{}, &default_plan);
    } catch (const tma::Error& e) {
      std::printf("FAIL %-44s gemm_candidates threw tma::Error: %s\n", c.name.c_str(), e.what());
      return false;
    }
    synchronize_or_die(c.name + ": gemm (default plan)");
    prepare_d();
    CHECK_CUDA(cudaGetLastError());
    if (list.empty() || list.size() > 8) {
      std::printf("FAIL %-44s gemm_candidates returned %zu plans (1 .. 8 expected)\n",
                  c.name.c_str(), list.size());
      return false;
    }
    if (static_cast<std::size_t>(c.candidate) >= list.size()) {
      std::printf("NONE %-44s only %zu candidate plans here\n", c.name.c_str(), list.size());
      return true;
    }
    tuning = list[static_cast<std::size_t>(c.candidate)];
  }
  GemmPlan plan{};
  std::size_t ws_bytes = 0;
  try {
    if (c.own_workspace) ws_bytes = tma::ops::gemm_workspace_bytes(g, c.path, tuning);
  } catch (const tma::Error& e) {
    std::printf("FAIL %-44s gemm_workspace_bytes threw tma::Error: %s\n", c.name.c_str(), e.what());
    return false;
  }
  DeviceBuffer ws(ws_bytes);
  if (c.own_workspace && ws_bytes > 0) {
    CHECK_CUDA(cudaMemset(ws.p, 0xFF, ws_bytes));  // the op must not trust what the flags hold
    g.workspace = ws.p;
    g.workspace_bytes = ws_bytes;
  }
  try {
    tma::ops::gemm_tuned(g, nullptr, c.path, tuning, &plan);
    if (c.chain) tma::ops::gemm_tuned(g, nullptr, c.path, tuning, nullptr);
  } catch (const tma::Error& e) {
    std::printf("FAIL %-44s threw tma::Error: %s\n", c.name.c_str(), e.what());
    return false;
  }
  synchronize_or_die(c.name + ": gemm");
  bool same_bits = true;
  if (c.own_workspace) {
    const std::size_t bytes = static_cast<std::size_t>(c.m * ldd * cd);
    std::vector<unsigned char> first(bytes), second(bytes);
    CHECK_CUDA(cudaMemcpy(first.data(), d.p, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemset(d.p, 0xFF, bytes));
    // Keep the flags the first run set, poison its partial tiles (NaN): a finisher of the second
    // run that took a flag of the first for one of its own would add NaN, and the bits differ.
    // The flags come first (src/ops/gemm_schedule.hpp: the workspace layout).
    const auto flag_bytes =
        static_cast<std::size_t>(tma::ops::detail::gemm::workspace_flag_bytes(plan.ctas));
    if (plan.stream_k_tiles > 0 && ws_bytes > flag_bytes)
      CHECK_CUDA(
          cudaMemset(static_cast<unsigned char*>(ws.p) + flag_bytes, 0xFF, ws_bytes - flag_bytes));
    try {
      tma::ops::gemm_tuned(g, nullptr, c.path, tuning, nullptr);
    } catch (const tma::Error& e) {
      std::printf("FAIL %-44s threw tma::Error (second run): %s\n", c.name.c_str(), e.what());
      return false;
    }
    synchronize_or_die(c.name + ": gemm (second run)");
    CHECK_CUDA(cudaMemcpy(second.data(), d.p, bytes, cudaMemcpyDeviceToHost));
    same_bits = first == second;
  }

  Stats zero{0, 0, 0, 0, ~0ull};
  CHECK_CUDA(cudaMemcpy(stats.p, &zero, sizeof zero, cudaMemcpyHostToDevice));
  compare_kernel<<<blocks_for(c.m * ldd), 256>>>(
      d.p, c.out, c.m, c.n, ldd, static_cast<const double*>(ref.p), static_cast<Stats*>(stats.p));
  CHECK_CUDA(cudaGetLastError());
  synchronize_or_die(c.name + ": compare");
  Stats s{};
  CHECK_CUDA(cudaMemcpy(&s, stats.p, sizeof s, cudaMemcpyDeviceToHost));

  const double rel = s.ref2 > 0 ? std::sqrt(s.err2 / s.ref2) : std::sqrt(s.err2);
  const double bound = bound_for(c);
  // The plain kernel (D in the inputs' type, alpha 1, beta 0) exactly when the product is one
  // and a main kernel ran; the kernel with every epilogue otherwise.
  const bool want_plain =
      plan.ctas > 0 && c.out == c.ab && c.alpha == 1.0f && c.beta == 0.0f && !c.chain;
  const bool right_kernel = plan.plain_epilogue == want_plain;
  // A TMA-path split of one cluster row of tiles, without a caller's cap, runs at most
  // kSplitPiecesPerTile workers per split tile (gemm_config.hpp: one_row_split_workers). The
  // bound uses all n columns' tiles (the main kernel may leave the last few columns to the edge
  // kernel).
  namespace gd = tma::ops::detail::gemm;
  const int block_n = plan.ctas > 0 ? tma::ops::kGemmConfigs[plan.config].block_n : 1;
  const std::int64_t tiles_n = (c.n + block_n - 1) / block_n;
  const bool one_row_split =
      c.path == Path::kTma && plan.stream_k_tiles > 0 && tuning.max_ctas == 0 &&
      ((c.m + gd::kBlockM - 1) / gd::kBlockM + plan.cluster_m - 1) / plan.cluster_m == 1;
  const bool right_workers =
      !one_row_split || plan.ctas <= gd::kSplitPiecesPerTile * tiles_n * plan.cluster_m;
  if (c.candidate == 0)
    plan_matches = plan.config == default_plan.config && plan.cluster_m == default_plan.cluster_m &&
                   (plan.stream_k_tiles > 0) == (default_plan.stream_k_tiles > 0) &&
                   plan.ctas == default_plan.ctas;
  const bool ok = s.unwritten == 0 && s.padding_written == 0 && rel <= bound &&
                  std::isfinite(rel) && same_bits && right_kernel && right_workers && plan_matches;
  std::printf("%s %-44s rel %.2e (bound %.1e)  config %d cluster %d ctas %d sk-tiles %d%s%s",
              ok ? "PASS" : "FAIL", c.name.c_str(), rel, bound, plan.config, plan.cluster_m,
              plan.ctas, plan.stream_k_tiles, plan.gpc_order ? " gpc-order" : "",
              plan.plain_epilogue ? " plain" : "");
  if (!same_bits) std::printf("  SECOND RUN DIFFERS (not deterministic)");
  if (!plan_matches)
    std::printf("  CANDIDATE 0 IS NOT gemm()'S PLAN (config %d cluster %d ctas %d sk-tiles %d)",
                default_plan.config, default_plan.cluster_m, default_plan.ctas,
                default_plan.stream_k_tiles);
  if (!right_kernel)
    std::printf("  RAN THE %s KERNEL (expected the %s one)",
                plan.plain_epilogue ? "PLAIN" : "GENERAL", want_plain ? "plain" : "general");
  if (!right_workers)
    std::printf("  %d CTAS FOR %lld SPLIT TILES OF ONE ROW (at most %lld per tile)", plan.ctas,
                static_cast<long long>(tiles_n), static_cast<long long>(gd::kSplitPiecesPerTile));
  if (s.unwritten)
    std::printf("  UNWRITTEN %llu elements (first at row %lld col %lld)", s.unwritten,
                static_cast<long long>(s.first_bad / static_cast<unsigned long long>(c.n)),
                static_cast<long long>(s.first_bad % static_cast<unsigned long long>(c.n)));
  if (s.padding_written) std::printf("  WROTE %llu padding elements", s.padding_written);
  std::printf("\n");
  std::fflush(stdout);
  return ok;
}

std::string layout_code(MatrixLayout a, MatrixLayout b) {
  std::string s;
  s += a == MatrixLayout::kRowMajor ? 'r' : 'c';
  s += b == MatrixLayout::kRowMajor ? 'r' : 'c';
  return s;
}

// B's layout in the per-configuration cases: row-major (MN-major tiles) unless the configuration
// needs a column-major B (tma::ops::gemm_config_needs_k_major_b: the row-box widths).
MatrixLayout b_layout_for(int config) {
  return tma::ops::gemm_config_needs_k_major_b(tma::ops::kGemmConfigs[config])
             ? MatrixLayout::kColMajor
             : MatrixLayout::kRowMajor;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const MatrixLayout kLayouts[] = {MatrixLayout::kRowMajor, MatrixLayout::kColMajor};
  const DataType kIn[] = {DataType::kBFloat16, DataType::kFloat16};
  const DataType kOut[] = {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32};
  const Path kPaths[] = {Path::kTma, Path::kOrdinary};
  auto path_name = [](Path p) { return p == Path::kTma ? "tma" : "ord"; };
  auto add = [&](Case c, const std::string& family) {
    // A TMA-only configuration (a wide ping-pong tile) has no ordinary-path kernel: gemm refuses
    // it there (tests/gemm/test_gemm_host.cpp checks the error).
    if (c.path == Path::kOrdinary && c.tuning.config >= 0 &&
        tma::ops::gemm_config_tma_only(tma::ops::kGemmConfigs[c.tuning.config]))
      return;
    // A swapped-operand configuration runs only plain, data-parallel, K-major products
    // (tma::ops::gemm_config_swap_supported; the host tests check gemm's error for the rest): the
    // loops over every configuration skip it elsewhere, and its own cases are swap/ below.
    if (c.tuning.config >= 0 &&
        !tma::ops::gemm_config_swap_supported(
            tma::ops::kGemmConfigs[c.tuning.config], c.a_layout == MatrixLayout::kRowMajor,
            c.b_layout == MatrixLayout::kColMajor,
            c.out == c.ab && c.alpha == 1.0f && c.beta == 0.0f, c.tuning.stream_k == 2))
      return;
    c.name = family + "/" + path_name(c.path) + "/" + dtype_name(c.ab) + "->" + dtype_name(c.out) +
             "/" + layout_code(c.a_layout, c.b_layout) + "/" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "x" + std::to_string(c.k);
    cases.push_back(c);
  };

  // Every layout x input type x output type x path on a ragged shape (no extent a multiple of
  // any tile size) with padded leading dimensions, and again at a smaller ragged shape (the
  // bf16 -> bf16 and fp16 -> fp32 ones of those also under --quick).
  for (Path p : kPaths)
    for (DataType in : kIn)
      for (DataType out : kOut)
        for (MatrixLayout al : kLayouts)
          for (MatrixLayout bl : kLayouts) {
            Case c{};
            c.m = 1000, c.n = 777, c.k = 1111;
            c.a_layout = al, c.b_layout = bl, c.ab = in, c.out = out, c.path = p, c.pad = 8;
            add(c, "ragged");
            c.m = 200, c.n = 136, c.k = 100, c.pad = 0;
            c.quick = (in == DataType::kBFloat16 && out == DataType::kBFloat16) ||
                      (in == DataType::kFloat16 && out == DataType::kFloat32);
            add(c, "small");
          }
  // Tiny: a single row / column, K below one k-block, K = 1.
  const std::int64_t kTiny[][3] = {{1, 8, 8}, {1, 8, 16}, {3, 8, 24}, {1, 1, 1}, {5, 3, 7}};
  for (const auto& t : kTiny)
    for (Path p : kPaths)
      for (MatrixLayout al : kLayouts)
        for (MatrixLayout bl : kLayouts)
          for (DataType out : {DataType::kBFloat16, DataType::kFloat32}) {
            Case c{};
            c.m = t[0], c.n = t[1], c.k = t[2];
            c.a_layout = al, c.b_layout = bl, c.ab = DataType::kBFloat16, c.out = out, c.path = p;
            c.quick = out == DataType::kBFloat16 && (t[1] != 8 || t[2] == 8);
            add(c, "tiny");
          }
  // alpha / beta: C separate and C == D (in place), every output type, both paths.
  for (Path p : kPaths)
    for (DataType out : kOut)
      for (CMode mode : {CMode::kSeparate, CMode::kInPlace})
        for (int quick = 0; quick < 2; ++quick) {
          Case c{};
          c.m = quick ? 190 : 1000, c.n = quick ? 264 : 777, c.k = quick ? 72 : 1111;
          c.a_layout = quick ? MatrixLayout::kColMajor : MatrixLayout::kRowMajor;
          c.b_layout = MatrixLayout::kRowMajor;
          c.ab = DataType::kFloat16, c.out = out, c.path = p;
          c.alpha = 1.25f, c.beta = -0.75f, c.c_mode = mode, c.quick = quick == 1;
          add(c, mode == CMode::kInPlace ? "beta-inplace" : "beta");
        }
  // Back-to-back launches that depend on each other (Case::chain), with and without programmatic
  // dependent launch: data-parallel, stream-K, the ordinary path.
  for (bool pdl : {true, false})
    for (int variant = 0; variant < 3; ++variant) {
      Case c{};
      c.m = variant == 0 ? 2048 : 1000;
      c.n = variant == 0 ? 2048 : 777;
      c.k = variant == 0 ? 256 : 1111;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
      c.ab = DataType::kBFloat16, c.out = DataType::kFloat32;
      c.path = variant == 2 ? Path::kOrdinary : Path::kTma;
      c.alpha = 1.0f, c.beta = 1.0f, c.c_mode = CMode::kInPlace, c.chain = true;
      c.tuning.pdl = pdl, c.tuning.stream_k = variant == 1 ? 2 : 0, c.quick = true;
      add(c, std::string("chain-") + (pdl ? "pdl" : "plain") + (variant == 1 ? "-sk" : ""));
    }
  // alpha != 1 with beta == 0: the epilogue's scaling path without C (alpha == 1, the default of
  // the cases above and below, leaves the multiply out), every output type and configuration,
  // both paths.
  for (Path p : kPaths)
    for (DataType out : kOut)
      for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
        Case c{};
        c.m = 1000, c.n = 777, c.k = 1111;
        c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
        c.ab = DataType::kBFloat16, c.out = out, c.path = p, c.tuning.config = config;
        c.alpha = -2.5f, c.quick = config == 0;
        add(c, "alpha");
      }
  // The row-box widths (block_n not a multiple of 64): B as one box of rows (half per CTA in a
  // cluster) and a narrower last chunk per tile (its own TMA boxes for D and C). N = 4 block_n -
  // 8 ends the last tile column inside that chunk (16-bit) or inside a whole one; every output
  // type, beta with C separate and in place, clusters of 1 and 2 (m = 300: 3 tile rows, the last
  // cluster's second CTA idle), both paths; and N = 2 block_n + 16 (the last tile's 16 columns,
  // the rest past n).
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
    if (!tma::ops::gemm_config_needs_k_major_b(tma::ops::kGemmConfigs[config])) continue;
    const std::int64_t block_n = tma::ops::kGemmConfigs[config].block_n;
    for (Path p : kPaths)
      for (DataType out : kOut)
        for (int cluster : {1, 2})
          for (CMode mode : {CMode::kSeparate, CMode::kInPlace}) {
            if (p == Path::kOrdinary && cluster == 2) continue;
            Case c{};
            c.m = 300, c.n = 4 * block_n - 8, c.k = 200;
            c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
            c.ab = DataType::kBFloat16, c.out = out, c.path = p;
            c.tuning.config = config, c.tuning.cluster_m = cluster;
            c.alpha = 1.5f, c.beta = -0.5f, c.c_mode = mode;
            c.quick = out != DataType::kFloat16 && mode == CMode::kSeparate;
            add(c, "rowbox/cfg" + std::to_string(config) + "-cl" + std::to_string(cluster) +
                       (mode == CMode::kInPlace ? "-inplace" : ""));
            if (mode == CMode::kSeparate) {
              c.n = 2 * block_n + 16, c.beta = 0.0f, c.alpha = 1.0f, c.quick = false;
              c.a_layout = MatrixLayout::kColMajor;
              add(c, "rowbox/cfg" + std::to_string(config) + "-cl" + std::to_string(cluster));
            }
          }
  }
  // K at and around one k-block; exact multiples of every tile.
  for (std::int64_t k : {40, 64, 65, 128})
    for (Path p : kPaths) {
      Case c{};
      c.m = 256, c.n = 512, c.k = k;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
      c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = p;
      c.quick = k == 40 || k == 65;
      add(c, "kblock");
    }
  // Each configuration explicitly, clusters of 1 and 2 (9 tile rows: the last cluster's second
  // CTA has no rows), grids capped to 2 or 3 CTAs so each CTA walks many tiles (the pipeline's
  // phases wrap many times), raster groups of 1 and 3.
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
    for (int cluster : {1, 2})
      for (int cap : {0, 2, 3})
        for (int group : {0, 1, 3}) {
          if (cap != 0 && group != 0) continue;
          Case c{};
          c.m = 1147, c.n = 600, c.k = 200;
          c.a_layout = MatrixLayout::kRowMajor, c.b_layout = b_layout_for(config);
          c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
          c.tuning.config = config, c.tuning.cluster_m = cluster, c.tuning.max_ctas = cap;
          c.tuning.raster_group = group;
          c.quick = cap == 3;
          add(c, "sched/cfg" + std::to_string(config) + "-cl" + std::to_string(cluster) + "-cap" +
                     std::to_string(cap) + "-g" + std::to_string(group));
        }
  // A K-major B goes in boxes of rows (the producer: block_n, or block_n / 2 per CTA of a
  // cluster, e.g. 96 of a 192-wide tile), a K-major A in one box of 128 rows, an MN-major one in
  // 64 x 64 atoms: the configurations that also take an MN-major B (sched above), with a
  // column-major B and either A, clusters of 1 and 2, capped grids (many tiles per CTA).
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
    if (b_layout_for(config) == MatrixLayout::kColMajor) continue;  // rowbox/ covers these
    for (int cluster : {1, 2})
      for (int cap : {0, 3})
        for (MatrixLayout a : kLayouts) {
          Case c{};
          c.m = 1147, c.n = 600, c.k = 200;
          c.a_layout = a, c.b_layout = MatrixLayout::kColMajor;
          c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
          c.tuning.config = config, c.tuning.cluster_m = cluster, c.tuning.max_ctas = cap;
          c.quick = cap == 3;
          add(c, "boxes/cfg" + std::to_string(config) + "-cl" + std::to_string(cluster) + "-cap" +
                     std::to_string(cap));
        }
  }
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
    Case c{};
    c.m = 1147, c.n = 600, c.k = 200;
    c.a_layout = MatrixLayout::kColMajor, c.b_layout = MatrixLayout::kColMajor;
    c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = Path::kOrdinary;
    c.tuning.config = config, c.tuning.max_ctas = 3;
    add(c, "sched/ord-cfg" + std::to_string(config) + "-cap3");
  }
  // The plain kernels (D in the inputs' type, alpha 1, beta 0: gemm_kernel.cuh, kPlain) of each
  // configuration, both input types, both A layouts: ragged, clusters of 2, stream-K forced on and
  // the grid capped (partial and finishing units, many per CTA); the ordinary path's too. The
  // cases with fp32 outputs or alpha / beta above run the same configurations' other kernels.
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
    for (DataType in : kIn)
      for (MatrixLayout al : kLayouts) {
        Case c{};
        c.m = 1147, c.n = 600, c.k = 1500;
        c.a_layout = al, c.b_layout = b_layout_for(config);
        c.ab = in, c.out = in, c.path = Path::kTma;
        c.tuning.config = config, c.tuning.cluster_m = 2, c.tuning.stream_k = 2;
        c.tuning.max_ctas = 6;
        c.quick = al == MatrixLayout::kRowMajor && in == DataType::kFloat16;
        add(c, "plain/cfg" + std::to_string(config) + "-" + dtype_name(in) + "-" +
                   layout_code(al, c.b_layout));
        c.path = Path::kOrdinary, c.tuning.cluster_m = 1;
        add(c, "plain/ord-cfg" + std::to_string(config) + "-" + dtype_name(in) + "-" +
                   layout_code(al, c.b_layout));
      }
  // Large: 2048^3 with each configuration and 4096^3, both paths, both outputs.
  for (Path p : kPaths)
    for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
      Case c{};
      c.m = c.n = c.k = 2048;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = b_layout_for(config);
      c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = p;
      c.tuning.config = config;
      add(c, "large/cfg" + std::to_string(config));
    }
  for (Path p : kPaths)
    for (DataType out : {DataType::kBFloat16, DataType::kFloat32})
      for (MatrixLayout al : kLayouts) {
        Case c{};
        c.m = c.n = c.k = 4096;
        c.a_layout = al, c.b_layout = al == MatrixLayout::kRowMajor ? MatrixLayout::kColMajor
                                                                    : MatrixLayout::kRowMajor;
        c.ab = DataType::kBFloat16, c.out = out, c.path = p;
        add(c, "large");
      }
  // Stream-K forced on (tuning.stream_k = 2): ragged shapes in every layout, a tall K over two
  // tiles (65 k-blocks each split over up to 130 CTAs: 64 peers per finisher), M = 1, the
  // N = 2112 LLM shapes that quantize badly on 132 SMs, alpha / beta, both configurations, grids
  // capped so that each CTA walks several units, the ordinary path, a caller's workspace.
  const auto streamk = [&](Case c, const std::string& tag) {
    c.tuning.stream_k = 2;
    c.tuning.cluster_m = 1;  // clusters of 2: streamk2/ below
    add(c, "streamk/" + tag);
  };
  for (DataType out : {DataType::kBFloat16, DataType::kFloat32})
    for (MatrixLayout al : kLayouts)
      for (MatrixLayout bl : kLayouts) {
        Case c{};
        c.m = 1000, c.n = 777, c.k = 1111;
        c.a_layout = al, c.b_layout = bl, c.path = Path::kTma, c.pad = 8;
        c.ab = out == DataType::kFloat32 ? DataType::kFloat16 : DataType::kBFloat16, c.out = out;
        c.quick = al == MatrixLayout::kRowMajor && bl == MatrixLayout::kColMajor;
        streamk(c, "ragged");
      }
  for (DataType out : {DataType::kBFloat16, DataType::kFloat32}) {
    Case c{};
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
    c.ab = out == DataType::kFloat32 ? DataType::kFloat16 : DataType::kBFloat16, c.out = out;
    c.path = Path::kTma;
    c.m = 200, c.n = 136, c.k = 4100, c.quick = true;
    streamk(c, "tallk");
    c.m = 1, c.n = 777, c.k = 4100, c.quick = true;
    streamk(c, "m1");
    // One tile row split into 3 pieces a tile aligned to the tiles (gemm_schedule.hpp:
    // make_aligned_schedule) where K has just 2 x 3 k-blocks: the finisher takes 4, each peer 1.
    c.m = 77, c.n = 1000, c.k = 371, c.quick = true;
    streamk(c, "m77-shortk");
    {
      Case c2 = c;
      c2.tuning.stream_k = 2, c2.tuning.cluster_m = 2;
      add(c2, "streamk2/m77-shortk");
      // The ping-pongs: 128 x 128 (its finisher's flag warp polls the peers' flags,
      // gemm_config.hpp: kPrepollFlags) and 128 x 176 (its finisher polls them itself).
      for (int config : {2, 7}) {
        c2.tuning.config = config, c2.tuning.cluster_m = 1;
        add(c2, "streamk/m77-shortk-cfg" + std::to_string(config));
      }
    }
    c.quick = false;
    for (std::int64_t m : {1024, 2048, 4096}) {
      c.m = m, c.n = 2112, c.k = 7168;
      streamk(c, "llm");
    }
    // The heuristic's choice (gemm_config.hpp: choose_plan): 1024 x 2112 data-parallel (128 x 136
    // since session 30, cluster 2), 2048 x 2112 data-parallel (two waves of 128 x 136 since
    // session 37, cluster 2; split 128 x 192 tiles before, still run above by streamk()); for
    // bf16 outputs (plain products) both since session 39 on 256 x 64 swapped tiles (config 10,
    // cluster 1: the swap rule) where the GPU has the DRAM bandwidth for them (the H200; since
    // session 44 the H100 keeps the 128 x 136 tiles); 128 x 2112 split (128 x 128, cluster 1);
    // each case prints the plan it ran.
    c.tuning.stream_k = 0;
    for (std::int64_t m : {128, 1024, 2048}) {
      c.m = m, c.n = 2112, c.k = 7168;
      add(c, "streamk-auto/llm");
    }
    // One tile row split, its workers capped at 3 per tile (gemm_config.hpp:
    // one_row_split_workers): 32 tiles of 128 x 128, 96 CTAs on 132 SMs.
    c.m = 128, c.n = 4096, c.k = 4096, c.quick = out == DataType::kBFloat16;
    add(c, "streamk-auto/llm");
    c.quick = false;
  }
  for (CMode mode : {CMode::kSeparate, CMode::kInPlace}) {
    Case c{};
    c.m = 1000, c.n = 777, c.k = 1111;
    c.a_layout = MatrixLayout::kColMajor, c.b_layout = MatrixLayout::kRowMajor;
    c.ab = DataType::kFloat16, c.out = DataType::kFloat16, c.path = Path::kTma;
    c.alpha = 1.25f, c.beta = -0.75f, c.c_mode = mode, c.quick = mode == CMode::kInPlace;
    streamk(c, mode == CMode::kInPlace ? "beta-inplace" : "beta");
  }
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
    for (int cap : {0, 3, 7}) {
      Case c{};
      c.m = 1147, c.n = 600, c.k = 1500;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = b_layout_for(config);
      c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
      c.tuning.config = config, c.tuning.max_ctas = cap, c.quick = cap == 3;
      streamk(c, "cfg" + std::to_string(config) + "-cap" + std::to_string(cap));
    }
  for (MatrixLayout al : kLayouts) {
    Case c{};
    c.m = 1000, c.n = 777, c.k = 1111;
    c.a_layout = al, c.b_layout = MatrixLayout::kColMajor;
    c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = Path::kOrdinary;
    c.quick = al == MatrixLayout::kRowMajor;
    streamk(c, "ord");
  }
  for (int cap : {0, 5}) {
    Case c{};
    c.m = 1000, c.n = 777, c.k = 1111;
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kRowMajor;
    c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
    c.tuning.max_ctas = cap, c.own_workspace = true, c.quick = true;
    streamk(c, "workspace-cap" + std::to_string(cap));
  }
  // Stream-K forced on with 2-CTA clusters (tuning.cluster_m = 2): both CTAs of a cluster run the
  // same pieces on their two tile rows, B multicast, same-rank slots. Ragged shapes in every
  // layout (bf16 out; fp32 out in one), odd tile-row counts where the last cluster's second CTA
  // has no rows (m = 1147: 9 tile rows; m = 300: 3; m = 1050: 9, and the 9th row's second
  // warpgroup has none either), m = 129 (the second row holds one row), both configurations,
  // grids capped to 1 .. 3 clusters (max_ctas counts CTAs), tall K (65 k-blocks a tile, cut into
  // up to 33 pieces over 66 clusters),
  // alpha / beta with C separate and in place, the LLM shapes, a caller's workspace (poisoned)
  // with the second run compared bit for bit.
  const auto streamk2 = [&](Case c, const std::string& tag) {
    c.tuning.stream_k = 2;
    c.tuning.cluster_m = 2;
    add(c, "streamk2/" + tag);
  };
  for (MatrixLayout al : kLayouts)
    for (MatrixLayout bl : kLayouts) {
      Case c{};
      c.m = 1000, c.n = 777, c.k = 1111;
      c.a_layout = al, c.b_layout = bl, c.path = Path::kTma, c.pad = 8;
      c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16;
      c.quick = al == MatrixLayout::kRowMajor && bl == MatrixLayout::kColMajor;
      streamk2(c, "ragged");
      if (al == MatrixLayout::kColMajor && bl == MatrixLayout::kRowMajor) {
        c.ab = DataType::kFloat16, c.out = DataType::kFloat32;
        streamk2(c, "ragged");
      }
    }
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
    for (std::int64_t m : {1147, 300, 1050, 129})
      for (int cap : {0, 3, 6}) {
        if (cap != 0 && m != 1147) continue;
        Case c{};
        c.m = m, c.n = 600, c.k = 1500;
        c.a_layout = MatrixLayout::kRowMajor, c.b_layout = b_layout_for(config);
        c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
        c.tuning.config = config, c.tuning.max_ctas = cap;
        c.quick = (m == 1147 && cap == 3) || (m == 300 && config == 1);
        streamk2(c, "odd-cfg" + std::to_string(config) + "-cap" + std::to_string(cap));
      }
  for (DataType out : {DataType::kBFloat16, DataType::kFloat32}) {
    Case c{};
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
    c.ab = out == DataType::kFloat32 ? DataType::kFloat16 : DataType::kBFloat16, c.out = out;
    c.path = Path::kTma;
    c.m = 200, c.n = 136, c.k = 4100, c.quick = true;
    streamk2(c, "tallk");
    c.quick = false;
    for (std::int64_t m : {512, 1024, 2048}) {
      c.m = m, c.n = 2112, c.k = 7168;
      streamk2(c, "llm");
    }
  }
  for (CMode mode : {CMode::kSeparate, CMode::kInPlace}) {
    Case c{};
    c.m = 1000, c.n = 777, c.k = 1111;
    c.a_layout = MatrixLayout::kColMajor, c.b_layout = MatrixLayout::kRowMajor;
    c.ab = DataType::kFloat16, c.out = DataType::kFloat16, c.path = Path::kTma;
    c.alpha = 1.25f, c.beta = -0.75f, c.c_mode = mode, c.quick = mode == CMode::kInPlace;
    streamk2(c, mode == CMode::kInPlace ? "beta-inplace" : "beta");
  }
  for (int cap : {0, 6}) {
    Case c{};
    c.m = 1147, c.n = 777, c.k = 1111;
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kRowMajor;
    c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
    c.tuning.max_ctas = cap, c.own_workspace = true, c.quick = true;
    streamk2(c, "workspace-cap" + std::to_string(cap));
  }
  // Swapped operands (GemmConfig::swap_ab: 256 x 64 tiles, wgmma M on the tile's columns, the
  // transposed epilogue through stmatrix .trans): plain products (D in the inputs' type, alpha 1,
  // beta 0), A row-major, B column-major, both input types; ragged M, N and K (no extent a multiple
  // of the tile: m = 1147 is 4.5 tile rows, so a cluster of 2's last CTA has one partial row and
  // of 4 none), clusters of 1, 2 and 4, grids capped to 1 .. 3 clusters (each CTA walks many tiles,
  // the pipeline's phases wrap many times; ping-pong: both warpgroups take turns), raster groups of
  // 1 and 3, tiny shapes, K below one k-block, padded leading dimensions, the target shapes.
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config) {
    if (!tma::ops::kGemmConfigs[config].swap_ab) continue;
    const std::string tag = "swap/cfg" + std::to_string(config);
    for (DataType in : kIn)
      for (int cluster : {1, 2, 4})
        for (int cap : {0, 1, 3})
          for (int group : {0, 1, 3}) {
            if (cap != 0 && group != 0) continue;
            Case c{};
            c.m = 1147, c.n = 600, c.k = 1500;
            c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
            c.ab = in, c.out = in, c.path = Path::kTma, c.pad = cap == 0 && group == 0 ? 8 : 0;
            c.tuning.config = config, c.tuning.cluster_m = cluster;
            c.tuning.max_ctas = cap * cluster, c.tuning.raster_group = group;
            c.quick = in == DataType::kBFloat16 && (cap == 3 || (cap == 0 && group == 0));
            add(c, tag + "-cl" + std::to_string(cluster) + "-cap" + std::to_string(cap) + "-g" +
                       std::to_string(group));
          }
    const std::int64_t kShapes[][3] = {{1, 8, 8},          {3, 8, 24},        {255, 72, 40},
                                       {257, 65, 65},      {300, 136, 200},   {2048, 2048, 256},
                                       {1024, 2112, 7168}, {2048, 2112, 7168}};
    for (const auto& t : kShapes)
      for (DataType in : kIn) {
        Case c{};
        c.m = t[0], c.n = t[1], c.k = t[2];
        c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
        c.ab = in, c.out = in, c.path = Path::kTma, c.tuning.config = config;
        c.quick = in == DataType::kFloat16 && t[2] < 1000;
        add(c, tag);
      }
  }
  // Clusters of 4 (tuning.cluster_m = 4): four CTAs on adjacent tile rows share B, each loading
  // its quarter (K-major B: block_n / 4 rows rounded up to 8, the last share overlapping the one
  // before for 144, 176 and 240; MN-major B: its share of the 64-column atoms, none
  // for two of the four CTAs of a 128-wide tile) and multicasting it to all four; every stage is
  // released to all four producers. Every configuration that splits B four ways
  // (gemm_config_supports_cluster), with B row-major where it may be and column-major, either A;
  // tile rows that leave 1 .. 3 CTAs of the last cluster without rows (m = 1147: 9 rows; 300: 3;
  // 129: 2, the second holding one row); grids capped to 1 .. 2 clusters (max_ctas counts CTAs:
  // 4 and 8), so each CTA walks many tiles; stream-K with the same-rank slots of 4 CTAs; 2048^3.
  for (int config = 0; config < tma::ops::kNumGemmConfigs; ++config)
    for (MatrixLayout bl : kLayouts) {
      const bool k_major_b = bl == MatrixLayout::kColMajor;
      if (!tma::ops::gemm_config_allowed(tma::ops::kGemmConfigs[config], 4, k_major_b)) continue;
      const std::string tag = "cfg" + std::to_string(config) + (k_major_b ? "-kb" : "-mb");
      for (std::int64_t m : {1147, 300, 129})
        for (int cap : {0, 4, 8}) {
          if (cap != 0 && m != 1147) continue;
          Case c{};
          c.m = m, c.n = 600, c.k = 200;
          c.a_layout = k_major_b ? MatrixLayout::kColMajor : MatrixLayout::kRowMajor;
          c.b_layout = bl;
          c.ab = DataType::kBFloat16, c.out = DataType::kFloat32, c.path = Path::kTma;
          c.tuning.config = config, c.tuning.cluster_m = 4, c.tuning.max_ctas = cap;
          c.quick = cap == 4 || m == 300;
          add(c, "cl4/" + tag + "-m" + std::to_string(m) + "-cap" + std::to_string(cap));
          c.k = 1500, c.tuning.stream_k = 2, c.quick = cap == 8;
          add(c, "cl4/sk-" + tag + "-m" + std::to_string(m) + "-cap" + std::to_string(cap));
        }
      Case c{};
      c.m = c.n = c.k = 2048;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = bl;
      c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = Path::kTma;
      c.tuning.config = config, c.tuning.cluster_m = 4;
      add(c, "cl4/large-" + tag);
    }
  for (CMode mode : {CMode::kSeparate, CMode::kInPlace}) {
    Case c{};
    c.m = 1000, c.n = 777, c.k = 1111;
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor, c.pad = 8;
    c.ab = DataType::kFloat16, c.out = DataType::kFloat16, c.path = Path::kTma;
    c.alpha = 1.25f, c.beta = -0.75f, c.c_mode = mode, c.quick = mode == CMode::kInPlace;
    c.tuning.cluster_m = 4;  // the plan's configuration among those that split B four ways
    add(c, std::string("cl4/auto-beta") + (mode == CMode::kInPlace ? "-inplace" : ""));
    c.tuning.stream_k = 2;
    add(c, std::string("cl4/auto-sk-beta") + (mode == CMode::kInPlace ? "-inplace" : ""));
  }
  {
    Case c{};
    c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
    c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = Path::kTma;
    c.m = 1024, c.n = 2112, c.k = 7168, c.tuning.cluster_m = 4, c.tuning.stream_k = 2;
    add(c, "cl4/llm-sk");
    // The 128 x 144 tile there in clusters of 4 (overlapping B shares: 40-row boxes at rows 0,
    // 40, 80, 104), data-parallel: 30 cluster tiles.
    c.tuning.config = 8, c.tuning.stream_k = 1;
    add(c, "cl4/llm-cfg8");
    c.tuning.config = -1, c.tuning.stream_k = 2;  // back to the plan's configuration, split
    c.m = 1147, c.n = 777, c.k = 1111, c.tuning.max_ctas = 8, c.own_workspace = true;
    c.quick = true;
    add(c, "cl4/workspace-cap8");
  }
  // The identity worker order (GemmTuning::gpc_order = false; every case above runs the
  // GPC-aware order where the device was measured: gemm_order.hpp): data-parallel and stream-K,
  // clusters of 1, 2 and 4.
  for (int cluster : {0, 1, 4})
    for (int sk : {1, 2}) {
      Case c{};
      c.m = cluster == 0 && sk == 1 ? 2048 : 1147;
      c.n = cluster == 0 && sk == 1 ? 2048 : 777;
      c.k = cluster == 0 && sk == 1 ? 2048 : 1111;
      c.a_layout = MatrixLayout::kRowMajor, c.b_layout = MatrixLayout::kColMajor;
      c.ab = DataType::kBFloat16, c.out = DataType::kBFloat16, c.path = Path::kTma;
      c.tuning.cluster_m = cluster, c.tuning.stream_k = sk, c.tuning.gpc_order = false;
      c.quick = cluster == 0 && sk == 2;
      add(c, "order-id/cl" + std::to_string(cluster) + (sk == 2 ? "-sk" : "-dp"));
    }
  // tma::ops::gemm_candidates: every plan it offers (up to 8) runs and is right, and the first is
  // gemm()'s own. A ragged plain product with K long enough to split, a target shape (the swap
  // rule's), a general one (fp16 in, fp32 out, alpha and beta, A column-major, B row-major: the
  // configurations of 64-column atoms only), the ordinary path, and a tiny one (edge kernel only).
  struct CandidateShape {
    std::int64_t m, n, k;
    MatrixLayout a, b;
    DataType in, out;
    Path path;
    float alpha, beta;
    const char* tag;
  };
  const CandidateShape kCandidateShapes[] = {
      {1147, 2000, 3000, MatrixLayout::kRowMajor, MatrixLayout::kColMajor, DataType::kBFloat16,
       DataType::kBFloat16, Path::kTma, 1.0f, 0.0f, "ragged"},
      {1024, 2112, 7168, MatrixLayout::kRowMajor, MatrixLayout::kColMajor, DataType::kBFloat16,
       DataType::kBFloat16, Path::kTma, 1.0f, 0.0f, "target"},
      {777, 1111, 2222, MatrixLayout::kColMajor, MatrixLayout::kRowMajor, DataType::kFloat16,
       DataType::kFloat32, Path::kTma, 0.5f, 0.25f, "general"},
      {600, 700, 2100, MatrixLayout::kRowMajor, MatrixLayout::kColMajor, DataType::kBFloat16,
       DataType::kBFloat16, Path::kOrdinary, 1.0f, 0.0f, "ordinary"},
      {1, 4, 64, MatrixLayout::kRowMajor, MatrixLayout::kColMajor, DataType::kBFloat16,
       DataType::kBFloat16, Path::kTma, 1.0f, 0.0f, "tiny"},
  };
  for (const CandidateShape& sh : kCandidateShapes)
    for (int i = 0; i < 8; ++i) {
      Case c{};
      c.m = sh.m, c.n = sh.n, c.k = sh.k;
      c.a_layout = sh.a, c.b_layout = sh.b;
      c.ab = sh.in, c.out = sh.out, c.path = sh.path;
      c.alpha = sh.alpha, c.beta = sh.beta;
      c.c_mode = sh.beta != 0.0f ? CMode::kSeparate : CMode::kNone;
      c.candidate = i;
      c.quick = std::string(sh.tag) == "ragged" && i < 3;
      add(c, std::string("candidates/") + sh.tag + "-" + std::to_string(i));
    }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, list = false;
  std::string filter;
  std::uint64_t seed =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--list") {
      list = true;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--list] [--filter SUBSTRING] [--seed N]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<Case> cases;
  for (const Case& c : all_cases())
    if ((!quick || c.quick) && (filter.empty() || c.name.find(filter) != std::string::npos))
      cases.push_back(c);
  if (list) {
    for (const Case& c : cases)
      std::printf("%s\n", c.name.c_str());
    return 0;
  }

  cudaDeviceProp prop{};
  if (const int skip = tma::test::skip_unless_sm90("gpu_gemm", &prop)) return skip;
  std::printf("gpu_gemm: %s, %d SMs; seed %" PRIu64 "; %zu cases%s\n", prop.name,
              prop.multiProcessorCount, seed, cases.size(), quick ? " (--quick)" : "");
  int failures = 0, index = 0;
  for (const Case& c : cases) {
    if (!run_case(c, seed + static_cast<std::uint64_t>(index++) * 7919)) ++failures;
  }
  std::printf("gpu_gemm: %d of %zu cases passed, %d failed (seed %" PRIu64 ")\n",
              static_cast<int>(cases.size()) - failures, cases.size(), failures, seed);
  return failures == 0 ? 0 : 1;
}
