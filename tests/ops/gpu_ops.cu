// GPU test of tma::ops::copy and tma::ops::transpose, both paths (TMA and ordinary loads):
// random shapes, ranks, padded strides and element types; random input bytes; the output arena
// poisoned (0xA5) before each run; the whole arena compared byte for byte, so a write outside the
// view is caught as well as a wrong or missing element.
// Exit codes: 0 pass, 1 fail, 77 skipped (no GPU / not sm_90+), with the reason printed.
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tma/host/error.hpp"
#include "tma/ops/copy.hpp"

namespace {

using tma::DataType;
using tma::ops::Path;
using tma::ops::TensorView;

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    const cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(e_));                                     \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

constexpr unsigned char kPoison = 0xA5;

struct Arena {
  unsigned char* dev = nullptr;
  std::size_t bytes = 0;
  explicit Arena(std::size_t n) : bytes(n) { CHECK_CUDA(cudaMalloc(&dev, n)); }
  ~Arena() { cudaFree(dev); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
};

// A random view of `shape` inside an arena: innermost stride 1, outer strides padded by a random
// multiple of 16 bytes, 16-byte aligned base offset. Returns the bytes it spans.
std::size_t make_view(TensorView& v, DataType dt, int rank, const std::int64_t* shape,
                      std::mt19937_64& rng, bool pad) {
  const int e = tma::element_bytes(dt);
  v.dtype = dt;
  v.rank = rank;
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    std::int64_t next = stride * shape[d];
    if (d > 0) {  // the stride of the next dimension out: a multiple of 16 bytes
      const std::int64_t unit = 16 / std::min(16, e);
      next = (next + unit - 1) / unit * unit;
      if (pad && rng() % 2) next += unit * static_cast<std::int64_t>(rng() % 3);
    }
    stride = next;
  }
  std::size_t span = 1;
  for (int d = 0; d < rank; ++d)
    span += static_cast<std::size_t>(v.shape[d] - 1) * v.strides[d];
  return span * e;
}

