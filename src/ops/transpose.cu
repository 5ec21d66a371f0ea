// tmakit ops: transpose of [rows, cols] or [batch, rows, cols] tensors of 16- or 32-bit elements.
//
// TMA path, per CTA (160 threads, warp-specialized):
//   warp 0, one thread   TMA-loads 128 x (128 B) source tiles into a ring of kInStages stages
//                        (SWIZZLE_128B) and TMA-stores the transposed tiles from two out buffers.
//   warps 1..4           read V x 16 B blocks from the in stage, transpose them in registers,
//                        write them to the out buffer (SWIZZLE_128B as well).
// Two Pipelines link the roles: `in` (TMA -> transposers) and `out` (transposers -> TMA store).
// The thread <-> block mapping below makes both shared-memory passes bank-conflict free
// (checked at compile time by conflict_free()).
//
// Ordinary path: the same tiles and the same register transpose, with every thread moving
// 16-byte vectors between global and shared memory instead of TMA.
//
// Napkin math: a transpose moves the bytes of a copy plus two shared-memory passes; at 3.35 TB/s
// over 132 SMs each SM streams ~13 B/clk (1.98 GHz) in and out, ~52 B/clk of shared-memory traffic
// with the TMA passes, well under the 128 B/clk the SM's shared memory serves.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "plan.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"
#include "tma/model/swizzle.hpp"
#include "tma/ops/copy.hpp"

