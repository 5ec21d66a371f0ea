// tma-bench: the bench's own kernels (see kernels.hpp).
#include <cuda_runtime.h>
#include <cuda/ptx>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "kernels.hpp"

namespace tma::bench {
namespace {

constexpr int kThreads = 256;
// Grid-stride loops: enough blocks to fill any current GPU several times over.
constexpr std::int64_t kMaxBlocks = 8192;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Calls f(T{}) with the unsigned integer type of `bytes` bytes: the kernels move bit patterns.
template <class F>
void with_element_type(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(std::uint8_t{});
      return;
    case 2:
      f(std::uint16_t{});
      return;
    case 4:
      f(std::uint32_t{});
      return;
    case 8:
      f(std::uint64_t{});
      return;
    default:
      throw std::logic_error("tma-bench kernels: element size " + std::to_string(bytes) +
                             " is not 1, 2, 4 or 8 bytes");
  }
}

template <class T>
__host__ __device__ constexpr T poison_value() {
  T v = 0;
  for (std::size_t b = 0; b < sizeof(T); ++b)
    v = static_cast<T>((v << 8) | kPoisonByte);
  return v;
}

// ---- random input ----------------------------------------------------------------------------

enum class FillKind : int { kInteger, kBf16, kFp16, kFp32, kFp64 };

FillKind fill_kind(DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return FillKind::kBf16;
    case DataType::kFloat16:
      return FillKind::kFp16;
    case DataType::kFloat32:
    case DataType::kFloat32Ftz:
    case DataType::kTFloat32:
    case DataType::kTFloat32Ftz:
      return FillKind::kFp32;
    case DataType::kFloat64:
      return FillKind::kFp64;
    default:
      return FillKind::kInteger;
  }
}

// splitmix64's finalizer: a well-mixed 64-bit hash of the offset and the seed.
__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A random non-zero value whose bytes never all equal the poison. Floats: sign random, exponent
// of 0.5 or 1, mantissa random, so finite, normal, 0.5 <= |x| < 2 (never a poison pattern, whose
// exponent field is far outside that range).
template <class T>
__device__ T random_value(std::uint64_t h, FillKind kind) {
  const std::uint64_t sign = h >> 63;
  const std::uint64_t half = (h >> 62) & 1;  // exponent of 0.5 or of 1
  switch (kind) {
    case FillKind::kBf16:
      return static_cast<T>(sign << 15 | (126 + half) << 7 | (h & 0x7F));
    case FillKind::kFp16:
      return static_cast<T>(sign << 15 | (14 + half) << 10 | (h & 0x3FF));
    case FillKind::kFp32:
      return static_cast<T>(sign << 31 | (126 + half) << 23 | (h & 0x7FFFFF));
    case FillKind::kFp64:
      return static_cast<T>(sign << 63 | (1022 + half) << 52 | (h & 0xFFFFFFFFFFFFFull));
    case FillKind::kInteger:
      break;
  }
  if constexpr (sizeof(T) == 1) {
    // 1..255 without the poison byte.
    const unsigned v = 1 + static_cast<unsigned>(h % 254);
    return static_cast<T>(v >= kPoisonByte ? v + 1 : v);
  } else {
    T v = static_cast<T>(h | 1);
    return v == poison_value<T>() ? static_cast<T>(v ^ 2) : v;
  }
}

template <class T>
__global__ void fill_kernel(T* data, std::int64_t n, std::uint64_t seed, FillKind kind) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += step) {
    const std::uint64_t h = mix(seed ^ (static_cast<std::uint64_t>(p) * 0x9E3779B97F4A7C15ull));
    data[p] = random_value<T>(h, kind);
  }
}

// ---- transpose reference ---------------------------------------------------------------------

struct TransposeDims {
  std::int64_t batch, rows, cols;   // of src
  std::int64_t src_batch, src_row;  // strides, elements
  std::int64_t dst_batch, dst_row;
};

