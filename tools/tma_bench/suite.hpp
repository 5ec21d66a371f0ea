// tma-bench: what a suite is. A suite lists its cases (pure host code: --list works without a GPU)
// and runs one case with the Runner's help (runner.hpp): it binds the case's layouts to buffers,
// and hands each implementation (ours, the peers, the ceiling) to Runner::measure, which verifies
// and times it.
//
// Adding a suite: write suite_<name>.cpp defining `const Suite& <name>_suite()`, and add it to the
// list in registry.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "layout.hpp"
#include "options.hpp"
#include "timing.hpp"

namespace tma::bench {

class Runner;

// Ragged cases with at most this many input bytes also run under --quick.
inline constexpr std::size_t kQuickRaggedBytes = std::size_t{16} << 20;

// How an implementation figures in the table: ours is compared with the best verified peer
// (ratio) and with the ceiling (% of ceiling). A variant is another configuration of ours (a
// tuning sweep): timed and recorded, never counted as a peer.
enum class Role { kOurs, kPeer, kCeiling, kVariant };
std::string_view role_name(Role r);

// The problem of a GEMM case: D (m x n) = A (m x k) B (k x n), each operand row- or column-major.
struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;
  bool a_row_major = true;
  bool b_row_major = false;
};

struct Case {
  std::string suite;   // "copy"
  std::string family;  // "ladder" (the size ladder) or the ragged kind: "padded3d", "batched", ...
  std::string name;    // unique, what --filter searches: "copy/ladder/bf16/256MiB"
  TensorView src;      // layouts only (data == nullptr); a GEMM's A as stored
  TensorView dst;      // a GEMM's D
  bool quick = false;  // also runs under --quick
  std::optional<GemmDims> gemm;  // GEMM cases only (B's layout is implied by these)

  // Bytes of input: src's elements; a GEMM's A and B.
  std::size_t input_bytes() const;
  // What GB/s counts: the bytes read plus the bytes written (a GEMM: A, B and D, once each).
  std::size_t moved_bytes() const;
  // What TFLOP/s counts: 2 m n k for a GEMM; 0 for the data-movement suites.
  double flops() const;
  // The shape for tables and progress lines: "4095x1999"; a GEMM's "MxNxK".
  std::string shape_label() const;
};

struct ImplResult {
  std::string name;    // "tma", "ordinary", "cudaMemcpy", "copy_ceiling", later "torch"
  std::string detail;  // how, where it is not obvious: "cudaMemcpy2DAsync"
  Role role = Role::kPeer;
  bool verified = false;
  std::string failure;  // why not verified: the mismatch summary or the error; empty when fine
  std::optional<Timing> timing;
  double gbps = 0;    // moved bytes / median time
  double tflops = 0;  // flops / median time (cases with flops only)
};

enum class Status { kOk, kSkipped, kFailed };
std::string_view status_name(Status s);

struct CaseResult {
  const Case* c = nullptr;
  Status status = Status::kOk;
  std::string note;       // why skipped or failed
  std::string l2_policy;  // L2Plan::describe()
  std::vector<ImplResult> impls;

  const ImplResult* find(std::string_view impl) const;
  const ImplResult* ours() const;
  const ImplResult* ceiling() const;
  // The fastest verified, timed peer; nullptr when none.
  const ImplResult* best_peer() const;
  // ours / best peer and ours / ceiling in GB/s; nullopt when either side is missing.
  std::optional<double> ratio() const;
  std::optional<double> ceiling_fraction() const;
  // Implementation `numerator` / `denominator` in throughput; nullopt unless both were timed.
  std::optional<double> ratio_of(std::string_view numerator, std::string_view denominator) const;
  // Every implementation that ran was verified (and none failed with an error).
  bool verified() const;
};

// What a suite's table cells count: bandwidth (GB/s of Case::moved_bytes) or arithmetic (TFLOP/s
// of Case::flops; the JSON has both).
enum class Metric { kBandwidth, kFlops };

// A ratio of two named implementations, beside the standard ones: a table column (`title`) and a
// member of each case in the JSON (`key`).
struct RatioColumn {
  std::string_view key;  // "ratio_vs_cublas"
  std::string_view title;
  std::string_view numerator;
  std::string_view denominator;
};

struct Suite {
  std::string_view name;
  std::string_view summary;
  // Implementations shown in the table, in this order (ours first); others are in the JSON only.
  std::vector<std::string_view> columns;
  std::vector<Case> (*cases)(const Options& options);
  CaseResult (*run)(const Case& c, Runner& runner);
  Metric metric = Metric::kBandwidth;
  std::vector<RatioColumn> ratios = {};  // after the standard "ratio" column
  // Part of `tma-bench all`. Suites that would make `all` much longer or riskier run by name.
  bool in_all = true;
  // Log every verify / time step on its own line even when stderr is not a terminal, before the
  // implementation is launched: a kernel that hangs cannot be stopped from inside the process,
  // so the log's last line must say which one it was.
  bool log_steps = false;
};

// Every suite, in the order `all` runs them (registry.cpp); `all` skips those not in_all.
std::span<const Suite* const> suites();
// The suite called `name`; nullptr when there is none.
const Suite* find_suite(std::string_view name);

}  // namespace tma::bench