namespace tma::ops {
namespace detail {
namespace {

// Tile geometry for elements of 16 / V bytes (V = elements per 16-byte chunk: 8 or 4).
template <int V>
struct TileShape {
  static constexpr int kElementBytes = 16 / V;
  static constexpr int kRows = 128;    // source rows per tile
  static constexpr int kCols = 8 * V;  // source columns per tile: one 128 B swizzle row
  static constexpr int kBytes = kRows * kCols * kElementBytes;  // 16 KiB in and out
  static constexpr int kOutBoxRows = 8 * V;  // dst box: 128 B of source rows x kCols
  static constexpr int kOutBoxes = kRows / kOutBoxRows;
  static constexpr int kOutBoxBytes = kBytes / kOutBoxes;
  static constexpr int kBlocks = (kRows / V) * 8;  // V x V blocks per tile
  static constexpr int kThreads = 128;             // transposer threads
  static constexpr int kBlocksPerThread = kBlocks / kThreads;
  static_assert(kBytes == 16384 && kBlocksPerThread * kThreads == kBlocks,
                "TileShape: a tile is 16 KiB and its blocks divide evenly among 128 threads");
};

// Block (rb, cb) of thread t at iteration it: rb = block row (V source rows), cb = 16 B chunk.
// In each quarter-warp (8 threads, one shared-memory wavefront of 16 B accesses) cb takes every
// value 0..7 and rb & 7 too, so both the swizzled reads and the swizzled writes hit 8 distinct
// 16 B bank groups.
TMA_HOST_DEVICE constexpr int block_row(int t, int it) {
  const int q = t >> 3, i = t & 7;
  return ((i + q) & 7) + 8 * ((q >> 3) + 2 * it);
}
TMA_HOST_DEVICE constexpr int block_col(int t) {
  return t & 7;
}

// Byte offset of 16 B chunk `chunk` of 128 B row `row` in a SWIZZLE_128B buffer.
TMA_HOST_DEVICE constexpr std::uint32_t chunk_offset(int row, int chunk) {
  return swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(row * 128 + chunk * 16));
}

// Where the transposed row c of block row rb goes in the out buffer: out box rb / 8, its row c,
// chunk rb % 8.
template <int V>
TMA_HOST_DEVICE constexpr std::uint32_t out_offset(int rb, int c) {
  return static_cast<std::uint32_t>((rb / 8) * TileShape<V>::kOutBoxBytes) +
         chunk_offset(c, rb & 7);
}

// Compile-time proof of the mapping's claim: every quarter-warp's 8 accesses of each read step k
// and each write step j land in distinct 16 B bank groups (offset bits 4..6).
template <int V>
constexpr bool conflict_free() {
  using S = TileShape<V>;
  for (int it = 0; it < S::kBlocksPerThread; ++it)
    for (int q = 0; q < S::kThreads / 8; ++q)
      for (int k = 0; k < V; ++k) {
        unsigned read_groups = 0, write_groups = 0;
        for (int i = 0; i < 8; ++i) {
          const int t = q * 8 + i, rb = block_row(t, it), cb = block_col(t);
          read_groups |= 1u << ((chunk_offset(rb * V + k, cb) >> 4) & 7);
          write_groups |= 1u << ((out_offset<V>(rb, cb * V + k) >> 4) & 7);
        }
        if (read_groups != 0xFF || write_groups != 0xFF) return false;
      }
  // ... and the mapping covers every block exactly once.
  bool seen[S::kBlocks] = {};
  for (int t = 0; t < S::kThreads; ++t)
    for (int it = 0; it < S::kBlocksPerThread; ++it) {
      const int b = block_row(t, it) * 8 + block_col(t);
      if (b >= S::kBlocks || seen[b]) return false;
      seen[b] = true;
    }
  return true;
}
static_assert(conflict_free<8>() && conflict_free<4>(),
              "transpose: the thread/block mapping must be bank-conflict free and a bijection");

// out[j] = column j of the V x V block in[0..V-1] (16 B rows).
template <int V>
__device__ __forceinline__ void transpose_regs(const uint4 (&in)[V], uint4 (&out)[V]) {
  if constexpr (V == 4) {
    out[0] = make_uint4(in[0].x, in[1].x, in[2].x, in[3].x);
    out[1] = make_uint4(in[0].y, in[1].y, in[2].y, in[3].y);
    out[2] = make_uint4(in[0].z, in[1].z, in[2].z, in[3].z);
    out[3] = make_uint4(in[0].w, in[1].w, in[2].w, in[3].w);
  } else {
    static_assert(V == 8, "transpose_regs: 16-bit (V = 8) or 32-bit (V = 4) elements");
    const auto word = [](const uint4& v, int w) {
      return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
    };
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      // Element j of row r is half (j & 1) of word j / 2; pair rows 2w and 2w + 1.
      const unsigned sel = (j & 1) ? 0x7632u : 0x5410u;
      out[j].x = __byte_perm(word(in[0], j / 2), word(in[1], j / 2), sel);
      out[j].y = __byte_perm(word(in[2], j / 2), word(in[3], j / 2), sel);
      out[j].z = __byte_perm(word(in[4], j / 2), word(in[5], j / 2), sel);
      out[j].w = __byte_perm(word(in[6], j / 2), word(in[7], j / 2), sel);
    }
  }
}

// Reads this thread's blocks of a swizzled in tile into registers.
template <int V>
__device__ __forceinline__ void read_blocks(const unsigned char* in, int t,
                                            uint4 (&r)[TileShape<V>::kBlocksPerThread][V]) {
#pragma unroll
  for (int it = 0; it < TileShape<V>::kBlocksPerThread; ++it) {
    const int rb = block_row(t, it), cb = block_col(t);
#pragma unroll
    for (int k = 0; k < V; ++k)
      r[it][k] = *reinterpret_cast<const uint4*>(in + chunk_offset(rb * V + k, cb));
  }
}

// Transposes the blocks and writes them to a swizzled out buffer.
template <int V>
__device__ __forceinline__ void write_blocks(unsigned char* out, int t,
                                             const uint4 (&r)[TileShape<V>::kBlocksPerThread][V]) {
#pragma unroll
  for (int it = 0; it < TileShape<V>::kBlocksPerThread; ++it) {
    uint4 col[V];
    transpose_regs<V>(r[it], col);
    const int rb = block_row(t, it), cb = block_col(t);
#pragma unroll
    for (int j = 0; j < V; ++j)
      *reinterpret_cast<uint4*>(out + out_offset<V>(rb, cb * V + j)) = col[j];
  }
}

struct Grid {
  std::uint32_t tiles_c, tiles_r, batch;
  std::uint64_t total;
};

// Tile t -> (column tile, row tile, batch index).
__device__ __forceinline__ void tile_of(std::uint64_t t, const Grid& g, std::int32_t& tc,
                                        std::int32_t& tr, std::int32_t& b) {
  tc = static_cast<std::int32_t>(t % g.tiles_c);
  t /= g.tiles_c;
  tr = static_cast<std::int32_t>(t % g.tiles_r);
  b = static_cast<std::int32_t>(t / g.tiles_r);
}

constexpr int kInStages = 4;
constexpr int kOutStages = 2;
constexpr int kTmaThreads = 32 + 128;  // producer warp + 4 transposer warps
constexpr int kAlign = 1024;           // SWIZZLE_128B repeats every 1024 B
constexpr int kTmaSmem = (kInStages + kOutStages) * 16384 + kAlign;

enum class Role { kProducer, kConsumer };

template <int V>
__global__ void __launch_bounds__(kTmaThreads, 2)
    transpose_tma_kernel(const __grid_constant__ TensorMap src,
                         const __grid_constant__ TensorMap dst, const Grid g) {
  using S = TileShape<V>;
  extern __shared__ unsigned char raw[];
  unsigned char* base = raw + ((kAlign - ptx::smem_addr(raw) % kAlign) % kAlign);
  unsigned char* in = base;                           // (kInStages, 16 KiB)
  unsigned char* out = base + kInStages * S::kBytes;  // (kOutStages, 16 KiB)
  __shared__ Pipeline<kInStages> in_pipe;             // TMA load -> transposers
  __shared__ Pipeline<kOutStages> out_pipe;           // transposers -> TMA store
  constexpr int kConsumerWarps = S::kThreads / 32;

  if (threadIdx.x == 0) {
    in_pipe.init(1, kConsumerWarps);
    out_pipe.init(kConsumerWarps, 1);
    prefetch_descriptor(&src);
    prefetch_descriptor(&dst);
  }
  __syncthreads();

  const std::uint64_t first = blockIdx.x, step = gridDim.x;
  const std::uint64_t mine = first < g.total ? (g.total - first + step - 1) / step : 0;
  const Role role = threadIdx.x < 32 ? Role::kProducer : Role::kConsumer;

  if (role == Role::kProducer) {
    if (threadIdx.x != 0) return;
    PipelineState load_at = in_pipe.start(), store_at = out_pipe.start();
    PipelineState release_at = out_pipe.start();
    auto issue_load = [&](std::uint64_t k) {
      std::int32_t tc, tr, b;
      tile_of(first + k * step, g, tc, tr, b);
      in_pipe.producer_acquire(load_at);
      in_pipe.producer_commit(load_at, S::kBytes);
      const std::int32_t c[3] = {tc * S::kCols, tr * S::kRows, b};
      load(in + load_at.index * S::kBytes, &src, in_pipe.full(load_at), c);
      load_at.advance();
    };
    for (std::uint64_t k = 0; k < mine && k < kInStages; ++k)
      issue_load(k);
    for (std::uint64_t k = 0; k < mine; ++k) {
      out_pipe.consumer_wait(store_at);
      std::int32_t tc, tr, b;
      tile_of(first + k * step, g, tc, tr, b);
#pragma unroll
      for (int box = 0; box < S::kOutBoxes; ++box) {
        const std::int32_t c[3] = {tr * S::kRows + box * S::kOutBoxRows, tc * S::kCols, b};
        store(&dst, out + store_at.index * S::kBytes + box * S::kOutBoxBytes, c);
      }
      commit_group();
      store_at.advance();
      if (k >= 1) {
        // The store before this one has read its buffer: the transposers may refill it.
        wait_group_read<1>();
        out_pipe.consumer_release(release_at);
        release_at.advance();
      }
      if (k + kInStages < mine) issue_load(k + kInStages);
    }
    // Shared memory read before the CTA leaves; the global writes complete with the grid.
    wait_group_read<0>();
  } else {
    const int t = static_cast<int>(threadIdx.x) - 32;
    const bool leader = (t & 31) == 0;
    PipelineState in_at = in_pipe.start(), out_at = out_pipe.start();
    for (std::uint64_t k = 0; k < mine; ++k) {
      uint4 r[S::kBlocksPerThread][V];
      in_pipe.consumer_wait(in_at);
      read_blocks<V>(in + in_at.index * S::kBytes, t, r);
      __syncwarp();
      if (leader) in_pipe.consumer_release(in_at);
      out_pipe.producer_acquire(out_at);
      write_blocks<V>(out + out_at.index * S::kBytes, t, r);
      fence_proxy_async_shared();  // make the out tile visible to the TMA store
      __syncwarp();
      if (leader) out_pipe.full(out_at).arrive();
      in_at.advance();
      out_at.advance();
    }
  }
}

// ---- ordinary loads and stores: the same tiles and transposes, no TMA
// ----------------------------

struct PlainLayout {
  std::uint64_t rows, cols;          // source extents
  std::uint64_t src_row, src_batch;  // byte strides
  std::uint64_t dst_row, dst_batch;
};

// The first `bytes` (< 16) bytes of a 16 B vector at a tensor's edge, kept in registers (a byte
// array would live in local memory).
__device__ __forceinline__ uint4 load_partial(const unsigned char* p, int bytes) {
  unsigned w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 16; ++i)
    if (i < bytes) w[i / 4] |= unsigned{p[i]} << (8 * (i % 4));
  return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ void store_partial(unsigned char* p, const uint4& v, int bytes) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 16; ++i)
    if (i < bytes) p[i] = static_cast<unsigned char>(w[i / 4] >> (8 * (i % 4)));
}

