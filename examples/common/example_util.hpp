// What every tmakit example shares: checked CUDA calls, the skip rule, random data, comparison.
//
// Exit codes: 0 PASS, 1 FAIL (a wrong byte, a CUDA error, an exception), 77 SKIP (no usable GPU;
// CTest's SKIP_RETURN_CODE).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace example {

inline constexpr int kExitSkip = 77;

// Every CUDA call goes through this: on failure it names the call, the file and line, and exits 1.
inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "FAIL: %s returned %s (%s) at %s:%d\n", call, cudaGetErrorName(e),
               cudaGetErrorString(e), file, line);
  std::exit(1);
}

#define EXAMPLE_CHECK(call) ::example::check((call), #call, __FILE__, __LINE__)
// After each launch: the launch itself (configuration errors), then its execution.
#define EXAMPLE_CHECK_LAUNCH()              \
  do {                                      \
    EXAMPLE_CHECK(cudaGetLastError());      \
    EXAMPLE_CHECK(cudaDeviceSynchronize()); \
  } while (0)

// Returns true when device 0 can run TMA (compute capability >= 9.0); otherwise prints
// "SKIP: <reason>" and returns false, and the example exits with kExitSkip.
inline bool have_hopper(cudaDeviceProp* prop_out = nullptr) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    return false;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("SKIP: cudaGetDeviceProperties(0) failed\n");
    return false;
  }
  if (prop.major < 9) {
    std::printf("SKIP: TMA needs compute capability 9.0 or newer; device 0 (%s) is %d.%d\n",
                prop.name, prop.major, prop.minor);
    return false;
  }
  if (prop_out != nullptr) *prop_out = prop;
  std::printf("device 0: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
  return true;
}

// `n` elements of random bits (sizeof(T) <= 8), none of them zero (a zero would hide a copy that
// never happened).
template <class T>
std::vector<T> random_nonzero(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<T> v(n);
  const T zero{};
  for (auto& x : v) {
    do {
      const std::uint64_t bits = (std::uint64_t{gen()} << 32) | gen();
      std::memcpy(&x, &bits, sizeof(T) < 8 ? sizeof(T) : 8);
    } while (std::memcmp(&x, &zero, sizeof(T)) == 0);
  }
  return v;
}

// Compares `got` with `want` byte for byte; prints the first few mismatching elements.
template <class T>
bool same_bytes(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    std::printf("FAIL: %s: %zu elements, expected %zu\n", what, got.size(), want.size());
    return false;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) == 0) continue;
    if (bad < 5) {
      std::uint64_t g = 0, w = 0;
      std::memcpy(&g, &got[i], sizeof(T) < 8 ? sizeof(T) : 8);
      std::memcpy(&w, &want[i], sizeof(T) < 8 ? sizeof(T) : 8);
      std::printf("  %s[%zu] = 0x%llx, expected 0x%llx\n", what, i,
                  static_cast<unsigned long long>(g), static_cast<unsigned long long>(w));
    }
    ++bad;
  }
  if (bad != 0) std::printf("FAIL: %s: %zu of %zu elements differ\n", what, bad, got.size());
  return bad == 0;
}

// Device buffer of T, freed on scope exit.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    EXAMPLE_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  void upload(const std::vector<T>& h) {
    EXAMPLE_CHECK(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    EXAMPLE_CHECK(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

inline int verdict(bool ok) {
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace example
