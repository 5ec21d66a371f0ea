// tma-bench: timing (see timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "kernels.hpp"

namespace tma::bench {
namespace {

// The spin kernel's length: twice the measured enqueue time of all runs, at least 50 us (so that
// a fast host still finishes first), at most 0.5 s per attempt.
constexpr double kSpinMinUs = 50.0;
constexpr double kSpinMaxUs = 500'000.0;
constexpr double kSpinSafety = 2.0;
// Per run beyond the launch itself: two event records and, in flush mode, a memset.
constexpr double kEnqueueExtraUs = 5.0;
constexpr int kSpinAttempts = 3;
// The round order's seed (interleaved_schedule): the same orders in every run.
constexpr unsigned kShuffleSeed = 0x7A11u;

// Median of a non-empty sample: the mean of the middle two for an even count.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Stats summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::logic_error("summarize: no samples");
  Stats s;
  s.reps = static_cast<int>(samples_ms.size());
  s.min_ms = *std::min_element(samples_ms.begin(), samples_ms.end());
  s.max_ms = *std::max_element(samples_ms.begin(), samples_ms.end());
  s.median_ms = median(std::move(samples_ms));
  return s;
}

double gbps(double bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}

double tflops(double flops, double ms) {
  return ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0;
}

std::string L2Plan::describe() const {
  if (flush) return "flush " + std::to_string(kFlushFactor) + "x L2 between runs";
  if (sets == 1) return "one set > " + std::to_string(kRotationFactor) + "x L2";
  return "rotate " + std::to_string(sets) + " sets > " + std::to_string(kRotationFactor) + "x L2";
}

L2Plan plan_l2(std::size_t set_bytes, std::size_t l2_bytes, std::size_t room_bytes) {
  if (set_bytes == 0) throw std::logic_error("plan_l2: empty buffer set");
  const std::size_t needed = static_cast<std::size_t>(kRotationFactor) * l2_bytes;
  L2Plan p;
  p.sets = static_cast<int>(needed / set_bytes + 1);
  if (static_cast<std::size_t>(p.sets) * set_bytes > room_bytes) {
    p.sets = 1;
    p.flush = true;
  }
  return p;
}

std::vector<ScheduledRun> interleaved_schedule(int impls, int warmup, int reps, int sets,
                                               unsigned seed) {
  if (impls < 1 || warmup < 0 || reps < 1 || sets < 1)
    throw std::logic_error("interleaved_schedule: needs impls, reps, sets >= 1 and warmup >= 0");
  std::vector<ScheduledRun> runs;
  runs.reserve(static_cast<std::size_t>(impls) * static_cast<std::size_t>(warmup + reps));
  const auto add = [&](int impl, int rep) {
    runs.push_back(
        ScheduledRun{impl, static_cast<int>(runs.size() % static_cast<std::size_t>(sets)), rep});
  };
  for (int i = 0; i < impls; ++i)
    for (int w = 0; w < warmup; ++w)
      add(i, -1);
  if (impls == 1) {
    for (int r = 0; r < reps; ++r)
      add(0, r);
    return runs;
  }
  const auto n = static_cast<std::size_t>(impls);
  if (impls - 1 <= reps) {
    // Balanced: repeat a closed walk through every ordered pair (i, j), i != j, once (an Eulerian
    // circuit of the complete directed graph: n (n - 1) runs, each implementation n - 1 times,
    // each after every other one once, never after itself). What runs before a kernel sets the
    // clock and the L2 it meets (a slow, low-power kernel lets the clock recover), so every
    // implementation meets every neighbour equally often; random round orders left that to chance
    // (0x7A11's 20 rounds of 3: ours after the ordinary kernel 9 times, cuBLASLt 10 times; one
    // kernel timed as two implementations read up to 1.7% apart, 0.5% on average over ten GEMM
    // shapes, against up to 1.1% and 0.3% balanced: H100, 2026-11-26, docs/perf-log.md). Each
    // implementation's first `reps` runs are timed; the last walk's surplus runs untimed.
    std::vector<int> circuit;
    {
      // Hierholzer's algorithm; next_out[v]: v's next unused edge v -> (v + next_out[v]) % n.
      std::vector<int> next_out(n, 1), stack{0};
      while (!stack.empty()) {
        const auto v = static_cast<std::size_t>(stack.back());
        if (next_out[v] < impls) {
          stack.push_back(static_cast<int>((v + static_cast<std::size_t>(next_out[v]++)) % n));
        } else {
          circuit.push_back(stack.back());
          stack.pop_back();
        }
      }
      std::reverse(circuit.begin(), circuit.end());
      circuit.pop_back();  // closed: the last run is followed by the first one of the next walk
    }
    // Rotate the walk by the seed: which implementation starts varies with it, the balance not.
    std::rotate(circuit.begin(),
                circuit.begin() + static_cast<std::ptrdiff_t>(seed % circuit.size()),
                circuit.end());
    std::vector<int> done(n, 0);
    int timed_left = impls * reps;
    while (timed_left > 0) {
      for (const int i : circuit) {
        int& d = done[static_cast<std::size_t>(i)];
        add(i, d < reps ? d : -1);
        if (d < reps) --timed_left;
        ++d;
      }
    }
    return runs;
  }
  // More implementations than repetitions + 1 (--sweep): rounds, each running every
  // implementation once in a fresh random order, so none always follows the same neighbour.
  std::mt19937 shuffle(seed);
  std::vector<int> order(n);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t j = 0; j < n; ++j)
      order[j] = static_cast<int>(j);
    std::shuffle(order.begin(), order.end(), shuffle);
    for (const int i : order)
      add(i, r);
  }
  return runs;
}

