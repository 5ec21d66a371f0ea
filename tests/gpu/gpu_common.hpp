// tmakit GPU tests: what every test program shares on the host side.
//
// Each program compares the hardware with tmakit's CPU reference model byte for byte. Its output
// must let a failure be diagnosed offline (the GPU is lent for minutes): every mismatch goes to
// $TMAKIT_GPU_OUT/<test>.jsonl (default ./gpu-out) with the spec, the coordinates, the seeds and
// the differing bytes; stdout gets one summary line per test. Exit codes: 0 pass, 1 fail,
// 77 skipped (no GPU, or not one this binary has code for), 2 bad command line.
//
// Command line (every program): --seed N (default: from the clock, printed), --quick (the counts
// used under compute-sanitizer), --count N (override the main count), --only I (replay case I of
// the seed alone), --timeout S (host watchdog per launch, default 30 s), --out DIR,
// --negative-coords (gpu_store only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tma::testing {

// Byte every output buffer (shared-memory images, global destinations) is filled with before a
// run, so that bytes the hardware did not write stand out.
inline constexpr std::byte kPoison{0xA5};
inline constexpr std::uint32_t kPoisonWord = 0xA5A5A5A5u;

// ---- CUDA errors ----------------------------------------------------------------------------

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError naming the call, the place and the CUDA error.
inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::ostringstream o;
  o << file << ':' << line << ": " << expr << " failed: " << cudaGetErrorName(e) << " ("
    << cudaGetErrorString(e) << ")";
  throw CudaError(o.str());
}

}  // namespace tma::testing

// Every CUDA runtime call of the tests goes through this (a macro, for the call's text and line).
#define TMA_CHECK_CUDA(call) ::tma::testing::check_cuda((call), #call, __FILE__, __LINE__)
// After every kernel launch: launch-configuration errors surface here, not at the next sync.
#define TMA_CHECK_LAUNCH() TMA_CHECK_CUDA(cudaGetLastError())

namespace tma::testing {

// ---- command line ---------------------------------------------------------------------------

struct Args {
  std::uint64_t seed = 0;
  bool quick = false;
  std::int64_t count = -1;  // -1: the program's default (or its quick default)
  std::int64_t only = -1;   // >= 0: run case `only` of the seed and nothing else
  double timeout_s = 30.0;
  std::string out_dir;
  // gpu_store only: also store / reduce at negative start coordinates, which the PTX ISA leaves
  // undefined for tensor stores (run separately, as an observation: run_gpu_tests.sh reports it
  // without failing the suite).
  bool negative_coords = false;
  // --interleave P: the share (0..1) of random specs drawn with an interleaved layout, for the
  // programs that draw them (gpu_load, gpu_multicast, gpu_store); -1: the program's default.
  double interleave = -1;
  double interleave_or(double program_default) const {
    return interleave >= 0 ? interleave : program_default;
  }

