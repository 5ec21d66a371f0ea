// tma-bench: buffers, input, verification and timing of one implementation (see runner.hpp).
#include "runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <utility>

#include "cuda_check.hpp"
#include "kernels.hpp"

namespace tma::bench {
namespace {

// cudaMalloc's own alignment; more than the 16 bytes TMA and 16-byte loads need.
constexpr std::size_t kBufferAlign = 256;
// Device memory left free for the ops, the CUDA context's growth and the driver.
constexpr std::size_t kMemoryMargin = std::size_t{512} << 20;

std::size_t align_up(std::size_t n) {
  return (n + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
}

// FNV-1a: a stable hash of the case name, so a case's input depends on the seed and the case only.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

std::string hex(std::uint64_t v, std::size_t bytes) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(2 * bytes),
                static_cast<unsigned long long>(v));
  return buf;
}

std::string index_string(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(index[i]);
  }
  return s + "]";
}

// The element of `v` at `offset` elements from v.data, copied to the host (the stream is idle).
std::uint64_t read_element(const TensorView& v, std::int64_t offset) {
  std::uint64_t value = 0;  // little-endian: the low bytes hold the element
  const std::size_t e = element_size(v);
  TMA_BENCH_CHECK(cudaMemcpy(
      &value, static_cast<const std::byte*>(v.data) + offset * static_cast<std::int64_t>(e), e,
      cudaMemcpyDeviceToHost));
  return value;
}

std::int64_t offset_of(const TensorView& v, const std::vector<std::int64_t>& index) {
  std::int64_t o = 0;
  for (int d = 0; d < v.rank; ++d)
    o += index[static_cast<std::size_t>(d)] * v.strides[d];
  return o;
}

}  // namespace

// ---- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes) : size_(bytes) {
  void* p = nullptr;
  TMA_BENCH_CHECK(cudaMalloc(&p, bytes));
  data_ = static_cast<std::byte*>(p);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) (void)cudaFree(data_);  // a destructor has no one to report to
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

// ---- Workspace -------------------------------------------------------------------------------

Workspace::Workspace(const std::vector<std::size_t>& set_buffers,
                     const std::vector<std::size_t>& extras, const L2Plan& plan)
    : plan_(plan) {
  for (std::size_t b : set_buffers) {
    set_offsets_.push_back(set_bytes_);
    set_bytes_ += align_up(b);
  }
  std::size_t total = set_bytes_ * static_cast<std::size_t>(plan.sets);
  for (std::size_t b : extras) {
    extra_offsets_.push_back(total);
    total += align_up(b);
  }
  memory_ = DeviceBuffer(total);
}

void* Workspace::buffer(int set, int index) const {
  return memory_.data() + static_cast<std::size_t>(set) * set_bytes_ +
         set_offsets_.at(static_cast<std::size_t>(index));
}

void* Workspace::extra(int index) const {
  return memory_.data() + extra_offsets_.at(static_cast<std::size_t>(index));
}

// ---- Runner ----------------------------------------------------------------------------------

Runner::Runner(const Options& options, const MachineInfo& machine, Progress& progress)
    : options_(options),
      machine_(machine),
      progress_(progress),
      seed_(options.seed ? *options.seed
                         : static_cast<std::uint64_t>(
                               std::chrono::system_clock::now().time_since_epoch().count())) {
  // Non-blocking: nothing else in the process (the legacy default stream) serializes with it.
  TMA_BENCH_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  flush_ = DeviceBuffer(static_cast<std::size_t>(kFlushFactor) * machine.gpu.l2_bytes);
  timer_.emplace(stream_, options.warmup, options.reps, machine.gpu.sm_clock_khz,
                 options.clock_probe ? kClockProbeWindowNs : 0);
}