std::optional<double> probe_mhz(long long cycles, long long ns) {
  if (cycles <= 0 || ns <= 0) return std::nullopt;
  return static_cast<double>(cycles) * 1e3 / static_cast<double>(ns);
}

std::vector<ClockProbe> clock_by_impl(const std::vector<ScheduledRun>& runs,
                                      const std::vector<std::optional<double>>& mhz, int impls) {
  if (impls < 1 || mhz.size() != runs.size() + 1)
    throw std::logic_error("clock_by_impl: needs impls >= 1 and one probe more than runs");
  std::vector<std::vector<double>> before(static_cast<std::size_t>(impls));
  std::vector<std::vector<double>> after(static_cast<std::size_t>(impls));
  for (std::size_t p = 0; p < runs.size(); ++p) {
    const ScheduledRun& run = runs[p];
    if (run.impl < 0 || run.impl >= impls)
      throw std::logic_error("clock_by_impl: implementation index out of range");
    if (run.rep < 0 || !mhz[p] || !mhz[p + 1]) continue;
    before[static_cast<std::size_t>(run.impl)].push_back(*mhz[p]);
    after[static_cast<std::size_t>(run.impl)].push_back(*mhz[p + 1]);
  }
  std::vector<ClockProbe> out(static_cast<std::size_t>(impls));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (before[i].empty()) continue;
    out[i].samples = static_cast<int>(before[i].size());
    out[i].mhz_before = median(std::move(before[i]));
    out[i].mhz_after = median(std::move(after[i]));
  }
  return out;
}

Timer::Timer(cudaStream_t stream, int warmup, int reps, int sm_clock_khz, long long clock_probe_ns)
    : stream_(stream),
      warmup_(warmup),
      reps_(reps),
      sm_clock_khz_(sm_clock_khz),
      clock_probe_ns_(clock_probe_ns) {
  reserve_events(static_cast<std::size_t>(reps));
}

Timer::~Timer() {
  // Destruction must not throw; a failing destroy leaves nothing to recover.
  for (cudaEvent_t e : start_)
    (void)cudaEventDestroy(e);
  for (cudaEvent_t e : stop_)
    (void)cudaEventDestroy(e);
}

void Timer::reserve_events(std::size_t count) {
  while (start_.size() < count) {
    cudaEvent_t a = nullptr, b = nullptr;
    TMA_BENCH_CHECK(cudaEventCreate(&a));
    start_.push_back(a);
    TMA_BENCH_CHECK(cudaEventCreate(&b));
    stop_.push_back(b);
  }
}

Timing Timer::time_runs(const std::function<void(int set)>& launch, int sets,
                        const std::function<void()>& flush) {
  return time_interleaved({launch}, sets, flush).front();
}

