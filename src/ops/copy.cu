// tmakit ops: copy of strided tensors (rank 1..5, 1/2/4/8-byte elements).
//
// TMA path: a persistent grid; in each CTA one thread runs a ring of `stages` shared-memory tiles,
// keeping `lookahead` TMA loads in flight ahead of the TMA store of the tile that just landed. The
// bytes never touch registers. Both tensors are viewed as rank-5 tensor maps over the same box.
//
// Ordinary path (the baseline that measures TMA's gain): the same tiles, copied by every thread of
// the CTA with 16-byte loads and stores, four independent vectors in flight per thread.
//
// Napkin math (H100 SXM, 3.35 TB/s): a 1 GiB copy moves 2 GiB, 0.64 ms at the datasheet rate.
// Keeping HBM busy takes ~bandwidth x latency = 3.35 TB/s x ~1.5 us = 5 MB in flight, ~38 KB per
// SM; 3 CTAs x 2 loads x 16 KB = 96 KB per SM in the default configuration.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "plan.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"
#include "tma/ops/copy.hpp"
#include "tma/ops/tuning.hpp"

namespace tma::ops {
namespace detail {
namespace {

constexpr int kRank = kMaxRank;  // every copy runs on rank-5 maps (extent-1 padding dimensions)

struct DeviceGrid {
  std::uint32_t box[kRank];
  std::uint32_t tiles[kRank];
  std::uint64_t total;
  std::uint32_t tile_bytes;
};

// Coordinates (innermost first) of tile `t`'s first element.
__device__ __forceinline__ void tile_origin(std::uint64_t t, const DeviceGrid& g,
                                            std::int32_t (&c)[kRank]) {
#pragma unroll
  for (int d = 0; d < kRank; ++d) {
    const std::uint64_t i = t % g.tiles[d];
    t /= g.tiles[d];
    c[d] = static_cast<std::int32_t>(i * g.box[d]);
  }
}

// One thread per CTA does everything: the other 31 lanes of the warp exit at once.
template <int kStages, int kLookahead, CacheHint kHint = CacheHint::kNone>
__global__ void __launch_bounds__(32)
    copy_tma_kernel(const __grid_constant__ TensorMap src, const __grid_constant__ TensorMap dst,
                    const DeviceGrid g) {
  static_assert(kLookahead >= 1 && kLookahead < kStages,
                "copy_tma_kernel: lookahead must be 1..stages-1 so a store can drain while the "
                "next loads land");
  extern __shared__ __align__(128) unsigned char smem[];  // (kStages, tile_bytes)
  __shared__ Barrier full_bar[kStages];
  if (threadIdx.x != 0) return;

  prefetch_descriptor(&src);
  prefetch_descriptor(&dst);
  for (int s = 0; s < kStages; ++s)
    full_bar[s].init(1);
  fence_barrier_init();

  const std::uint64_t first = blockIdx.x;
  const std::uint64_t step = gridDim.x;
  const std::uint64_t mine = first < g.total ? (g.total - first + step - 1) / step : 0;

  PipelineState load_at = PipelineState::start(kStages);
  PipelineState store_at = PipelineState::start(kStages);
  auto issue_load = [&](std::uint64_t k) {
    std::int32_t c[kRank];
    tile_origin(first + k * step, g, c);
    Barrier& bar = full_bar[load_at.index];
    bar.arrive_expect_tx(g.tile_bytes);
    load(smem + load_at.index * g.tile_bytes, &src, bar, c, kHint);
    load_at.advance();
  };

  for (std::uint64_t k = 0; k < mine && k < kLookahead; ++k)
    issue_load(k);
  for (std::uint64_t k = 0; k < mine; ++k) {
    full_bar[store_at.index].wait(store_at.phase);
    std::int32_t c[kRank];
    tile_origin(first + k * step, g, c);
    store(&dst, smem + store_at.index * g.tile_bytes, c, kHint);
    commit_group();
    store_at.advance();
    if (k + kLookahead < mine) {
      // The next load reuses the stage of the store committed kStages - kLookahead tiles ago.
      wait_group_read<kStages - kLookahead>();
      issue_load(k + kLookahead);
    }
  }
  // The stores must have read shared memory before the CTA leaves; their global writes are
  // performed by the grid's completion (see gemm_kernel.cuh).
  wait_group_read<0>();
}

struct DeviceLayout {
  std::uint64_t dims[kRank];
  std::uint64_t src_stride[kRank];  // bytes
  std::uint64_t dst_stride[kRank];
  std::uint32_t esize;
};

constexpr int kOrdinaryThreads = 256;
constexpr int kOrdinaryUnroll = 4;

// Copies the first `bytes` bytes of a 16-byte vector that sticks out of the tensor's end.
__device__ __forceinline__ void copy_partial(unsigned char* d, const unsigned char* s,
                                             std::uint32_t bytes) {
  for (std::uint32_t b = 0; b < bytes; ++b)
    d[b] = s[b];
}

// The same tiles as the TMA path, copied with 16-byte vector loads and stores.
__global__ void __launch_bounds__(kOrdinaryThreads)
    copy_ordinary_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                         const DeviceLayout l, const DeviceGrid g) {
  const std::uint32_t vecs_per_row = g.box[0] * l.esize / 16;
  const std::uint32_t rows = g.box[1] * g.box[2] * g.box[3] * g.box[4];
  const std::uint32_t vecs = vecs_per_row * rows;
  for (std::uint64_t t = blockIdx.x; t < g.total; t += gridDim.x) {
    std::int32_t c[kRank];
    tile_origin(t, g, c);
    for (std::uint32_t v0 = threadIdx.x; v0 < vecs; v0 += kOrdinaryThreads * kOrdinaryUnroll) {
      uint4 buf[kOrdinaryUnroll];
      std::uint64_t soff[kOrdinaryUnroll], doff[kOrdinaryUnroll];
      std::uint32_t bytes[kOrdinaryUnroll];  // 16: whole vector; 1..15: partial; 0: skip
#pragma unroll
      for (int u = 0; u < kOrdinaryUnroll; ++u) {
        const std::uint32_t v = v0 + u * kOrdinaryThreads;
        bytes[u] = 0;
        if (v >= vecs) continue;
        std::uint32_t row = v / vecs_per_row;
        const std::uint64_t x0 = c[0] + std::uint64_t{v % vecs_per_row} * 16 / l.esize;
        if (x0 >= l.dims[0]) continue;
        std::uint64_t so = x0 * l.esize, dof = x0 * l.esize;
        bool inside = true;
#pragma unroll
        for (int d = 1; d < kRank; ++d) {
          const std::uint64_t x = c[d] + row % g.box[d];
          row /= g.box[d];
          inside = inside && x < l.dims[d];
          so += x * l.src_stride[d];
          dof += x * l.dst_stride[d];
        }
        if (!inside) continue;
        const std::uint64_t left = (l.dims[0] - x0) * l.esize;
        bytes[u] = left >= 16 ? 16u : static_cast<std::uint32_t>(left);
        soff[u] = so;
        doff[u] = dof;
        if (bytes[u] == 16) buf[u] = *reinterpret_cast<const uint4*>(src + so);
      }
#pragma unroll
      for (int u = 0; u < kOrdinaryUnroll; ++u) {
        if (bytes[u] == 16) {
          *reinterpret_cast<uint4*>(dst + doff[u]) = buf[u];
        } else if (bytes[u] != 0) {
          copy_partial(dst + doff[u], src + soff[u], bytes[u]);
        }
      }
    }
  }
}

using CopyKernel = void (*)(const TensorMap, const TensorMap, const DeviceGrid);

CopyKernel copy_kernel_for(int config) {
  switch (config) {
    case 0:
      return copy_tma_kernel<4, 2>;
    case 1:
      return copy_tma_kernel<8, 4>;
    case 2:
      return copy_tma_kernel<6, 4>;
    case 3:
      return copy_tma_kernel<4, 3>;
    case 4:
      return copy_tma_kernel<2, 1>;
    case 5:
      return copy_tma_kernel<4, 2, CacheHint::kEvictFirst>;
    case 6:
      return copy_tma_kernel<8, 4, CacheHint::kEvictFirst>;
  }
  return nullptr;
}
static_assert(kNumCopyConfigs == 7, "copy_kernel_for() instantiates one kernel per CopyConfig");
// The (stages, lookahead, evict_first) of each case above, checked against kCopyConfigs.
constexpr bool kernels_match_configs() {
  constexpr int kInstantiated[][3] = {{4, 2, 0}, {8, 4, 0}, {6, 4, 0}, {4, 3, 0},
                                      {2, 1, 0}, {4, 2, 1}, {8, 4, 1}};
  for (int i = 0; i < kNumCopyConfigs; ++i) {
    const CopyConfig& c = kCopyConfigs[i];
    if (c.stages != kInstantiated[i][0] || c.lookahead != kInstantiated[i][1] ||
        c.evict_first != (kInstantiated[i][2] != 0))
      return false;
  }
  return true;
}
static_assert(kernels_match_configs(), "copy_kernel_for() must match kCopyConfigs");

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(cat("tma::ops::copy: ", what, " failed: ", cudaGetErrorName(e), " (",
                    cudaGetErrorString(e), ")"),
                0, static_cast<int>(e));
}

int sm_count() {
  int dev = 0, sms = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count query");
  return sms;
}

// Boxes: the innermost dimension up to 256 elements (padded to 16 bytes), then outer dimensions
// until a tile holds about `target` bytes.
TileGrid make_grid(const Layout& l, std::uint32_t esize, std::uint32_t target) {
  TileGrid g{};
  std::uint64_t bytes = esize;
  for (int d = 0; d < kRank; ++d) {
    std::uint64_t b = 1;
    if (d < l.rank) {
      if (d == 0) {
        b = std::min<std::uint64_t>(l.dims[0], 256);
        b = (b * esize + 15) / 16 * 16 / esize;
      } else {
        b = std::clamp<std::uint64_t>(target / bytes, 1, std::min<std::uint64_t>(l.dims[d], 256));
      }
    }
    g.box[d] = static_cast<std::uint32_t>(b);
    bytes *= b;
    g.tiles[d] = d < l.rank ? static_cast<std::uint32_t>((l.dims[d] + b - 1) / b) : 1;
  }
  g.total = 1;
  for (int d = 0; d < kRank; ++d)
    g.total *= g.tiles[d];
  g.tile_bytes = static_cast<std::uint32_t>(bytes);
  return g;
}

DeviceGrid to_device(const TileGrid& g) {
  DeviceGrid d{};
  for (int i = 0; i < kRank; ++i) {
    d.box[i] = g.box[i];
    d.tiles[i] = g.tiles[i];
  }
  d.total = g.total;
  d.tile_bytes = g.tile_bytes;
  return d;
}

// A fully contiguous run of n elements is copied as rows of kRowElements (wide boxes); the
// remainder, if any, as a separate rank-1 piece.
constexpr std::uint64_t kRowElements = 256;

struct Piece {
  Layout layout;
  std::uint64_t offset_bytes;  // from both bases
};

int split(const Layout& l, std::uint32_t esize, Piece (&pieces)[2]) {
  if (l.rank != 1 || l.dims[0] <= kRowElements) {
    pieces[0] = {l, 0};
    return 1;
  }
  const std::uint64_t n = l.dims[0];
  Layout main;
  main.rank = 2;
  main.dims[0] = kRowElements;
  main.dims[1] = n / kRowElements;
  main.src_stride = main.dst_stride = {esize, kRowElements * esize, 0, 0, 0};
  pieces[0] = {main, 0};
  if (n % kRowElements == 0) return 1;
  Layout tail;
  tail.rank = 1;
  tail.dims[0] = n % kRowElements;
  tail.src_stride = tail.dst_stride = {esize, 0, 0, 0, 0};
  pieces[1] = {tail, main.dims[1] * kRowElements * esize};
  return 2;
}

// Copies one piece (a layout at `offset` bytes from both bases) along `path`.
void run_piece(const Layout& l, const TensorView& src, const TensorView& dst, std::uint64_t offset,
               Path path, int config, std::uint32_t esize, int sms, cudaStream_t stream) {
  const CopyConfig& cfg = kCopyConfigs[config];
  const TileGrid g = make_grid(l, esize, cfg.tile_bytes);
  const auto* s = static_cast<const unsigned char*>(src.data) + offset;
  auto* d = static_cast<unsigned char*>(dst.data) + offset;
  if (path == Path::kTma) {
    const TensorMap sm = make_tensor_map(copy_spec(src.dtype, s, l, l.src_stride, g));
    const TensorMap dm = make_tensor_map(copy_spec(src.dtype, d, l, l.dst_stride, g));
    const CopyKernel kernel = copy_kernel_for(config);
    const int smem = cfg.stages * static_cast<int>(g.tile_bytes);
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "cudaFuncSetAttribute(max dynamic shared memory)");
    const auto grid = static_cast<unsigned>(
        std::min<std::uint64_t>(g.total, static_cast<std::uint64_t>(sms) * cfg.ctas_per_sm));
    kernel<<<grid, 32, smem, stream>>>(sm, dm, to_device(g));
    check_cuda(cudaGetLastError(), "launching copy_tma_kernel");
  } else {
    DeviceLayout dl{};
    for (int i = 0; i < kRank; ++i) {
      dl.dims[i] = i < l.rank ? l.dims[i] : 1;
      dl.src_stride[i] = i < l.rank ? l.src_stride[i] : 0;
      dl.dst_stride[i] = i < l.rank ? l.dst_stride[i] : 0;
    }
    dl.esize = esize;
    const auto grid = static_cast<unsigned>(
        std::min<std::uint64_t>(g.total, static_cast<std::uint64_t>(sms) * 8));
    copy_ordinary_kernel<<<grid, kOrdinaryThreads, 0, stream>>>(s, d, dl, to_device(g));
    check_cuda(cudaGetLastError(), "launching copy_ordinary_kernel");
  }
}

