// tma-bench: what a suite is. A suite lists its cases (pure host code: --list works without a GPU)
// and runs one case with the Runner's help (runner.hpp): it binds the case's layouts to buffers,
// and hands each implementation (ours, the peers, the ceiling) to Runner::measure, which verifies
// and times it.
//
// Adding a suite: write suite_<name>.cpp defining `const Suite& <name>_suite()`, and add it to the
// list in registry.cpp.
#pragma once

#include <cstddef>
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
// (ratio) and with the ceiling (% of ceiling).
enum class Role { kOurs, kPeer, kCeiling };
std::string_view role_name(Role r);

struct Case {
  std::string suite;   // "copy"
  std::string family;  // "ladder" (the size ladder) or the ragged kind: "padded3d", "batched", ...
  std::string name;    // unique, what --filter searches: "copy/ladder/bf16/256MiB"
  TensorView src;      // layouts only (data == nullptr)
  TensorView dst;
  bool quick = false;  // also runs under --quick

  std::size_t input_bytes() const { return logical_bytes(src); }
  // What GB/s counts: the bytes read plus the bytes written.
  std::size_t moved_bytes() const { return logical_bytes(src) + logical_bytes(dst); }
};

struct ImplResult {
  std::string name;    // "tma", "ordinary", "cudaMemcpy", "copy_ceiling", later "torch"
  std::string detail;  // how, where it is not obvious: "cudaMemcpy2DAsync"
  Role role = Role::kPeer;
  bool verified = false;
  std::string failure;  // why not verified: the mismatch summary or the error; empty when fine
  std::optional<Timing> timing;
  double gbps = 0;  // moved bytes / median time
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
  // Every implementation that ran was verified (and none failed with an error).
  bool verified() const;
};

struct Suite {
  std::string_view name;
  std::string_view summary;
  // Implementations shown in the table, in this order (ours first); others are in the JSON only.
  std::vector<std::string_view> columns;
  std::vector<Case> (*cases)(const Options& options);
  CaseResult (*run)(const Case& c, Runner& runner);
};

// Every suite, in the order `all` runs them (registry.cpp).
std::span<const Suite* const> suites();
// The suite called `name`; nullptr when there is none.
const Suite* find_suite(std::string_view name);

}  // namespace tma::bench