std::vector<Timing> Timer::time_interleaved(
    const std::vector<std::function<void(int set)>>& launches, int sets,
    const std::function<void()>& flush) {
  const std::size_t n = launches.size();
  if (n == 0) throw std::logic_error("time_interleaved: no implementation");
  reserve_events(n * static_cast<std::size_t>(reps_));
  std::vector<Timing> t(n);
  const std::vector<ScheduledRun> schedule =
      interleaved_schedule(static_cast<int>(n), warmup_, reps_, sets, kShuffleSeed);
  const std::size_t warm_runs = n * static_cast<std::size_t>(warmup_);  // the schedule's first
  // --clock-probe: one reading ahead of each run of the timed sequence and one after the last.
  const bool probing = clock_probe_ns_ > 0;
  const std::size_t probes = probing ? schedule.size() - warm_runs + 1 : 0;
  DeviceBuffer probe_buffer;
  if (probing) probe_buffer = DeviceBuffer(probes * sizeof(ClockReading));
  auto* const probe_out = reinterpret_cast<ClockReading*>(probe_buffer.data());

  // The warm-up runs (the schedule's first ones), each implementation's enqueue time recorded.
  std::vector<std::vector<double>> enqueue_us(n);
  for (std::size_t j = 0; j < warm_runs; ++j) {
    const double t0 = now_us();
    launches[static_cast<std::size_t>(schedule[j].impl)](schedule[j].set);
    TMA_BENCH_CHECK_LAUNCH();
    enqueue_us[static_cast<std::size_t>(schedule[j].impl)].push_back(now_us() - t0);
  }
  double host_us_all = 0;  // enqueue time of one round
  for (std::size_t i = 0; i < n; ++i) {
    // Median, not mean: the first launch of a kernel may load its module (lazy loading).
    if (!enqueue_us[i].empty()) t[i].host_us_per_launch = median(std::move(enqueue_us[i]));
    host_us_all += t[i].host_us_per_launch + kEnqueueExtraUs + (probing ? kEnqueueExtraUs : 0);
  }
  TMA_BENCH_CHECK(cudaStreamSynchronize(stream_));

  double spin_us = std::clamp(kSpinSafety * reps_ * host_us_all, kSpinMinUs, kSpinMaxUs);
  bool host_bound = false;
  for (int attempt = 1;; ++attempt) {
    launch_spin(stream_, static_cast<long long>(spin_us * sm_clock_khz_ * 1e-3));
    TMA_BENCH_CHECK_LAUNCH();
    const double t0 = now_us();
    for (std::size_t j = warm_runs; j < schedule.size(); ++j) {
      const ScheduledRun& run = schedule[j];
      if (flush) flush();
      if (probing) launch_clock_probe(stream_, probe_out + (j - warm_runs), clock_probe_ns_);
      if (run.rep < 0) {  // untimed: a balanced walk's surplus
        launches[static_cast<std::size_t>(run.impl)](run.set);
        TMA_BENCH_CHECK_LAUNCH();
        continue;
      }
      const std::size_t e =
          static_cast<std::size_t>(run.rep) * n + static_cast<std::size_t>(run.impl);
      TMA_BENCH_CHECK(cudaEventRecord(start_[e], stream_));
      launches[static_cast<std::size_t>(run.impl)](run.set);
      TMA_BENCH_CHECK_LAUNCH();
      TMA_BENCH_CHECK(cudaEventRecord(stop_[e], stream_));
    }
    if (probing) launch_clock_probe(stream_, probe_out + (probes - 1), clock_probe_ns_);
    const double enqueued_us = now_us() - t0;
    TMA_BENCH_CHECK(cudaStreamSynchronize(stream_));
    host_bound = enqueued_us > spin_us;
    if (!host_bound || attempt == kSpinAttempts || spin_us >= kSpinMaxUs) break;
    spin_us = std::min(kSpinMaxUs, kSpinSafety * enqueued_us + kSpinMinUs);
  }

  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> samples;
    for (int r = 0; r < reps_; ++r) {
      const std::size_t e = static_cast<std::size_t>(r) * n + i;
      float ms = 0;
      TMA_BENCH_CHECK(cudaEventElapsedTime(&ms, start_[e], stop_[e]));
      samples.push_back(static_cast<double>(ms));
    }
    t[i].stats = summarize(std::move(samples));
    t[i].host_bound = host_bound;
  }
  if (probing) {
    std::vector<ClockReading> readings(probes);
    TMA_BENCH_CHECK(cudaMemcpy(readings.data(), probe_out, probes * sizeof(ClockReading),
                               cudaMemcpyDeviceToHost));
    std::vector<std::optional<double>> mhz;
    for (const ClockReading& r : readings)
      mhz.push_back(probe_mhz(r.cycles, r.ns));
    const std::vector<ScheduledRun> timed_runs(
        schedule.begin() + static_cast<std::ptrdiff_t>(warm_runs), schedule.end());
    const std::vector<ClockProbe> clocks = clock_by_impl(timed_runs, mhz, static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i)
      t[i].clock = clocks[i];
  }
  return t;
}

}  // namespace tma::bench