  // The program's count: --count if given, else `quick_default` under --quick, else `full_default`.
  std::int64_t count_or(std::int64_t full_default, std::int64_t quick_default) const {
    if (count >= 0) return count;
    return quick ? quick_default : full_default;
  }
};

inline void print_usage(std::string_view test) {
  std::printf(
      "usage: %.*s [--seed N] [--quick] [--count N] [--only I] [--timeout S] [--out DIR]\n"
      "          [--negative-coords (gpu_store: store at negative starts, undefined per PTX)]\n"
      "          [--interleave P (share of interleaved specs, 0..1: gpu_load/multicast/store)]\n"
      "  compares TMA on this GPU with tmakit's reference model; mismatches go to\n"
      "  DIR/<test>.jsonl (DIR: --out, else $TMAKIT_GPU_OUT, else ./gpu-out).\n"
      "  exit 0 pass, 1 fail, 77 skipped (no suitable GPU), 2 bad arguments\n",
      static_cast<int>(test.size()), test.data());
}

// Parses the common flags; returns nullopt (after printing why) on a bad command line.
inline std::optional<Args> parse_args(std::string_view test, int argc, char** argv) {
  Args a;
  bool seeded = false;
  auto number = [&](int& i, const char* flag) -> std::optional<std::string> {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", flag);
      return std::nullopt;
    }
    return std::string(argv[++i]);
  };
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view f = argv[i];
      if (f == "--quick") {
        a.quick = true;
      } else if (f == "--negative-coords") {
        a.negative_coords = true;
      } else if (f == "--seed") {
        auto v = number(i, "--seed");
        if (!v) return std::nullopt;
        a.seed = std::stoull(*v, nullptr, 0);
        seeded = true;
      } else if (f == "--count") {
        auto v = number(i, "--count");
        if (!v) return std::nullopt;
        a.count = std::stoll(*v);
      } else if (f == "--only") {
        auto v = number(i, "--only");
        if (!v) return std::nullopt;
        a.only = std::stoll(*v);
      } else if (f == "--timeout") {
        auto v = number(i, "--timeout");
        if (!v) return std::nullopt;
        a.timeout_s = std::stod(*v);
      } else if (f == "--interleave") {
        auto v = number(i, "--interleave");
        if (!v) return std::nullopt;
        a.interleave = std::stod(*v);
        if (!(a.interleave >= 0 && a.interleave <= 1)) {
          std::fprintf(stderr, "--interleave takes a share between 0 and 1, got %s\n", v->c_str());
          return std::nullopt;
        }
      } else if (f == "--out") {
        auto v = number(i, "--out");
        if (!v) return std::nullopt;
        a.out_dir = *v;
      } else if (f == "--help" || f == "-h") {
        print_usage(test);
        std::exit(0);
      } else {
        std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
        print_usage(test);
        return std::nullopt;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bad number on the command line: %s\n", e.what());
    return std::nullopt;
  }
  if (!seeded) {
    a.seed = static_cast<std::uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count() & 0xFFFFFFFFFFFFull);
  }
  if (a.out_dir.empty()) {
    const char* env = std::getenv("TMAKIT_GPU_OUT");
    a.out_dir = env != nullptr && *env != '\0' ? env : "gpu-out";
  }
  return a;
}

// ---- JSON lines -----------------------------------------------------------------------------

// Escapes `s` as the contents of a JSON string.
inline std::string json_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (const char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      case '\r':
        o += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o;
}

// Lower-case hex of a byte range, two digits per byte, no separators.
inline std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string o(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const unsigned v = std::to_integer<unsigned>(bytes[i]);
    o[2 * i] = kDigits[v >> 4];
    o[2 * i + 1] = kDigits[v & 15u];
  }
  return o;
}

// One JSON object, built field by field (keys are trusted literals; values are escaped).
class Json {
 public:
  Json& str(std::string_view key, std::string_view value) {
    return raw(key, "\"" + json_escape(value) + "\"");
  }
  template <class T>
  Json& num(std::string_view key, T value) {
    static_assert(std::is_arithmetic_v<T>, "Json::num takes a number");
    std::ostringstream o;
    if constexpr (std::is_same_v<T, bool>) {
      o << (value ? "true" : "false");
    } else if constexpr (sizeof(T) == 1) {
      o << static_cast<int>(value);
    } else {
      o << value;
    }
    return raw(key, o.str());
  }
  template <class T>
  Json& nums(std::string_view key, std::span<const T> values) {
    std::ostringstream o;
    o << '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      o << (i ? "," : "");
      if constexpr (sizeof(T) == 1) {
        o << static_cast<int>(values[i]);
      } else {
        o << values[i];
      }
    }
    o << ']';
    return raw(key, o.str());
  }
  Json& strs(std::string_view key, const std::vector<std::string>& values) {
    std::string o = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      o += (i ? ",\"" : "\"") + json_escape(values[i]) + "\"";
    }
    return raw(key, o + "]");
  }
  Json& raw(std::string_view key, std::string_view json) {
    if (!body_.empty()) body_ += ',';
    body_ += '"';
    body_ += key;
    body_ += "\":";
    body_ += json;
    return *this;
  }
  std::string text() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

// ---- comparison -----------------------------------------------------------------------------

// Where two equally long byte ranges first differ and in how many bytes.
struct Diff {
  std::size_t first = 0;
  std::size_t count = 0;
};

