// tma-bench gemm: D = A B (bf16 in and out, fp32 accumulation) through tma::ops::gemm's TMA path
// (ours, the plan of its heuristic), against cuBLASLt (the fastest of the algorithms its heuristic
// offers, each tried briefly on the same buffers), with --tuned ours chosen the same way
// (tma_tuned: the fastest of tma::ops::gemm_candidates' plans), and our ordinary-loads
// path (Path::kOrdinary: cp.async, the baseline that says what TMA gains). --sweep adds every tile
// configuration x cluster size as variants (tma::ops::kGemmConfigs): the measurement behind the
// configuration table in gemm.hpp.
//
// Cases: squares 1024 .. 16384, and LLM projections: M (tokens) in {128, 512, 1024, 2048, 4096,
// 8192, 16384} x (N, K) in {(4096, 4096), (11008, 4096), (4096, 11008) (Llama-7B attention and
// MLP), (2112, 7168), (7168, 2048) (DeepSeek-V3 projections), (28672, 8192) (Llama-70B MLP)}.
// --quick: squares up to 4096 and M = 128 and 4096 with K = 4096. --layout picks how A and B are
// stored (default rc: A [M, K] row-major, B [N, K] row-major = column-major K x N, as nn.Linear
// holds weights).
//
// Not part of `tma-bench all`: it reports TFLOP/s, the full list takes minutes, and a hung GEMM
// kernel (the ordinary path has hung before: docs/perf-log.md) would stall every suite after it.
// A hang cannot be stopped from inside the process, so every step is logged before it is
// launched (Suite::log_steps) and the ordinary path runs last and can be left out (--no-ordinary).
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "gemm_check.hpp"
#include "runner.hpp"
#include "suite.hpp"
#include "tma/host/error.hpp"
#include "tma/ops/gemm.hpp"

namespace tma::bench {
namespace {

constexpr DataType kDtype = DataType::kBFloat16;
// cuBLASLt: its workspace, how many algorithms to ask the heuristic for, and the short timing of
// each (warm-up, runs) before the fastest gets the full policy.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
constexpr int kHeuristicAlgos = 8;
constexpr int kTrialWarmup = 2;
constexpr int kTrialReps = 5;
// Cluster sizes --sweep tries (GemmTuning::cluster_m; each configuration only where
// ops::gemm_config_allowed says it runs with the case's B).
constexpr int kSweepClusters[] = {1, 2, 4};

// The sweep's variants for a case, in timing order, each with its name (tma_ + the name in the
// JSON; --variants and --plan take them by it) and its tuning: per configuration, data-parallel
// in clusters of 1, 2 and 4 (cfgN_clC), then stream-K forced in clusters of 1 (cfgN_sk), 2 and 4
// (cfgN_sk2, cfgN_sk4: B multicast as data-parallel); only what ops::gemm_config_allowed lets
// run with the case's B, and a swapped-operand configuration data-parallel with A row-major
// (ops::gemm_config_swap_supported; the cases' D is bf16 = the inputs' type, alpha 1, beta 0).
struct Variant {
  std::string name;
  ops::GemmTuning tuning;
};
std::vector<Variant> sweep_variants(bool a_row_major, bool b_row_major) {
  std::vector<Variant> out;
  for (int config = 0; config < ops::kNumGemmConfigs; ++config) {
    for (const int stream_k : {1, 2}) {
      for (const int cluster : kSweepClusters) {
        if (!ops::gemm_config_allowed(ops::kGemmConfigs[config], cluster, !b_row_major)) continue;
        if (!ops::gemm_config_swap_supported(ops::kGemmConfigs[config], a_row_major, !b_row_major,
                                             true, stream_k == 2))
          continue;
        const std::string kind = stream_k == 1  ? "_cl" + std::to_string(cluster)
                                 : cluster == 1 ? std::string("_sk")
                                                : "_sk" + std::to_string(cluster);
        ops::GemmTuning t;
        t.config = config;
        t.cluster_m = cluster;
        t.stream_k = stream_k;  // 1: data-parallel, the configurations as such; 2: split
        out.push_back({"cfg" + std::to_string(config) + kind, t});
      }
    }
  }
  return out;
}

// The variant a --variants / --plan name asks for: a sweep variant by its name, or one with a
// raster suffix _gG (options.cpp: parse_variants), that variant with GemmTuning::raster_group G.
// nullopt: no such variant for this layout.
std::optional<Variant> find_variant(const std::vector<Variant>& variants, const std::string& name) {
  const std::size_t g = name.find("_g");
  const std::string base = name.substr(0, g);
  for (const Variant& v : variants) {
    if (v.name != base) continue;
    Variant out{name, v.tuning};
    if (g != std::string::npos) out.tuning.raster_group = std::stoi(name.substr(g + 2));
    return out;
  }
  return std::nullopt;
}

// ---- cases -----------------------------------------------------------------------------------

Case make_case(std::string family, const GemmDims& g, bool quick) {
  Case c;
  c.suite = "gemm";
  c.family = std::move(family);
  c.gemm = g;
  c.src =
      g.a_row_major ? contiguous_layout(kDtype, {g.m, g.k}) : contiguous_layout(kDtype, {g.k, g.m});
  c.dst = contiguous_layout(kDtype, {g.m, g.n});
  c.name = "gemm/" + c.family + "/" + std::string(dtype_name(kDtype)) + "/" + c.shape_label();
  c.quick = quick;
  return c;
}

std::vector<Case> gemm_cases(const Options& o) {
  const bool a_row = o.layout[0] == 'r';
  const bool b_row = o.layout[1] == 'r';
  std::vector<Case> cases;
  if (!o.shapes.empty()) {  // --shapes: only these
    for (const Options::GemmShape& s : o.shapes)
      cases.push_back(make_case("custom", {s.m, s.n, s.k, a_row, b_row}, true));
    return cases;
  }
  for (const std::int64_t s : {1024, 2048, 4096, 8192, 16384})
    cases.push_back(make_case("square", {s, s, s, a_row, b_row}, s <= 4096));
  struct Projection {
    std::int64_t n, k;
  };
  const Projection projections[] = {{4096, 4096}, {11008, 4096}, {4096, 11008},
                                    {2112, 7168}, {7168, 2048},  {28672, 8192}};
  for (const std::int64_t m : {128, 512, 1024, 2048, 4096, 8192, 16384}) {
    for (const Projection& p : projections) {
      const bool quick = (m == 128 || m == 4096) && p.k == 4096;
      cases.push_back(make_case("llm", {m, p.n, p.k, a_row, b_row}, quick));
    }
  }
  return cases;
}

// ---- cuBLASLt --------------------------------------------------------------------------------

// A failed cuBLASLt call. Not a CudaError: the context is fine, only this peer failed.
class CublasError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw CublasError(std::string(what) + " failed: " + cublasLtGetStatusName(s) + " (" +
                      cublasLtGetStatusString(s) + ")");
  }
}