template <class T>
__global__ void transpose_reference_kernel(T* dst, const T* src, TransposeDims t) {
  const std::int64_t n = t.batch * t.rows * t.cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < n;
       q += step) {
    // q walks dst in memory order: i (a src row) is dst's innermost index.
    const std::int64_t i = q % t.rows;
    const std::int64_t rest = q / t.rows;
    const std::int64_t j = rest % t.cols;
    const std::int64_t b = rest / t.cols;
    dst[b * t.dst_batch + j * t.dst_row + i] = src[b * t.src_batch + i * t.src_row + j];
  }
}

// ---- compare ---------------------------------------------------------------------------------

// got's layout (after merging dimensions that are contiguous in both tensors) and expected's
// strides, as fixed-size arrays that the unrolled loop indexes with constants (no local memory).
struct CompareLayout {
  int outer_dims = 0;                          // rank - 1
  std::int64_t extent[kMaxRank - 1] = {};      // shape[0 .. rank-2]
  std::int64_t got_stride[kMaxRank - 1] = {};  // strides[0 .. rank-2]
  std::int64_t expected_stride[kMaxRank - 1] = {};
  std::int64_t inner_extent = 0;  // shape[rank-1]; inner strides are 1
};

struct CompareState {
  unsigned long long count;
  unsigned long long first;
  unsigned int sampled;
  unsigned long long samples[Mismatches::kMaxSamples];
};

template <class T>
__global__ void compare_kernel(const T* got, const T* expected, CompareLayout l,
                               std::int64_t footprint, CompareState* st) {
  const T poison = poison_value<T>();
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < footprint; p += step) {
    // Offset -> index by got's nested strides (layout.hpp), then -> expected's offset.
    std::int64_t rest = p;
    std::int64_t e = 0;
    bool inside = true;
#pragma unroll
    for (int d = 0; d < kMaxRank - 1; ++d) {
      if (d < l.outer_dims) {
        const std::int64_t i = rest / l.got_stride[d];
        rest -= i * l.got_stride[d];
        inside = inside && i < l.extent[d];
        e += i * l.expected_stride[d];
      }
    }
    inside = inside && rest < l.inner_extent;
    const bool bad = got[p] != (inside ? expected[e + rest] : poison);

    // One atomic per warp for the count; the first offset and a few samples from the lanes.
    const unsigned active = __activemask();
    const unsigned bad_lanes = __ballot_sync(active, bad);
    if (bad_lanes != 0 && static_cast<int>(threadIdx.x % 32) == __ffs(active) - 1) {
      atomicAdd(&st->count, static_cast<unsigned long long>(__popc(bad_lanes)));
    }
    if (bad) {
      const auto offset = static_cast<unsigned long long>(p);
      if (offset < *static_cast<volatile unsigned long long*>(&st->first)) {
        atomicMin(&st->first, offset);
      }
      if (*static_cast<volatile unsigned int*>(&st->sampled) < Mismatches::kMaxSamples) {
        const unsigned slot = atomicAdd(&st->sampled, 1u);
        if (slot < Mismatches::kMaxSamples) st->samples[slot] = offset;
      }
    }
  }
}

// The compare kernel's view of the pair: fewer dimensions mean fewer divisions per element (a
// contiguous pair needs none).
CompareLayout compare_layout(const TensorView& got, const TensorView& expected) {
  const MergedPair m = merge_contiguous_dims(got, expected);
  CompareLayout l;
  l.outer_dims = m.a.rank - 1;
  for (int d = 0; d + 1 < m.a.rank; ++d) {
    l.extent[d] = m.a.shape[d];
    l.got_stride[d] = m.a.strides[d];
    l.expected_stride[d] = m.b.strides[d];
  }
  l.inner_extent = m.a.shape[m.a.rank - 1];
  return l;
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles)
    __nanosleep(500);
}