// Byte offsets of every element of v (row-major order) relative to v.data.
void for_each_element(const TensorView& v, auto&& f) {
  const int e = tma::element_bytes(v.dtype);
  std::int64_t idx[tma::kMaxRank] = {};
  const std::int64_t n = v.numel();
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (int d = 0; d < v.rank; ++d)
      off += idx[d] * v.strides[d];
    f(idx, off * e);
    for (int d = v.rank - 1; d >= 0; --d) {
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
}

struct Counts {
  int cases = 0, failures = 0;
};

// Runs `op` into a poisoned dst arena and compares every byte with `expected`.
bool run_and_compare(const char* what, const std::string& desc, Arena& dst, void (*op)(void*),
                     void* ctx, const std::vector<unsigned char>& expected) {
  CHECK_CUDA(cudaMemset(dst.dev, kPoison, dst.bytes));
  try {
    op(ctx);
  } catch (const tma::Error& e) {
    std::printf("FAIL %s %s: threw %s\n", what, desc.c_str(), e.what());
    return false;
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned char> got(dst.bytes);
  CHECK_CUDA(cudaMemcpy(got.data(), dst.dev, dst.bytes, cudaMemcpyDeviceToHost));
  // Report up to 12 runs of mismatching bytes: where a wrong write lands says what went wrong.
  int runs = 0;
  std::size_t first = got.size();
  for (std::size_t i = 0; i < got.size() && runs < 12; ++i) {
    if (got[i] == expected[i]) continue;
    std::size_t j = i;
    while (j < got.size() && got[j] != expected[j])
      ++j;
    if (runs == 0) first = i;
    std::printf("%s %s %s: bytes [%zu, %zu) differ: got 0x%02x.., expected 0x%02x..\n",
                runs == 0 ? "FAIL" : "    ", what, runs == 0 ? desc.c_str() : "", i, j, got[i],
                expected[i]);
    ++runs;
    i = j;
  }
  return first == got.size();
}

struct OpCtx {
  TensorView dst, src;
  Path path;
  bool transpose;
};

void run_op(void* p) {
  auto* c = static_cast<OpCtx*>(p);
  if (c->transpose) {
    tma::ops::transpose(c->dst, c->src, nullptr, c->path);
  } else {
    tma::ops::copy(c->dst, c->src, nullptr, c->path);
  }
}

std::string describe(const TensorView& v) {
  std::ostringstream o;
  o << tma::to_string(v.dtype) << " shape [";
  for (int d = 0; d < v.rank; ++d)
    o << (d ? "," : "") << v.shape[d];
  o << "] strides [";
  for (int d = 0; d < v.rank; ++d)
    o << (d ? "," : "") << v.strides[d];
  o << ']';
  return o.str();
}

void test_copy(std::mt19937_64& rng, int cases, Counts& c) {
  const DataType types[] = {DataType::kUInt8, DataType::kBFloat16, DataType::kFloat32,
                            DataType::kFloat64};
  for (int k = 0; k < cases; ++k) {
    const DataType dt = types[rng() % 4];
    const int e = tma::element_bytes(dt);
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::int64_t shape[5];
    std::int64_t total = 1;
    for (int d = 0; d < rank; ++d) {
      // Mostly small outer extents, an inner extent from 1 to a few thousand (ragged).
      const std::int64_t cap = d == rank - 1 ? 3000 : (rank <= 2 ? 600 : 24);
      shape[d] = 1 + static_cast<std::int64_t>(rng() % cap);
      total *= shape[d];
    }
    if (k % 10 == 0) {  // large contiguous 1-D runs, with and without a tail
      shape[0] = (std::int64_t{1} << 20) / e + static_cast<std::int64_t>(rng() % 3) * 37;
      for (int d = 1; d < rank; ++d)
        shape[d] = 1;
      total = shape[0];
    }
    (void)total;
    OpCtx ctx{};
    const bool pad = k % 10 != 0;
    const std::size_t sbytes = make_view(ctx.src, dt, rank, shape, rng, pad);
    const std::size_t dbytes = make_view(ctx.dst, dt, rank, shape, rng, pad);
    Arena src(sbytes + 64), dst(dbytes + 64);
    ctx.src.data = src.dev + 16 * (rng() % 2);
    ctx.dst.data = dst.dev + 16 * (rng() % 2);
    std::vector<unsigned char> in(src.bytes);
    for (auto& b : in)
      b = static_cast<unsigned char>(rng());
    CHECK_CUDA(cudaMemcpy(src.dev, in.data(), in.size(), cudaMemcpyHostToDevice));
    std::vector<unsigned char> expected(dst.bytes, kPoison);
    const std::size_t soff = static_cast<unsigned char*>(ctx.src.data) - src.dev;
    const std::size_t doff = static_cast<unsigned char*>(ctx.dst.data) - dst.dev;
    std::vector<std::int64_t> src_offsets;
    for_each_element(ctx.src,
                     [&](const std::int64_t*, std::int64_t off) { src_offsets.push_back(off); });
    std::size_t i = 0;
    for_each_element(ctx.dst, [&](const std::int64_t*, std::int64_t off) {
      std::memcpy(&expected[doff + off], &in[soff + src_offsets[i++]], e);
    });
    for (Path path : {Path::kTma, Path::kOrdinary}) {
      ctx.path = path;
      ctx.transpose = false;
      ++c.cases;
      const std::string desc = describe(ctx.src) + " -> " + describe(ctx.dst);
      if (!run_and_compare(path == Path::kTma ? "copy/tma" : "copy/ordinary", desc, dst, run_op,
                           &ctx, expected))
        ++c.failures;
    }
  }
}

void test_transpose(std::mt19937_64& rng, int cases, Counts& c) {
  const DataType types[] = {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32};
  for (int k = 0; k < cases; ++k) {
    const DataType dt = types[rng() % 3];
    const int e = tma::element_bytes(dt);
    const bool batched = rng() % 3 == 0;
    const int rank = batched ? 3 : 2;
    const std::int64_t batch = batched ? 1 + static_cast<std::int64_t>(rng() % 4) : 1;
    std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 700);
    std::int64_t cols = 1 + static_cast<std::int64_t>(rng() % 700);
    if (k % 8 == 0) rows = 1;  // 1 x N and N x 1
    if (k % 8 == 1) cols = 1;
    if (k % 8 == 2) {  // full tiles
      rows = 128 * (1 + static_cast<std::int64_t>(rng() % 4));
      cols = 64 * (1 + static_cast<std::int64_t>(rng() % 4));
    }
    std::int64_t sshape[3], dshape[3];
    const int o = batched ? 1 : 0;  // index of the row dimension
    sshape[0] = dshape[0] = batch;
    sshape[o] = rows;
    sshape[o + 1] = cols;
    dshape[o] = cols;
    dshape[o + 1] = rows;
    OpCtx ctx{};
    const std::size_t sbytes = make_view(ctx.src, dt, rank, sshape, rng, true);
    const std::size_t dbytes = make_view(ctx.dst, dt, rank, dshape, rng, true);
    Arena src(sbytes + 64), dst(dbytes + 64);
    ctx.src.data = src.dev;
    ctx.dst.data = dst.dev + 16 * (rng() % 2);
    std::vector<unsigned char> in(src.bytes);
    for (auto& b : in)
      b = static_cast<unsigned char>(rng());
    CHECK_CUDA(cudaMemcpy(src.dev, in.data(), in.size(), cudaMemcpyHostToDevice));
    std::vector<unsigned char> expected(dst.bytes, kPoison);
    const std::size_t doff = static_cast<unsigned char*>(ctx.dst.data) - dst.dev;
    for_each_element(ctx.dst, [&](const std::int64_t* idx, std::int64_t off) {
      // dst[b][j][i] = src[b][i][j]
      std::int64_t so = 0;
      if (batched) so += idx[0] * ctx.src.strides[0];
      so += idx[o + 1] * ctx.src.strides[o] + idx[o] * ctx.src.strides[o + 1];
      std::memcpy(&expected[doff + off], &in[so * e], e);
    });
    for (Path path : {Path::kTma, Path::kOrdinary}) {
      ctx.path = path;
      ctx.transpose = true;
      ++c.cases;
      const std::string desc = describe(ctx.src) + " -> " + describe(ctx.dst);
      if (!run_and_compare(path == Path::kTma ? "transpose/tma" : "transpose/ordinary", desc, dst,
                           run_op, &ctx, expected))
        ++c.failures;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 77;
  }
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  if (p.major < 9) {
    std::printf("SKIP: %s is compute capability %d.%d; TMA needs 9.0+\n", p.name, p.major, p.minor);
    return 77;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t seed =
      argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
  std::printf("[gpu_ops] seed %" PRIu64 "%s\n", seed, quick ? " (quick)" : "");
  std::mt19937_64 rng(seed);
  Counts copy_counts, transpose_counts;
  test_copy(rng, quick ? 12 : 150, copy_counts);
  test_transpose(rng, quick ? 12 : 150, transpose_counts);
  std::printf("[gpu_ops] copy: %d cases, %d failures; transpose: %d cases, %d failures\n",
              copy_counts.cases, copy_counts.failures, transpose_counts.cases,
              transpose_counts.failures);
  return copy_counts.failures + transpose_counts.failures == 0 ? 0 : 1;
}