constexpr int kPlainThreads = 128;
constexpr int kPlainSmem = 2 * 16384 + kAlign;

template <int V>
__global__ void __launch_bounds__(kPlainThreads)
    transpose_ordinary_kernel(const unsigned char* __restrict__ src,
                              unsigned char* __restrict__ dst, const PlainLayout l, const Grid g) {
  using S = TileShape<V>;
  constexpr int kE = S::kElementBytes;
  extern __shared__ unsigned char raw[];
  unsigned char* in = raw + ((kAlign - ptx::smem_addr(raw) % kAlign) % kAlign);
  unsigned char* out = in + S::kBytes;
  const int t = static_cast<int>(threadIdx.x);
  for (std::uint64_t tile = blockIdx.x; tile < g.total; tile += gridDim.x) {
    std::int32_t tc, tr, b;
    tile_of(tile, g, tc, tr, b);
    const std::uint64_t r0 = std::uint64_t(tr) * S::kRows, c0 = std::uint64_t(tc) * S::kCols;
    // Global -> shared: 1024 chunks of 16 B, row-contiguous across each quarter-warp.
#pragma unroll
    for (int u = 0; u < 1024 / kPlainThreads; ++u) {
      const int chunk = u * kPlainThreads + t, row = chunk / 8, cb = chunk % 8;
      const std::uint64_t r = r0 + row, c = c0 + std::uint64_t(cb) * V;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (r < l.rows && c < l.cols) {
        const unsigned char* p = src + b * l.src_batch + r * l.src_row + c * kE;
        v = c + V <= l.cols ? *reinterpret_cast<const uint4*>(p)
                            : load_partial(p, static_cast<int>((l.cols - c) * kE));
      }
      *reinterpret_cast<uint4*>(in + chunk_offset(row, cb)) = v;
    }
    __syncthreads();
    uint4 regs[S::kBlocksPerThread][V];
    read_blocks<V>(in, t, regs);
    write_blocks<V>(out, t, regs);
    __syncthreads();
    // Shared -> global: out box `box` row c holds dst row (c0 + c), columns r0 + box * 8V ...
#pragma unroll
    for (int u = 0; u < 1024 / kPlainThreads; ++u) {
      const int chunk = u * kPlainThreads + t;
      const int box = chunk / (S::kCols * 8), within = chunk % (S::kCols * 8);
      const int c = within / 8, q = within % 8;
      const std::uint64_t dr = c0 + c, dc = r0 + std::uint64_t(box) * S::kOutBoxRows + q * V;
      if (dr >= l.cols || dc >= l.rows) continue;
      const uint4 v =
          *reinterpret_cast<const uint4*>(out + box * S::kOutBoxBytes + chunk_offset(c, q));
      unsigned char* p = dst + b * l.dst_batch + dr * l.dst_row + dc * kE;
      if (dc + V <= l.rows) {
        *reinterpret_cast<uint4*>(p) = v;
      } else {
        store_partial(p, v, static_cast<int>((l.rows - dc) * kE));
      }
    }
    __syncthreads();
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(cat("tma::ops::transpose: ", what, " failed: ", cudaGetErrorName(e), " (",
                    cudaGetErrorString(e), ")"),
                0, static_cast<int>(e));
}

template <int V>
void launch(const TensorView& dst, const TensorView& src, cudaStream_t stream, Path path) {
  using S = TileShape<V>;
  const int batched = src.rank == 3 ? 1 : 0;
  const std::uint64_t batch = batched ? src.shape[0] : 1;
  const std::uint64_t rows = src.shape[batched], cols = src.shape[batched + 1];
  const std::uint64_t e = S::kElementBytes;
  const std::uint64_t src_row = src.strides[batched] * e, dst_row = dst.strides[batched] * e;
  // A batch of one gets a padding stride: never used, any legal value covering the matrix does.
  const auto pad = [](std::uint64_t v) { return std::max<std::uint64_t>(16, (v + 15) / 16 * 16); };
  const std::uint64_t src_batch = batched ? src.strides[0] * e : pad(rows * src_row);
  const std::uint64_t dst_batch = batched ? dst.strides[0] * e : pad(cols * dst_row);

  Grid g{};
  g.tiles_c = static_cast<std::uint32_t>((cols + S::kCols - 1) / S::kCols);
  g.tiles_r = static_cast<std::uint32_t>((rows + S::kRows - 1) / S::kRows);
  g.batch = static_cast<std::uint32_t>(batch);
  g.total = std::uint64_t{g.tiles_c} * g.tiles_r * g.batch;

  int dev = 0, sms = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count query");

  // TMA stores write dimension 0 in whole 16-byte chunks (measured on an H200): when a dst row
  // (rows elements) does not end on a 16-byte boundary, TMA stores only the first `tma_rows`
  // columns of dst and the ordinary path transposes the last source rows into the rest.
  const std::uint64_t tma_rows =
      path == Path::kTma ? tma_store_columns(rows, static_cast<int>(e)) : 0;
  if (tma_rows < rows) {
    const std::uint64_t edge = rows - tma_rows;
    Grid eg{};
    eg.tiles_c = g.tiles_c;
    eg.tiles_r = static_cast<std::uint32_t>((edge + S::kRows - 1) / S::kRows);
    eg.batch = g.batch;
    eg.total = std::uint64_t{eg.tiles_c} * eg.tiles_r * eg.batch;
    const PlainLayout l{edge, cols, src_row, src_batch, dst_row, dst_batch};
    check_cuda(cudaFuncSetAttribute(transpose_ordinary_kernel<V>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kPlainSmem),
               "cudaFuncSetAttribute(max dynamic shared memory)");
    const auto grid =
        static_cast<unsigned>(std::min<std::uint64_t>(eg.total, std::uint64_t(sms) * 6));
    transpose_ordinary_kernel<V><<<grid, kPlainThreads, kPlainSmem, stream>>>(
        static_cast<const unsigned char*>(src.data) + tma_rows * src_row,
        static_cast<unsigned char*>(dst.data) + tma_rows * e, l, eg);
    check_cuda(cudaGetLastError(), "launching transpose_ordinary_kernel");
  }
  if (tma_rows > 0) {
    TensorMapSpec in;
    in.dtype = src.dtype;
    in.rank = 3;
    in.address = src.data;
    in.dims_inner_first = {cols, rows, batch, 0, 0};
    in.strides_bytes_inner_first = {0, src_row, src_batch, 0, 0};
    in.box_inner_first = {S::kCols, S::kRows, 1, 0, 0};
    in.swizzle = Swizzle::k128B;
    TensorMapSpec out = in;
    out.address = dst.data;
    out.dims_inner_first = {tma_rows, cols, batch, 0, 0};
    out.strides_bytes_inner_first = {0, dst_row, dst_batch, 0, 0};
    out.box_inner_first = {S::kOutBoxRows, S::kCols, 1, 0, 0};
    const TensorMap in_map = make_tensor_map(in), out_map = make_tensor_map(out);
    check_cuda(cudaFuncSetAttribute(transpose_tma_kernel<V>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kTmaSmem),
               "cudaFuncSetAttribute(max dynamic shared memory)");
    Grid tg = g;  // the row tiles TMA stores
    tg.tiles_r = static_cast<std::uint32_t>((tma_rows + S::kRows - 1) / S::kRows);
    tg.total = std::uint64_t{tg.tiles_c} * tg.tiles_r * tg.batch;
    const auto grid =
        static_cast<unsigned>(std::min<std::uint64_t>(tg.total, std::uint64_t(sms) * 2));
    transpose_tma_kernel<V><<<grid, kTmaThreads, kTmaSmem, stream>>>(in_map, out_map, tg);
    check_cuda(cudaGetLastError(), "launching transpose_tma_kernel");
  }
}

}  // namespace
}  // namespace detail