void launch(const TensorView& dst, const TensorView& src, cudaStream_t stream, Path path,
            int config) {
  const char* op = "copy";
  check_view(op, "src", src);
  check_view(op, "dst", dst);
  if (src.dtype != dst.dtype)
    fail(op, cat("dst.dtype = ", to_string(dst.dtype), " but src.dtype = ", to_string(src.dtype),
                 ": copy does not convert; use the same element type"));
  if (src.rank != dst.rank)
    fail(op, cat("dst.rank = ", dst.rank, " but src.rank = ", src.rank,
                 ": use views of the same shape"));
  for (int i = 0; i < src.rank; ++i)
    if (src.shape[i] != dst.shape[i])
      fail(op, cat("dst.shape ", shape_string(dst), " differs from src.shape ", shape_string(src),
                   " at index ", i, ": use views of the same shape"));
  check_no_overlap(op, dst, src);
  if (config < 0 || config >= kNumCopyConfigs)
    fail(op, cat("config = ", config, " is outside 0..", kNumCopyConfigs - 1,
                 ": pick an index of tma::ops::kCopyConfigs"));

  const auto esize = static_cast<std::uint32_t>(element_bytes(src.dtype));
  const int sms = sm_count();
  Piece pieces[2];
  const int n = split(merge_dims(dst, src), esize, pieces);
  for (int p = 0; p < n; ++p) {
    // TMA stores write dimension 0 in whole 16-byte chunks (model::stored_dim0_limit, measured on
    // an H200): a row whose end is not 16-byte aligned would get the rest of its last chunk
    // overwritten. TMA takes the aligned part of each row; the ordinary path the few elements left.
    const Layout& l = pieces[p].layout;
    const std::uint64_t aligned = tma_store_columns(l.dims[0], static_cast<int>(esize));
    if (aligned > 0) {
      Layout head = l;
      head.dims[0] = aligned;
      run_piece(head, src, dst, pieces[p].offset_bytes, path, config, esize, sms, stream);
    }
    if (aligned < l.dims[0]) {
      Layout edge = l;
      edge.dims[0] = l.dims[0] - aligned;
      run_piece(edge, src, dst, pieces[p].offset_bytes + aligned * esize, Path::kOrdinary, config,
                esize, sms, stream);
    }
  }
}

}  // namespace
}  // namespace detail

void copy(const TensorView& dst, const TensorView& src, cudaStream_t stream, Path path) {
  detail::launch(dst, src, stream, path, 0);
}

void copy_with_config(const TensorView& dst, const TensorView& src, cudaStream_t stream,
                      int config) {
  detail::launch(dst, src, stream, Path::kTma, config);
}

}  // namespace tma::ops