Runner::~Runner() {
  timer_.reset();
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

std::optional<Workspace> Runner::allocate(const std::vector<std::size_t>& set_buffers,
                                          const std::vector<std::size_t>& extras,
                                          CaseResult& result) {
  std::size_t set_bytes = 0;
  for (std::size_t b : set_buffers)
    set_bytes += align_up(b);
  std::size_t extra_bytes = 0;
  for (std::size_t b : extras)
    extra_bytes += align_up(b);

  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  TMA_BENCH_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t room = free_bytes > kMemoryMargin ? free_bytes - kMemoryMargin : 0;
  if (set_bytes + extra_bytes > room) {
    result.status = Status::kSkipped;
    result.note = "needs " + size_human(set_bytes + extra_bytes) + ", " + size_human(free_bytes) +
                  " free (" + size_human(kMemoryMargin) +
                  " kept back); use --max-size to leave such cases out";
    return std::nullopt;
  }
  const L2Plan plan = options_.flush_l2
                          ? L2Plan{1, true}
                          : plan_l2(set_bytes, machine_.gpu.l2_bytes, room - extra_bytes);
  result.l2_policy = plan.describe();
  return std::optional<Workspace>(std::in_place, set_buffers, extras, plan);
}

void Runner::fill_random(const Case& c, const TensorView& v, std::uint64_t salt) {
  const std::uint64_t seed = seed_ ^ fnv1a(c.name) ^ (salt * 0xD1B54A32D192ED03ull);
  tma::bench::fill_random(v, seed, stream_);
}

ImplResult Runner::verify(const Case& c, const Impl& impl) {
  ImplResult r;
  r.name = impl.name;
  r.detail = impl.detail;
  r.role = impl.role;
  try {
    progress_.step("verify " + impl.name);
    poison(impl.got, stream_);
    impl.launch(0);
    TMA_BENCH_CHECK_LAUNCH();
    TMA_BENCH_CHECK(cudaStreamSynchronize(stream_));
    if (impl.check) {
      const std::string wrong = impl.check();
      if (!wrong.empty()) {
        r.failure = "MISMATCH " + c.name + " [" + impl.name + "]: " + wrong + "; seed " +
                    std::to_string(seed_) + "\n";
      }
    } else {
      const Mismatches m = compare(impl.got, impl.expected, stream_);
      if (m.count != 0) r.failure = mismatch_report(c, impl, m.count, m.first, m.samples);
    }
    if (!r.failure.empty()) {
      progress_.clear();
      std::printf("%s", r.failure.c_str());
      std::fflush(stdout);
      return r;
    }
    r.verified = true;
  } catch (const CudaError&) {
    throw;
  } catch (const std::exception& e) {
    r.verified = false;
    r.failure = std::string("error: ") + e.what();
    progress_.clear();
    std::printf("ERROR %s [%s]: %s\n", c.name.c_str(), impl.name.c_str(), e.what());
    std::fflush(stdout);
  }
  return r;
}

void Runner::record_timing(const Case& c, ImplResult& r, const Timing& t) {
  r.timing = t;
  r.gbps = gbps(static_cast<double>(c.moved_bytes()), t.stats.median_ms);
  r.tflops = tflops(c.flops(), t.stats.median_ms);
}

ImplResult Runner::measure(const Case& c, const Impl& impl, const Workspace& ws) {
  return measure_together(c, {impl}, ws).front();
}

std::vector<ImplResult> Runner::measure_together(const Case& c, const std::vector<Impl>& impls,
                                                 const Workspace& ws) {
  std::vector<ImplResult> results;
  std::vector<std::size_t> timed;  // indices of the verified implementations
  std::vector<std::function<void(int)>> launches;
  for (const Impl& impl : impls) {
    results.push_back(verify(c, impl));
    if (results.back().verified) {
      timed.push_back(results.size() - 1);
      launches.push_back(impl.launch);
    }
  }
  if (timed.empty()) return results;
  std::string names;
  for (const std::size_t i : timed)
    names += (names.empty() ? "" : "+") + impls[i].name;
  try {
    progress_.step("time " + names);
    const std::vector<Timing> t = timer_->time_interleaved(launches, ws.sets(), flush_for(ws));
    for (std::size_t k = 0; k < timed.size(); ++k)
      record_timing(c, results[timed[k]], t[k]);
  } catch (const CudaError&) {
    throw;
  } catch (const std::exception& e) {
    // An error while timing (not verifying): every implementation of the round shares it.
    progress_.clear();
    std::printf("ERROR %s [%s]: %s\n", c.name.c_str(), names.c_str(), e.what());
    std::fflush(stdout);
    for (const std::size_t i : timed) {
      results[i].verified = false;
      results[i].timing.reset();
      results[i].failure = std::string("error: ") + e.what();
    }
  }
  return results;
}

Timing Runner::time_trial(std::string_view what, const std::function<void(int set)>& launch,
                          const Workspace& ws, int warmup, int reps) {
  progress_.step(what);
  Timer trial(stream_, warmup, reps, machine_.gpu.sm_clock_khz);
  return trial.time_runs(launch, ws.sets(), flush_for(ws));
}

std::function<void()> Runner::flush_for(const Workspace& ws) {
  if (!ws.plan().flush) return {};
  return [this, n = 0]() mutable {
    // A different value each time: the writes cannot be elided, the lines are all dirty.
    TMA_BENCH_CHECK(cudaMemsetAsync(flush_.data(), ++n & 0xFF, flush_.size(), stream_));
  };
}

std::string Runner::mismatch_report(const Case& c, const Impl& impl, std::uint64_t count,
                                    std::int64_t first, const std::vector<std::int64_t>& samples) {
  const std::size_t e = element_size(impl.got);
  std::string s = "MISMATCH " + c.name + " [" + impl.name + "]: " + std::to_string(count) + " of " +
                  std::to_string(footprint_elements(impl.got)) +
                  " output elements (view and padding) differ; seed " + std::to_string(seed_) +
                  "\n";
  std::vector<std::int64_t> offsets{first};
  offsets.insert(offsets.end(), samples.begin(), samples.end());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const IndexOf at = index_of(impl.got, offsets[i]);
    const std::uint64_t got = read_element(impl.got, offsets[i]);
    s += i == 0 ? "  first at " : "  also at ";
    if (at.inside) {
      const std::uint64_t want = read_element(impl.expected, offset_of(impl.expected, at.index));
      s += "output" + index_string(at.index) + " (element offset " + std::to_string(offsets[i]) +
           "): expected " + hex(want, e) + ", got " + hex(got, e) + "\n";
    } else {
      s += "padding at element offset " + std::to_string(offsets[i]) + " (index " +
           index_string(at.index) + " is outside shape " + shape_string(impl.got) +
           "): expected the poison " + hex(0xA5A5A5A5A5A5A5A5ull >> (64 - 8 * e), e) + ", got " +
           hex(got, e) + " (written outside the view)\n";
    }
  }
  return s;
}

}  // namespace tma::bench