__global__ void clock_probe_kernel(ClockReading* out, long long window_ns) {
  const auto timer = [] { return static_cast<long long>(cuda::ptx::get_sreg_globaltimer()); };
  const long long t_start = timer();
  long long t0 = t_start;
  while (t0 == t_start)  // the next tick
    t0 = timer();
  const long long c0 = clock64();
  long long t1 = t0;
  while (t1 - t0 < window_ns)  // the first tick at least window_ns later
    t1 = timer();
  const long long c1 = clock64();
  out->cycles = c1 - c0;
  out->ns = t1 - t0;
}

}  // namespace

void fill_random(const TensorView& v, std::uint64_t seed, cudaStream_t stream) {
  const std::int64_t n = footprint_elements(v);
  with_element_type(element_size(v), [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(v.data), n, seed,
                                                           fill_kind(v.dtype));
    TMA_BENCH_CHECK_LAUNCH();
  });
}

void poison(const TensorView& v, cudaStream_t stream) {
  TMA_BENCH_CHECK(cudaMemsetAsync(v.data, kPoisonByte, footprint_bytes(v), stream));
}

void transpose_reference(const TensorView& dst, const TensorView& src, cudaStream_t stream) {
  const bool batched = src.rank == 3;
  if ((src.rank != 2 && src.rank != 3) || dst.rank != src.rank) {
    throw std::logic_error("transpose_reference: ranks " + std::to_string(src.rank) + " -> " +
                           std::to_string(dst.rank) + "; need 2 -> 2 or 3 -> 3");
  }
  const int r = src.rank;
  TransposeDims t{};
  t.batch = batched ? src.shape[0] : 1;
  t.rows = src.shape[r - 2];
  t.cols = src.shape[r - 1];
  t.src_row = src.strides[r - 2];
  t.dst_row = dst.strides[r - 2];
  t.src_batch = batched ? src.strides[0] : 0;
  t.dst_batch = batched ? dst.strides[0] : 0;
  const std::int64_t n = t.batch * t.rows * t.cols;
  with_element_type(element_size(src), [&](auto zero) {
    using T = decltype(zero);
    transpose_reference_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<T*>(dst.data), static_cast<const T*>(src.data), t);
    TMA_BENCH_CHECK_LAUNCH();
  });
}

Mismatches compare(const TensorView& got, const TensorView& expected, cudaStream_t stream) {
  const CompareLayout layout = compare_layout(got, expected);
  const std::int64_t n = footprint_elements(got);

  CompareState init{};
  init.first = ULLONG_MAX;
  const DeviceBuffer scratch(sizeof(CompareState));
  auto* state = reinterpret_cast<CompareState*>(scratch.data());
  CompareState result{};
  TMA_BENCH_CHECK(cudaMemcpyAsync(state, &init, sizeof init, cudaMemcpyHostToDevice, stream));
  with_element_type(element_size(got), [&](auto zero) {
    using T = decltype(zero);
    compare_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const T*>(got.data), static_cast<const T*>(expected.data), layout, n, state);
    TMA_BENCH_CHECK_LAUNCH();
  });
  TMA_BENCH_CHECK(cudaMemcpyAsync(&result, state, sizeof result, cudaMemcpyDeviceToHost, stream));
  TMA_BENCH_CHECK(cudaStreamSynchronize(stream));

  Mismatches m;
  m.count = result.count;
  if (result.count == 0) return m;
  m.first = static_cast<std::int64_t>(result.first);
  const unsigned sampled = std::min<unsigned>(result.sampled, Mismatches::kMaxSamples);
  for (unsigned i = 0; i < sampled; ++i) {
    if (result.samples[i] != result.first) {
      m.samples.push_back(static_cast<std::int64_t>(result.samples[i]));
    }
  }
  std::sort(m.samples.begin(), m.samples.end());
  return m;
}

void launch_spin(cudaStream_t stream, long long cycles) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  TMA_BENCH_CHECK_LAUNCH();
}

void launch_clock_probe(cudaStream_t stream, ClockReading* out, long long window_ns) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(out, window_ns);
  TMA_BENCH_CHECK_LAUNCH();
}

}  // namespace tma::bench