void transpose(const TensorView& dst, const TensorView& src, cudaStream_t stream, Path path) {
  using detail::cat;
  using detail::fail;
  const char* op = "transpose";
  detail::check_view(op, "src", src);
  detail::check_view(op, "dst", dst);
  if (src.dtype != dst.dtype)
    fail(op, cat("dst.dtype = ", to_string(dst.dtype), " but src.dtype = ", to_string(src.dtype),
                 ": transpose does not convert; use the same element type"));
  const int e = element_bytes(src.dtype);
  if (e != 2 && e != 4)
    fail(op, cat("dtype ", to_string(src.dtype), " (", e,
                 " B) is not supported: transpose takes bf16, fp16 or fp32 (2- or 4-byte "
                 "elements); use tma::ops::copy for other layouts"));
  if (src.rank != dst.rank || (src.rank != 2 && src.rank != 3))
    fail(op, cat("src.rank = ", src.rank, ", dst.rank = ", dst.rank,
                 ": transpose takes [rows, cols] -> [cols, rows] or [batch, rows, cols] -> "
                 "[batch, cols, rows]"));
  const int o = src.rank - 2;
  if ((o == 1 && dst.shape[0] != src.shape[0]) || dst.shape[o] != src.shape[o + 1] ||
      dst.shape[o + 1] != src.shape[o])
    fail(op, cat("dst.shape ", detail::shape_string(dst), " is not the transpose of src.shape ",
                 detail::shape_string(src), ": dst must be [", o ? "batch, " : "", "cols, rows]"));
  detail::check_no_overlap(op, dst, src);
  if (e == 2) {
    detail::launch<8>(dst, src, stream, path);
  } else {
    detail::launch<4>(dst, src, stream, path);
  }
}

}  // namespace tma::ops