inline std::optional<Diff> compare_bytes(std::span<const std::byte> hw,
                                         std::span<const std::byte> model) {
  const std::size_t n = std::min(hw.size(), model.size());
  std::optional<Diff> d;
  if (std::memcmp(hw.data(), model.data(), n) == 0 && hw.size() == model.size()) return d;
  for (std::size_t i = 0; i < n; ++i) {
    if (hw[i] != model[i]) {
      if (!d) d = Diff{i, 0};
      ++d->count;
    }
  }
  if (hw.size() != model.size()) {
    if (!d) d = Diff{n, 0};
    d->count += std::max(hw.size(), model.size()) - n;
  }
  return d;
}

// ---- the per-test report --------------------------------------------------------------------

// The JSONL file of one test, its failure counts by category, and the budget for full dumps.
// Thread-safe: the comparison loops run on every host core.
class Report {
 public:
  // Full images are written for the first kFullDumpsPerCategory mismatches of each category,
  // while the file's full-image bytes stay under kFullDumpBudget (the lent machine returns files
  // of at most 16 MiB).
  static constexpr int kFullDumpsPerCategory = 3;
  static constexpr std::size_t kFullDumpBudget = std::size_t{6} << 20;
  // Records beyond this many are counted, not written.
  static constexpr std::int64_t kMaxRecords = 4000;
  static constexpr std::size_t kWindowBytes = 64;

  Report(std::string test, const Args& args) : test_(std::move(test)), seed_(args.seed) {
    std::filesystem::create_directories(args.out_dir);
    path_ = (std::filesystem::path(args.out_dir) / (test_ + ".jsonl")).string();
    file_.open(path_, std::ios::out | std::ios::trunc);
    if (!file_) throw std::runtime_error("cannot write " + path_);
  }

  const std::string& test() const { return test_; }
  const std::string& path() const { return path_; }
  std::uint64_t seed() const { return seed_; }

  // Writes one record, with "test" and "seed" prepended; `failure` counts it under `category`.
  void write(std::string_view kind, std::string_view category, const Json& fields, bool failure) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure) {
      ++failures_;
      ++by_category_[std::string(category)];
    }
    if (records_ >= kMaxRecords) {
      ++dropped_;
      return;
    }
    ++records_;
    Json head;
    head.str("test", test_).num("seed", seed_).str("kind", kind).str("category", category);
    std::string line = head.text();
    const std::string body = fields.text();
    if (body.size() > 2) {
      line.pop_back();
      line += ',';
      line += body.substr(1);
    }
    file_ << line << '\n';
  }

  // Records a byte mismatch (`kind` "mismatch", or "timeout" when the wait also gave up) between
  // the hardware's and the model's result: where they first differ, how many bytes differ, a window
  // of both around the first difference, and the full images for the first few mismatches of the
  // category. `source`: the input that explains the result (a store's shared-memory image), dumped
  // with the full images.
  void mismatch(std::string_view kind, std::string_view category, Json fields,
                std::span<const std::byte> hw, std::span<const std::byte> model, const Diff& diff,
                std::span<const std::byte> source = {}) {
    const std::size_t start = diff.first / 16 * 16;
    const std::size_t end_hw = std::min(hw.size(), start + kWindowBytes);
    const std::size_t end_model = std::min(model.size(), start + kWindowBytes);
    fields.num("bytes", hw.size()).num("first_diff", diff.first).num("diff_bytes", diff.count);
    fields.num("window_offset", start);
    if (start < hw.size()) fields.str("hw_window", to_hex(hw.subspan(start, end_hw - start)));
    if (start < model.size())
      fields.str("model_window", to_hex(model.subspan(start, end_model - start)));
    if (take_full_dump(category, hw.size() + model.size() + source.size())) {
      fields.str("hw_image", to_hex(hw)).str("model_image", to_hex(model));
      if (!source.empty()) fields.str("source_image", to_hex(source));
    }
    write(kind, category, fields, true);
  }

  // Counts a failure that has no byte images (timeouts, model errors, encode failures).
  void failure(std::string_view kind, std::string_view category, const Json& fields) {
    write(kind, category, fields, true);
  }

  std::int64_t failures() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_;
  }
  std::map<std::string, std::int64_t> by_category() const {
    std::lock_guard<std::mutex> lock(mu_);
    return by_category_;
  }

  // Prints the failure count of each category (at most `limit` lines).
  void print_categories(std::size_t limit = 20) const {
    const auto cats = by_category();
    std::size_t n = 0;
    for (const auto& [cat, count] : cats) {
      if (n++ == limit) {
        std::printf("[gpu] %s:   ... %zu more categories in %s\n", test_.c_str(),
                    cats.size() - limit, path_.c_str());
        break;
      }
      std::printf("[gpu] %s:   %-60s %lld\n", test_.c_str(), cat.c_str(),
                  static_cast<long long>(count));
    }
    if (dropped_ > 0) {
      std::printf("[gpu] %s:   (%lld records past the first %lld counted but not written)\n",
                  test_.c_str(), static_cast<long long>(dropped_),
                  static_cast<long long>(kMaxRecords));
    }
  }

  void flush() {
    std::lock_guard<std::mutex> lock(mu_);
    file_.flush();
  }

 private:
  bool take_full_dump(std::string_view category, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    int& n = full_dumps_[std::string(category)];
    if (n >= kFullDumpsPerCategory || full_dump_bytes_ + 2 * bytes > kFullDumpBudget) return false;
    ++n;
    full_dump_bytes_ += 2 * bytes;
    return true;
  }

  std::string test_;
  std::uint64_t seed_;
  std::string path_;
  std::ofstream file_;
  mutable std::mutex mu_;
  std::int64_t failures_ = 0;
  std::int64_t records_ = 0;
  std::int64_t dropped_ = 0;
  std::map<std::string, std::int64_t> by_category_;
  std::map<std::string, int> full_dumps_;
  std::size_t full_dump_bytes_ = 0;
};

