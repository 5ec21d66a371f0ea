// tma-bench: how every implementation is timed. The one place that decides warm-up, repetitions,
// the L2 policy and what a "time" is.
//
// Policy (STYLE.md, benchmarks): CUDA events around each run, `warmup` untimed runs, the median of
// `reps` timed runs. Between consecutive runs the L2 must not hold the previous run's data: the
// buffers rotate over enough sets that one pass over them touches more than 3x the L2
// (plan_l2), or, when that many sets do not fit in memory, a 2x-L2 buffer is written between runs
// (outside the events).
//
// Launch overhead: a spin kernel occupies the stream while the host enqueues all timed runs, so
// the events measure back-to-back GPU execution, not the host's launch path (which for a TMA op
// includes encoding a descriptor). The host time per launch is recorded separately.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tma::bench {

// Consecutive runs together touch more than this many times the L2.
inline constexpr int kRotationFactor = 3;
// The flush buffer, in L2 sizes, written between runs when rotation does not fit.
inline constexpr int kFlushFactor = 2;

// Summary of the timed runs of one implementation, in milliseconds.
struct Stats {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int reps = 0;
};

// Median (mean of the middle two for an even count), min and max. `samples_ms` must not be empty.
Stats summarize(std::vector<double> samples_ms);

// Bandwidth in GB/s (1e9 bytes per second) of moving `bytes` in `ms`.
double gbps(double bytes, double ms);
// Arithmetic rate in TFLOP/s (1e12 floating-point operations per second) of `flops` in `ms`.
double tflops(double flops, double ms);

// How a case keeps its runs out of the L2.
struct L2Plan {
  int sets = 1;        // buffer sets rotated over
  bool flush = false;  // write the flush buffer between runs instead
  std::string describe() const;
};

// The plan for buffer sets of `set_bytes`: the fewest sets whose total exceeds 3x `l2_bytes`,
// if they fit in `room_bytes`; otherwise one set and an L2 flush between runs. Pure.
L2Plan plan_l2(std::size_t set_bytes, std::size_t l2_bytes, std::size_t room_bytes);

// One launch of Timer::time_interleaved's sequence: implementation `impl` on rotation set `set`;
// `rep` is its timed repetition (0 .. reps - 1), or -1 for a warm-up run.
struct ScheduledRun {
  int impl = 0;
  int set = 0;
  int rep = -1;
};

// The launches of time_interleaved, in stream order: every implementation's warm-up runs, then
// the timed ones. With impls - 1 <= reps (the default runs: ours, cuBLASLt, the ordinary path),
// a balanced order: a walk through every ordered pair of different implementations, repeated,
// so that each one runs after each other one equally often and never after itself (surplus runs
// of the last walk are untimed, rep -1); with more implementations (--sweep), rounds in random
// orders (std::mt19937 seeded with `seed`). Rotation sets count over ALL launches: launch j uses
// set j % sets, so two consecutive launches, of the same implementation or not, never share a
// set when sets > 1, and the runs between two uses of one set touch every other set. (Until
// 2026-11-26 each implementation walked its own set sequence in lockstep: the implementations
// of one round shared a set, so all but a round's first ran on the A, B and D that the one
// before had just left in L2, against the policy above.) Pure.
std::vector<ScheduledRun> interleaved_schedule(int impls, int warmup, int reps, int sets,
                                               unsigned seed);

// --clock-probe: the SM clock next to one implementation's timed runs. A probe (one thread,
// launch_clock_probe) runs before every launch of time_interleaved's timed sequence and once after
// the last; a timed run's "before" is the probe just ahead of it, its "after" the probe that
// follows it (ahead of the next run, after that run's L2 flush in flush mode). Why: at the power
// cap the clock sets a GEMM's time, and ncu's fixed-clock cycles cannot say whether two kernels
// timed side by side met the same clock (docs/perf-log.md, session 42's next steps). A probe
// keeps the SMs but one idle for its window, so the mode perturbs what it measures a little: a
// diagnostic, off in the README's runs.
struct ClockProbe {
  double mhz_before = 0;  // median over the timed runs
  double mhz_after = 0;
  int samples = 0;  // timed runs with both probes valid
};

// The default probe window (--clock-probe): long against the timer's 1 us granularity, short
// against the GEMMs' 20-600 us.
inline constexpr long long kClockProbeWindowNs = 10'000;

// MHz of one probe reading (cycles per microsecond); nullopt when it is not a reading (ns <= 0 or
// cycles <= 0). Pure.
std::optional<double> probe_mhz(long long cycles, long long ns);

// Each implementation's ClockProbe from the probes of one timed sequence: `runs` is the timed
// part of the schedule (interleaved_schedule's runs after the warm-up), `mhz` the probes' MHz,
// runs.size() + 1 of them (nullopt: invalid). Untimed runs (rep -1) are left out; an
// implementation without a valid pair gets samples = 0. Throws std::logic_error on a size
// mismatch or an implementation index outside 0 .. impls - 1. Pure.
std::vector<ClockProbe> clock_by_impl(const std::vector<ScheduledRun>& runs,
                                      const std::vector<std::optional<double>>& mhz, int impls);

// What time_runs measured.
struct Timing {
  Stats stats;
  double host_us_per_launch = 0;    // host time to enqueue one run (median of the warm-up)
  bool host_bound = false;          // the host could not enqueue the runs while the spin kernel ran
  std::optional<ClockProbe> clock;  // time_interleaved with a probe window only
};

// Times `launch(set)` (enqueue one run on `stream` using rotation set `set`) with the policy
// above. `flush`, when set, is enqueued before every timed run. Checks every launch. With
// `clock_probe_ns` > 0 (--clock-probe), time_interleaved also probes the SM clock (ClockProbe).
class Timer {
 public:
  Timer(cudaStream_t stream, int warmup, int reps, int sm_clock_khz, long long clock_probe_ns = 0);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  Timing time_runs(const std::function<void(int set)>& launch, int sets,
                   const std::function<void()>& flush);

  // time_runs for several implementations at once, interleaved (interleaved_schedule: a
  // balanced order, or random rounds for many implementations; rotation sets counted over all
  // launches), and each gets the median of its own runs. Why: a GEMM's sustained power draw lowers
  // the SM clock within seconds (H200, 2026-11-22: the same kernel and shape measured 651 and 798
  // TFLOP/s twenty seconds apart), so implementations timed one after the other meet different
  // clocks and their ratio measures the GPU's power state; interleaved, they share it.
  std::vector<Timing> time_interleaved(const std::vector<std::function<void(int set)>>& launches,
                                       int sets, const std::function<void()>& flush);

 private:
  // At least `count` start and stop events.
  void reserve_events(std::size_t count);

  cudaStream_t stream_;
  int warmup_;
  int reps_;
  int sm_clock_khz_;
  long long clock_probe_ns_;
  std::vector<cudaEvent_t> start_;
  std::vector<cudaEvent_t> stop_;
};

}  // namespace tma::bench
