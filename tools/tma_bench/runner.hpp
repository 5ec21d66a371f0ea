// tma-bench: the machinery every suite runs its case through: device memory sized to the L2
// policy, random input, and Runner::measure, which verifies one implementation and then times it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_buffer.hpp"
#include "layout.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "report.hpp"
#include "suite.hpp"
#include "timing.hpp"

namespace tma::bench {

// The device memory of one case: `sets` copies of the per-set buffers (rotated between timed runs)
// and the extra buffers (references; not rotated). One allocation, each buffer 256-byte aligned.
class Workspace {
 public:
  Workspace(const std::vector<std::size_t>& set_buffers, const std::vector<std::size_t>& extras,
            const L2Plan& plan);

  // Buffer `index` of rotation set `set`.
  void* buffer(int set, int index) const;
  // Extra buffer `index`.
  void* extra(int index) const;
  int sets() const { return plan_.sets; }
  const L2Plan& plan() const { return plan_; }

 private:
  L2Plan plan_;
  std::vector<std::size_t> set_offsets_;
  std::vector<std::size_t> extra_offsets_;
  std::size_t set_bytes_ = 0;
  DeviceBuffer memory_;
};

// One implementation of a case as the suite hands it to Runner::measure.
struct Impl {
  std::string name;
  std::string detail;
  Role role = Role::kPeer;
  std::function<void(int set)> launch;  // enqueue one run on Runner::stream(), rotation set `set`
  TensorView got;                       // its output in set 0
  TensorView expected;                  // what `got` must equal afterwards
  // When set, replaces the element-for-element comparison with `expected` (a GEMM has no exact
  // answer): called after the verification run (stream idle, `got` poisoned before the run);
  // returns an empty string when the output is right, else what is wrong, on one or more lines.
  std::function<std::string()> check = {};
};

class Runner {
 public:
  Runner(const Options& options, const MachineInfo& machine, Progress& progress);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  cudaStream_t stream() const { return stream_; }
  std::uint64_t seed() const { return seed_; }
  const Options& options() const { return options_; }
  const MachineInfo& machine() const { return machine_; }

  // The buffers of a case: `set_buffers` bytes per rotation set, plus `extras`. When even one
  // set does not fit in free memory, marks `result` skipped (with the sizes) and returns nullopt.
  std::optional<Workspace> allocate(const std::vector<std::size_t>& set_buffers,
                                    const std::vector<std::size_t>& extras, CaseResult& result);

  // Random non-zero input for `v` (its whole footprint), from the run's seed, the case's name and
  // `salt` (e.g. the rotation set).
  void fill_random(const Case& c, const TensorView& v, std::uint64_t salt);

  // Verifies `impl` (output poisoned, one run on set 0, compared element for element with
  // `expected`, padding included), then, if it passed, times it over the workspace's sets.
  // A mismatch or an error (tma::Error from an op, say) is printed and recorded in the result;
  // CudaError propagates (main() checks whether the context survived).
  ImplResult measure(const Case& c, const Impl& impl, const Workspace& ws);

  // measure() for several implementations of one case: each verified as measure() does, then
  // the verified ones timed together, round-robin (Timer::time_interleaved), so that every one
  // meets the same clocks and power state. Results in the order of `impls`.
  std::vector<ImplResult> measure_together(const Case& c, const std::vector<Impl>& impls,
                                           const Workspace& ws);

  // A short timing with the same policy but `warmup` and `reps` of its own, unverified: for
  // choosing among candidates (cuBLASLt's heuristic algorithms) before the chosen one goes through
  // measure(). `what` is logged as the step. Errors propagate.
  Timing time_trial(std::string_view what, const std::function<void(int set)>& launch,
                    const Workspace& ws, int warmup, int reps);

 private:
  std::string mismatch_report(const Case& c, const Impl& impl, std::uint64_t count,
                              std::int64_t first, const std::vector<std::int64_t>& samples);
  // The verification half of measure(): fills name, detail, role, and verified or failure.
  ImplResult verify(const Case& c, const Impl& impl);
  // Records `t` in `r` with the case's bytes and FLOPs.
  static void record_timing(const Case& c, ImplResult& r, const Timing& t);
  // What time_runs calls before each timed run: the L2 flush when the plan says so, else nothing.
  std::function<void()> flush_for(const Workspace& ws);

  const Options& options_;
  const MachineInfo& machine_;
  Progress& progress_;
  std::uint64_t seed_;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer flush_;
  std::optional<Timer> timer_;
};

}  // namespace tma::bench