// ---- host parallelism -----------------------------------------------------------------------

// Runs fn(i) for i in [0, n) on every host core; rethrows the first exception a call threw.
inline void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  const std::size_t threads =
      std::max<std::size_t>(1, std::min<std::size_t>({n, std::thread::hardware_concurrency(), 32}));
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  if (error) std::rethrow_exception(error);
}

// ---- device memory --------------------------------------------------------------------------

// cudaMalloc'd bytes, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { resize(bytes); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

  // Grows (never shrinks) to at least `bytes`; the contents are lost when it grows.
  void resize(std::size_t bytes) {
    if (bytes <= size_ && ptr_ != nullptr) return;
    if (ptr_ != nullptr) TMA_CHECK_CUDA(cudaFree(ptr_));
    ptr_ = nullptr;
    size_ = 0;
    TMA_CHECK_CUDA(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 256)));
    size_ = bytes;
  }

  std::byte* data() const { return static_cast<std::byte*>(ptr_); }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const { return size_; }

  void upload(std::span<const std::byte> host, std::size_t offset = 0) {
    TMA_CHECK_CUDA(cudaMemcpy(data() + offset, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  void download(std::span<std::byte> host, std::size_t offset = 0) const {
    TMA_CHECK_CUDA(cudaMemcpy(host.data(), data() + offset, host.size(), cudaMemcpyDeviceToHost));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

constexpr std::size_t align_up(std::size_t x, std::size_t a) {
  return (x + a - 1) / a * a;
}

// ---- running kernels ------------------------------------------------------------------------

// Waits for `stream` to drain, at most `timeout_s` seconds. A kernel that does not finish is a
// deadlock (a barrier that never completes): the program records it, says so and exits 1 at once
// (waiting for the context's teardown would hang too).
inline void sync_with_watchdog(cudaStream_t stream, double timeout_s, std::string_view what,
                               Report& report) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      check_cuda(e, std::string("kernel: " + std::string(what)).c_str(), __FILE__, __LINE__);
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s) {
      Json j;
      j.str("what", what).num("timeout_s", timeout_s);
      report.failure("deadlock", "deadlock", j);
      report.flush();
      std::printf("[gpu] %s: DEADLOCK: %.*s did not finish within %.0f s (seed %llu); exiting\n",
                  report.test().c_str(), static_cast<int>(what.size()), what.data(), timeout_s,
                  static_cast<unsigned long long>(report.seed()));
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// What a test body gets: the arguments, the report and facts about the GPU.
struct Context {
  Args args;
  Report& report;
  int device = 0;
  cudaDeviceProp prop{};
  int clock_khz = 1500000;  // SM clock, for converting barrier-wait bounds to cycles

  // clock64() cycles in `seconds` (for the device-side bounded waits).
  long long cycles(double seconds) const {
    return static_cast<long long>(seconds * static_cast<double>(clock_khz) * 1000.0);
  }
  // Whether case `index` is to run (all of them, or only --only's).
  bool selected(std::int64_t index) const { return args.only < 0 || args.only == index; }
};

// Why this process cannot run the tests (no GPU, too old, no code for it), or nullopt.
inline std::optional<std::string> why_no_gpu(const void* probe_kernel, int* device_out) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return std::string("no CUDA GPU visible (") +
           (e != cudaSuccess ? cudaGetErrorName(e) : "0 devices") + ")";
  }
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return std::string("cudaGetDevice failed");
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (major < 9) {
    return "GPU " + std::to_string(dev) + " is compute capability " + std::to_string(major) + "." +
           std::to_string(minor) + "; TMA needs 9.0 or newer";
  }
  cudaFuncAttributes attr{};
  const cudaError_t fe = cudaFuncGetAttributes(&attr, probe_kernel);
  if (fe != cudaSuccess) {
    cudaGetLastError();
    return "this binary has no code for compute capability " + std::to_string(major) + "." +
           std::to_string(minor) + " (" + cudaGetErrorName(fe) +
           "); it is built for sm_90a: rebuild with CMAKE_CUDA_ARCHITECTURES for this GPU";
  }
  *device_out = dev;
  return std::nullopt;
}

// The skeleton of every test program: parse the arguments, skip without a suitable GPU, run
// `body` (which returns whether everything matched), print the summary and pick the exit code.
inline int run_test(std::string_view test, int argc, char** argv, const void* probe_kernel,
                    const std::function<bool(Context&)>& body) {
  const auto args = parse_args(test, argc, argv);
  if (!args) return 2;
  const std::string name(test);
  int device = 0;
  if (auto reason = why_no_gpu(probe_kernel, &device)) {
    std::printf("[gpu] %s: SKIPPED: %s\n", name.c_str(), reason->c_str());
    return 77;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Report> report;
  try {
    report.emplace(name, *args);
  } catch (const std::exception& e) {
    std::printf("[gpu] %s: ERROR: %s\n[gpu] %s: FAIL\n", name.c_str(), e.what(), name.c_str());
    return 1;
  }
  bool ok = false;
  try {
    Context ctx{*args, *report, device, {}, 1500000};
    TMA_CHECK_CUDA(cudaGetDeviceProperties(&ctx.prop, device));
    TMA_CHECK_CUDA(cudaDeviceGetAttribute(&ctx.clock_khz, cudaDevAttrClockRate, device));
    int driver = 0, runtime = 0;
    TMA_CHECK_CUDA(cudaDriverGetVersion(&driver));
    TMA_CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
    std::printf(
        "[gpu] %s: seed=%llu%s on %s (sm_%d%d, %d SMs, driver %d, runtime %d); repeat with "
        "--seed %llu\n",
        name.c_str(), static_cast<unsigned long long>(args->seed), args->quick ? " quick" : "",
        ctx.prop.name, ctx.prop.major, ctx.prop.minor, ctx.prop.multiProcessorCount, driver,
        runtime, static_cast<unsigned long long>(args->seed));
    Json run;
    run.str("device", ctx.prop.name)
        .num("cc", ctx.prop.major * 10 + ctx.prop.minor)
        .num("sms", ctx.prop.multiProcessorCount)
        .num("driver", driver)
        .num("runtime", runtime)
        .num("quick", args->quick)
        .num("count", args->count)
        .num("only", args->only);
    report->write("run", "run", run, false);
    ok = body(ctx);
  } catch (const std::exception& e) {
    // A CUDA error (a fault poisons the context), a model or encoding exception outside a case:
    // recorded, and the run ends here.
    Json j;
    j.str("error", e.what());
    report->failure("error", "error", j);
    std::printf("[gpu] %s: ERROR: %s\n", name.c_str(), e.what());
    ok = false;
  }
  ok = ok && report->failures() == 0;
  if (report->failures() > 0) report->print_categories();
  report->flush();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[gpu] %s: %s in %.1f s (seed %llu; records in %s)\n", name.c_str(),
              ok ? "PASS" : "FAIL", secs, static_cast<unsigned long long>(args->seed),
              report->path().c_str());
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace tma::testing
