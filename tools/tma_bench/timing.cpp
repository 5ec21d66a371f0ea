// tma-bench: timing (see timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

#include "cuda_check.hpp"
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

Timer::Timer(cudaStream_t stream, int warmup, int reps, int sm_clock_khz)
    : stream_(stream), warmup_(warmup), reps_(reps), sm_clock_khz_(sm_clock_khz) {
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
  std::vector<int> next(n, 0);  // each implementation walks the rotation sets on its own
  auto run = [&](std::size_t i) {
    launches[i](next[i] % sets);
    TMA_BENCH_CHECK_LAUNCH();
    ++next[i];
  };

  double host_us_all = 0;  // enqueue time of one round
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> enqueue_us;
    for (int w = 0; w < warmup_; ++w) {
      const double t0 = now_us();
      run(i);
      enqueue_us.push_back(now_us() - t0);
    }
    // Median, not mean: the first launch of a kernel may load its module (lazy loading).
    t[i].host_us_per_launch = median(std::move(enqueue_us));
    host_us_all += t[i].host_us_per_launch + kEnqueueExtraUs;
  }
  TMA_BENCH_CHECK(cudaStreamSynchronize(stream_));

  double spin_us = std::clamp(kSpinSafety * reps_ * host_us_all, kSpinMinUs, kSpinMaxUs);
  bool host_bound = false;
  for (int attempt = 1;; ++attempt) {
    launch_spin(stream_, static_cast<long long>(spin_us * sm_clock_khz_ * 1e-3));
    TMA_BENCH_CHECK_LAUNCH();
    const double t0 = now_us();
    // Each round runs the implementations in a fresh random order (a fixed seed: runs repeat), so
    // none always follows the same neighbour: a slow, low-power kernel before one lets the clock
    // recover (H200 2026-11-22: in a fixed order, identical kernels differed by up to 8%).
    std::mt19937 shuffle(0x7A11u);
    std::vector<std::size_t> order(n);
    for (int r = 0; r < reps_; ++r) {
      for (std::size_t j = 0; j < n; ++j)
        order[j] = j;
      std::shuffle(order.begin(), order.end(), shuffle);
      for (const std::size_t i : order) {
        const std::size_t e = static_cast<std::size_t>(r) * n + i;
        if (flush) flush();
        TMA_BENCH_CHECK(cudaEventRecord(start_[e], stream_));
        run(i);
        TMA_BENCH_CHECK(cudaEventRecord(stop_[e], stream_));
      }
    }
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
  return t;
}

}  // namespace tma::bench