// One cuBLASLt matmul problem of the case's shape and layouts, with the algorithms its heuristic
// offers. cuBLASLt is column-major, so it computes D^T (n x m) = B^T (n x k) A^T (k x m): its
// "A" is our B and its "B" our A, each read as stored (a row-major matrix is the column-major
// matrix of its transpose), and our row-major D is its column-major D^T.
class CublasGemm {
 public:
  explicit CublasGemm(const GemmDims& g) : g_(g) {
    try {
      setup();
    } catch (...) {
      release();
      throw;
    }
  }
  ~CublasGemm() { release(); }
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  int algorithms() const { return static_cast<int>(algos_.size()); }

  // Enqueues D = A B with algorithm `index` on `stream`.
  void run(const void* a, const void* b, void* d, int index, void* workspace,
           cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(cublasLtMatmul(handle_, op_, &alpha, b, lb_, a, la_, &beta, d, ld_, d, ld_,
                                &algos_[static_cast<std::size_t>(index)].algo, workspace,
                                kCublasWorkspaceBytes, stream),
                 "cublasLtMatmul");
  }

 private:
  void setup() {
    check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
    // Its "A" must be n x k: our row-major k x n B is exactly that column-major (op N); our
    // column-major k x n B is column-major k x n, transposed by the op (op T). Same for our A.
    const cublasOperation_t op_b = g_.b_row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t op_a = g_.a_row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
    check_cublas(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                 "cublasLtMatmulDescCreate");
    check_cublas(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof op_b),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
    check_cublas(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof op_a),
        "cublasLtMatmulDescSetAttribute(TRANSB)");
    auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    // Column-major rows x cols and leading dimension of each operand as stored.
    check_cublas(
        cublasLtMatrixLayoutCreate(&lb_, CUDA_R_16BF, u(g_.b_row_major ? g_.n : g_.k),
                                   u(g_.b_row_major ? g_.k : g_.n), g_.b_row_major ? g_.n : g_.k),
        "cublasLtMatrixLayoutCreate(B)");
    check_cublas(
        cublasLtMatrixLayoutCreate(&la_, CUDA_R_16BF, u(g_.a_row_major ? g_.k : g_.m),
                                   u(g_.a_row_major ? g_.m : g_.k), g_.a_row_major ? g_.k : g_.m),
        "cublasLtMatrixLayoutCreate(A)");
    check_cublas(cublasLtMatrixLayoutCreate(&ld_, CUDA_R_16BF, u(g_.n), u(g_.m), g_.n),
                 "cublasLtMatrixLayoutCreate(D)");
    check_cublas(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const std::size_t ws = kCublasWorkspaceBytes;
    check_cublas(cublasLtMatmulPreferenceSetAttribute(
                     pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                 "cublasLtMatmulPreferenceSetAttribute(workspace)");
    std::vector<cublasLtMatmulHeuristicResult_t> found(kHeuristicAlgos);
    int count = 0;
    check_cublas(cublasLtMatmulAlgoGetHeuristic(handle_, op_, lb_, la_, ld_, ld_, pref_,
                                                kHeuristicAlgos, found.data(), &count),
                 "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; i < count; ++i) {
      if (found[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
        algos_.push_back(found[static_cast<std::size_t>(i)]);
    }
  }

  void release() {
    // Destruction has no one to report to; each handle is released once.
    if (pref_) (void)cublasLtMatmulPreferenceDestroy(pref_);
    if (ld_) (void)cublasLtMatrixLayoutDestroy(ld_);
    if (la_) (void)cublasLtMatrixLayoutDestroy(la_);
    if (lb_) (void)cublasLtMatrixLayoutDestroy(lb_);
    if (op_) (void)cublasLtMatmulDescDestroy(op_);
    if (handle_) (void)cublasLtDestroy(handle_);
    pref_ = nullptr;
    ld_ = la_ = lb_ = nullptr;
    op_ = nullptr;
    handle_ = nullptr;
  }

  GemmDims g_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
};

// ---- one case --------------------------------------------------------------------------------

// B as stored: row-major [k, n], or column-major k x n = row-major [n, k].
TensorView b_layout(const GemmDims& g) {
  return g.b_row_major ? contiguous_layout(kDtype, {g.k, g.n})
                       : contiguous_layout(kDtype, {g.n, g.k});
}

// The buffers of one case: A, B and D per rotation set; the cuBLASLt workspace and tmakit's
// stream-K workspace (GemmArgs::workspace: allocated once here, as a caller that launches the same
// GEMM repeatedly would, so no launch allocates) as extras.
struct GemmBuffers {
  const Case& c;
  Workspace ws;
  DeviceBuffer sk = {};  // empty where nothing splits
  enum Index { kA, kB, kD };

  // The arguments of tma::ops::gemm for rotation set `set` (also what the verifier reads).
  ops::GemmArgs args(int set) const {
    const GemmDims& g = *c.gemm;
    ops::GemmArgs a;
    a.m = g.m;
    a.n = g.n;
    a.k = g.k;
    a.a = ws.buffer(set, kA);
    a.a_layout = g.a_row_major ? ops::MatrixLayout::kRowMajor : ops::MatrixLayout::kColMajor;
    a.lda = g.a_row_major ? g.k : g.m;
    a.b = ws.buffer(set, kB);
    a.b_layout = g.b_row_major ? ops::MatrixLayout::kRowMajor : ops::MatrixLayout::kColMajor;
    a.ldb = g.b_row_major ? g.n : g.k;
    a.d = ws.buffer(set, kD);
    a.ldd = g.n;
    if (sk.size() > 0) {
      a.workspace = sk.data();
      a.workspace_bytes = sk.size();
    }
    return a;
  }
  TensorView a_view(int set) const { return with_data(c.src, ws.buffer(set, kA)); }
  TensorView b_view(int set) const { return with_data(b_layout(*c.gemm), ws.buffer(set, kB)); }
  TensorView d_view(int set) const { return with_data(c.dst, ws.buffer(set, kD)); }
};

std::string plan_detail(ops::Path path, const ops::GemmPlan& p) {
  return std::string("tma::ops::gemm Path::") + (path == ops::Path::kTma ? "kTma" : "kOrdinary") +
         ", config " + std::to_string(p.config) + " (" +
         std::to_string(ops::gemm_config_block_m(ops::kGemmConfigs[p.config])) + "x" +
         std::to_string(ops::kGemmConfigs[p.config].block_n) +
         (ops::kGemmConfigs[p.config].swap_ab ? " swapped" : "") + ", " +
         std::to_string(ops::kGemmConfigs[p.config].stages) + " stages), cluster " +
         std::to_string(p.cluster_m) + ", raster group " + std::to_string(p.raster_group) + ", " +
         (p.stream_k_tiles > 0 ? "stream-K over " + std::to_string(p.stream_k_tiles) + " tiles, "
                               : std::string("data-parallel, ")) +
         std::to_string(p.ctas) + " CTAs" + (p.gpc_order ? ", GPC-aware order" : "");
}

// cuBLASLt: each algorithm its heuristic offers, timed briefly on the case's buffers; the fastest
// becomes the peer that is verified and timed with the others. A cuBLASLt failure becomes this
// peer's failure (in `failed`, and nullopt returned); the case's other implementations still count.
// `lt` owns the cuBLASLt handles the returned Impl's launch uses.
std::optional<Impl> prepare_cublas(const Case& c, Runner& r, const GemmBuffers& bufs,
                                   const std::function<std::string()>& check,
                                   std::optional<CublasGemm>& lt, ImplResult& failed) {
  failed.name = "cublasLt";
  failed.role = Role::kPeer;
  failed.detail = "cublasLtMatmul bf16 -> bf16, fp32 compute";
  try {
    lt.emplace(*c.gemm);
    void* lt_workspace = bufs.ws.extra(0);
    const CublasGemm* g = &*lt;
    auto launch_algo = [&bufs, &r, g, lt_workspace](int algo, int set) {
      g->run(bufs.ws.buffer(set, GemmBuffers::kA), bufs.ws.buffer(set, GemmBuffers::kB),
             bufs.ws.buffer(set, GemmBuffers::kD), algo, lt_workspace, r.stream());
    };
    double best_ms = 0;
    int best = -1;
    std::string trial_errors;
    for (int algo = 0; algo < g->algorithms(); ++algo) {
      try {
        const Timing t = r.time_trial(
            "try cublasLt algorithm " + std::to_string(algo + 1) + "/" +
                std::to_string(g->algorithms()),
            [&](int set) { launch_algo(algo, set); }, bufs.ws, kTrialWarmup, kTrialReps);
        if (best < 0 || t.stats.median_ms < best_ms) {
          best_ms = t.stats.median_ms;
          best = algo;
        }
      } catch (const CublasError& e) {
        // An algorithm the heuristic offered that does not run here: the others may.
        trial_errors += std::string(trial_errors.empty() ? "" : "; ") + e.what();
      }
    }
    const std::string offered = std::to_string(g->algorithms()) + " heuristic algorithms";
    if (best < 0) {
      throw CublasError("no cuBLASLt algorithm ran (" + offered + ")" +
                        (trial_errors.empty() ? "" : ": " + trial_errors));
    }
    return Impl{"cublasLt",
                failed.detail + ", fastest of " + offered + " (index " + std::to_string(best) + ")",
                Role::kPeer,
                [launch_algo, best](int set) { launch_algo(best, set); },
                bufs.d_view(0),
                {},
                check};
  } catch (const CublasError& e) {
    failed.failure = std::string("error: ") + e.what();
    std::printf("ERROR %s [cublasLt]: %s\n", c.name.c_str(), e.what());
    std::fflush(stdout);
    return std::nullopt;
  }
}

CaseResult run_gemm(const Case& c, Runner& r) {
  CaseResult result;
  result.c = &c;
  const GemmDims& g = *c.gemm;
  const DeviceSupport& gpu = r.machine().gpu;
  if (gpu.cc_major != 9 || gpu.cc_minor != 0) {
    // tma::ops::gemm would refuse every launch: say so once per case instead of failing it.
    result.status = Status::kSkipped;
    result.note =
        "tma::ops::gemm is built for sm_90a (wgmma, setmaxnreg): it runs on compute "
        "capability 9.0 (H100 / H200) only, this GPU is " +
        std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor);
    return result;
  }
  std::optional<Workspace> ws =
      r.allocate({footprint_bytes(c.src), footprint_bytes(b_layout(g)), footprint_bytes(c.dst)},
                 {kCublasWorkspaceBytes}, result);
  if (!ws) return result;
  GemmBuffers bufs{c, std::move(*ws)};
  // The largest stream-K workspace any variant below may use (the heuristic's choice, and both
  // configurations forced to split with either cluster size, either path; 0 where nothing
  // splits).
  std::size_t sk_bytes = 0;
  for (const ops::Path path : {ops::Path::kTma, ops::Path::kOrdinary}) {
    for (int config = -1; config < ops::kNumGemmConfigs; ++config) {
      for (const int cluster : kSweepClusters) {
        if (cluster > 1 && path != ops::Path::kTma) continue;  // no multicast on that path
        if (config >= 0 &&
            !ops::gemm_config_allowed(ops::kGemmConfigs[config], cluster, !c.gemm->b_row_major))
          continue;  // tma::ops::gemm would reject it
        if (config >= 0 && path != ops::Path::kTma &&
            ops::gemm_config_tma_only(ops::kGemmConfigs[config]))
          continue;                                                      // no ordinary-path kernel
        if (config >= 0 && ops::kGemmConfigs[config].swap_ab) continue;  // never splits
        ops::GemmTuning t;
        t.config = config;
        t.cluster_m = config < 0 ? 0 : cluster;
        t.stream_k = config < 0 ? 0 : 2;
        sk_bytes = std::max(sk_bytes, ops::gemm_workspace_bytes(bufs.args(0), path, t));
      }
    }
  }
  if (sk_bytes > 0) bufs.sk = DeviceBuffer(sk_bytes);
  for (int set = 0; set < bufs.ws.sets(); ++set) {
    r.fill_random(c, bufs.a_view(set), 2 * static_cast<std::uint64_t>(set));
    r.fill_random(c, bufs.b_view(set), 2 * static_cast<std::uint64_t>(set) + 1);
  }
  const std::uint64_t sample_seed = r.seed() ^ static_cast<std::uint64_t>(c.flops());
  auto check = [&]() {
    const ops::GemmArgs args = bufs.args(0);
    return gemm_failure(verify_gemm(args, sample_seed, r.stream()), args);
  };

  // Every implementation is verified, then all are timed together, round-robin
  // (Runner::measure_together): a GEMM heats the GPU enough to lower its clock, and timing them
  // one after the other would hand the later ones a slower GPU.
  std::vector<Impl> impls;
  // What gemm_tuned chose for each of ours, known after the first launch (stable storage: the
  // launches capture pointers into it).
  std::vector<std::optional<ops::GemmPlan>> plans(3 + 2 * std::size(kSweepClusters) *
                                                          ops::kNumGemmConfigs);
  std::vector<std::pair<std::size_t, ops::Path>> plan_of;  // impls index -> (plans index, path)
  // A tuning with the run's --no-pdl and --no-gpc-order applied.
  const auto with_options = [&r](ops::GemmTuning t) {
    if (r.options().no_pdl) t.pdl = false;
    if (r.options().no_gpc_order) t.gpc_order = false;
    return t;
  };
  auto ours = [&](std::string name, Role role, ops::Path path, ops::GemmTuning tuning) {
    tuning = with_options(tuning);
    const std::size_t slot = plan_of.size();
    std::optional<ops::GemmPlan>* plan = &plans.at(slot);
    auto launch = [&bufs, &r, plan, path, tuning](int set) {
      ops::GemmPlan p{};
      ops::gemm_tuned(bufs.args(set), r.stream(), path, tuning, &p);
      *plan = p;
    };
    plan_of.emplace_back(impls.size(), path);
    impls.push_back(
        Impl{std::move(name), "tma::ops::gemm", role, launch, bufs.d_view(0), {}, check});
  };
  // --plan: a variant in the plan's place for this shape (an experiment aid, named in the note).
  const std::vector<Variant> variants = sweep_variants(c.gemm->a_row_major, c.gemm->b_row_major);
  ops::GemmTuning plan_tuning;
  for (const Options::PlanOverride& o : r.options().plan_overrides) {
    if (o.shape.m != g.m || o.shape.n != g.n || o.shape.k != g.k) continue;
    if (!result.note.empty()) result.note += "; ";
    const std::optional<Variant> v = find_variant(variants, o.variant);
    if (!v) {
      result.note += "--plan " + o.variant +
                     " not applied: no such configuration, or not "
                     "allowed for this layout; the plan's own choice ran";
      continue;
    }
    plan_tuning = v->tuning;
    result.note += "plan overridden (--plan): " + o.variant;
  }
  ours("tma", Role::kOurs, ops::Path::kTma, plan_tuning);

  std::optional<CublasGemm> lt;
  ImplResult cublas_failed;
  std::optional<Impl> cublas = prepare_cublas(c, r, bufs, check, lt, cublas_failed);
  if (cublas) impls.push_back(std::move(*cublas));

  // tma_tuned (--tuned): ours chosen the way the cuBLASLt peer is. tma::ops::gemm_candidates offers
  // up to as many plans as cuBLASLt's heuristic is asked for algorithms (its first is the plan
  // "tma" runs); each is tried briefly on the case's buffers with the same warm-up and runs, and
  // the fastest is verified and timed with the others. "tma" against cuBLASLt is our heuristic
  // against cuBLASLt's timed choice; tma_tuned against it is a timed choice on both sides.
  // Where the two rows ran the same plan, their difference is the run's noise.
  std::string tuned_suffix;
  std::size_t tuned_slot = plans.size();
  if (r.options().tuned && plan_tuning.config < 0) {
    // A plan the library refuses (tma::Error: nothing launched) leaves tma_tuned out, with a note;
    // the case's other implementations still count.
    std::vector<ops::GemmTuning> candidates;
    double best_ms = 0;
    int best = -1;
    try {
      candidates = ops::gemm_candidates(bufs.args(0), ops::Path::kTma, kHeuristicAlgos);
    } catch (const Error& e) {
      if (!result.note.empty()) result.note += "; ";
      result.note += std::string("tma_tuned not timed: ") + e.what();
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const ops::GemmTuning t = with_options(candidates[i]);
      Timing tt;
      try {
        tt = r.time_trial(
            "try tma plan " + std::to_string(i + 1) + "/" + std::to_string(candidates.size()),
            [&bufs, &r, t](int set) {
              ops::gemm_tuned(bufs.args(set), r.stream(), ops::Path::kTma, t);
            },
            bufs.ws, kTrialWarmup, kTrialReps);
      } catch (const Error& e) {
        if (!result.note.empty()) result.note += "; ";
        result.note += "candidate plan " + std::to_string(i) + " refused: " + e.what();
        continue;
      }
      if (best < 0 || tt.stats.median_ms < best_ms) {
        best_ms = tt.stats.median_ms;
        best = static_cast<int>(i);
      }
    }
    if (best >= 0) {
      tuned_slot = plan_of.size();
      tuned_suffix = ", fastest of " + std::to_string(candidates.size()) +
                     " candidate plans (index " + std::to_string(best) + ")";
      ours("tma_tuned", Role::kVariant, ops::Path::kTma,
           candidates[static_cast<std::size_t>(best)]);
    }
  }

  // The sweep's variants (--sweep: all, in the sweep's order; --variants: those named, in the
  // order given).
  if (r.options().sweep) {
    for (const Variant& v : variants)
      ours("tma_" + v.name, Role::kVariant, ops::Path::kTma, v.tuning);
  } else {
    for (const std::string& name : r.options().variants) {
      if (const std::optional<Variant> v = find_variant(variants, name)) {
        ours("tma_" + v->name, Role::kVariant, ops::Path::kTma, v->tuning);
      } else {
        if (!result.note.empty()) result.note += "; ";
        result.note +=
            "variant " + name + " not timed: no such configuration, or not allowed for this layout";
      }
    }
  }
  // Last: the ordinary (cp.async) path once hung (fixed: tests/gemm/gpu_gemm covers it).
  if (!r.options().no_ordinary) ours("ordinary", Role::kPeer, ops::Path::kOrdinary, {});

  std::vector<ImplResult> measured = r.measure_together(c, impls, bufs.ws);
  for (std::size_t slot = 0; slot < plan_of.size(); ++slot) {
    const auto [index, path] = plan_of[slot];
    if (plans[slot])
      measured[index].detail =
          plan_detail(path, *plans[slot]) + (slot == tuned_slot ? tuned_suffix : "");
  }
  for (ImplResult& m : measured)
    result.impls.push_back(std::move(m));
  if (!cublas) result.impls.push_back(std::move(cublas_failed));
  return result;
}

}  // namespace

const Suite& gemm_suite() {
  static const Suite kSuite{
      "gemm",
      "D = A B, bf16 -> bf16, fp32 accumulation: TMA vs cuBLASLt vs ordinary cp.async loads",
      {"tma", "cublasLt", "ordinary"},
      gemm_cases,
      run_gemm,
      Metric::kFlops,
      {{"ratio_vs_cublas", "vs cuBLAS", "tma", "cublasLt"},
       {"tma_vs_ordinary", "tma/ord", "tma", "ordinary"},
       {"tuned_vs_cublas", "tuned/cuBLAS", "tma_tuned", "cublasLt"}},
      /*in_all=*/false,
      /*log_steps=*/true,
  };
  return kSuite;
}

}  // namespace tma::bench
