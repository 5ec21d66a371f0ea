// tmakit ops (internal): the GEMM epilogue of one consumer warpgroup, D = alpha acc + beta C for
// its 64 x kBlockN part of the output tile. Included by gemm_kernel.cuh.
//
// The tile goes out in chunks of 64 rows x 128 bytes (64 bf16 / fp16 or 32 fp32 columns), each
// staged in one of the warpgroup's two 8 KiB buffers in the SWIZZLE_128B layout, so that
//   - 16-bit outputs: each warp writes four 8 x 8 matrices per stmatrix.x4 (an accumulator pair
//     is a matrix row fragment; gemm_config.hpp: stmatrix_register / stmatrix_row_offset), C
//     comes in with ldmatrix.x4 at the same addresses; fp32: each thread writes its accumulator
//     pairs (D fragment layout, device/wgmma.hpp) with 8-byte stores; the swizzle spreads both
//     over all 32 banks;
//   - TMA path: one TMA store per chunk (box {128 B, 64 rows}, clipped at the matrix's edges;
//     D's map ends at the last 16 B boundary of a row, tma_store_columns, and gemm_edge.cuh
//     writes the columns past it) and, when beta != 0, one TMA load of the C chunk into the
//     same buffer first;
//   - ordinary path: the warpgroup copies the chunk out with 16-byte stores and, when beta != 0,
//     C in with 16-byte loads first, both bounds-checked (zeros outside the matrix).
// kBuffers (2 or 4) staging buffers per warpgroup form a ring, so the stores of up to kBuffers - 1
// earlier chunks are still reading theirs while chunk q is written.
//
// TMA path, chunk q in buffer b (the leader is thread 0 of the warpgroup):
//   [beta] wait for C(q) in b                    (the leader issued its load once b was free)
//   [no beta] leader: wait_group_read kBuffers-1 (the store that last used b has read it; the
//             kBuffers - 1 newer ones may still run); named barrier of the warpgroup
//   write alpha acc + beta C(q) into b; fence.proxy.async (generic writes -> TMA's reads)
//   named barrier of the warpgroup
//   leader: TMA store b; commit; [beta] wait_group_read kBuffers-1, load C(q + 1) into b + 1
// A first version waited for the store of chunk q - 1 (wait_group_read 0) before storing chunk q:
// four serialized store round trips per tile, ~3.6 us, about 6.6 k-block times per tile on the
// H200 (docs/perf-log.md, GEMM v1.2). Measured per 64 x 256 bf16 part (bench/experiments/
// gemm_trace, v1.4): ~2,550 cycles, of which ~460 per chunk (writes ~140, fence + barrier ~190,
// the leader's store issue ~130) and ~660 from the k-loop's end to chunk 0. Staging the whole
// part at once in the tile's last pipeline stage (held back from the producer until the stores
// had read it) cut the epilogue to ~2,000 cycles but cost as much in the next k-loop: the stores
// of 64 KiB per SM take ~2,300 cycles to read their buffers when all SMs store at once.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cuda/ptx>
#include <type_traits>

#include "gemm_config.hpp"
#include "tma/device.cuh"
#include "tma/device/wgmma.hpp"
#include "tma/ptx/matrix.hpp"

namespace tma::ops::detail::gemm {

// Where this warpgroup's 64 x kBlockN part of the output tile starts.
struct EpilogueTile {
  int row0;
  int col0;
};

// The maps of C and D (TMA path): boxes of a whole chunk (64 rows x 128 B), and of a tile's last
// chunk when kBlockN is not a multiple of a chunk's columns (64 rows x the rest: kBlockN % 64
// 16-bit or kBlockN % 32 fp32 columns; c and d themselves when there is none).
struct EpilogueMaps {
  const TensorMap* c;
  const TensorMap* d;
  const TensorMap* c_tail;
  const TensorMap* d_tail;
};

// TMA_GEMM_TRACE=1 (bench/experiments/gemm_trace.cu only): role's lane 0 stores `value` at
// `point` of unit i (trace_slot). Compiled out otherwise.
#ifndef TMA_GEMM_TRACE
#define TMA_GEMM_TRACE 0
#endif
// TMA_GEMM_TRACE builds: this CTA's stamp of `point` of role's unit `unit` (trace_slot).
__device__ __forceinline__ unsigned long long* trace_at(const Params& p, int role, int unit,
                                                        int point) {
  return &p.trace[trace_slot(static_cast<int>(blockIdx.x), role, unit, point)];
}

__device__ __forceinline__ void trace_value(const Params& p, int role, int unit, int point,
                                            unsigned long long value) {
  if constexpr (TMA_GEMM_TRACE != 0) {
    if (threadIdx.x % 128 == 0 && unit < kTraceUnits) *trace_at(p, role, unit, point) = value;
  } else {
    (void)p, (void)role, (void)unit, (void)point, (void)value;
  }
}

// The same with the time (clock64) as the value: a stamp. No clock read in other builds.
__device__ __forceinline__ void trace(const Params& p, int role, int unit, int point) {
  if constexpr (TMA_GEMM_TRACE != 0) {
    trace_value(p, role, unit, point, static_cast<unsigned long long>(clock64()));
  } else {
    (void)p, (void)role, (void)unit, (void)point;
  }
}

// TMA_GEMM_TRACE builds: the calling thread stamps the CTA's whole-lifetime point (TraceKernel).
__device__ __forceinline__ void trace_kernel(const Params& p, TraceKernel point,
                                             unsigned long long value) {
  if constexpr (TMA_GEMM_TRACE != 0) {
    *trace_at(p, kTraceKernel, 0, point) = value;
  } else {
    (void)p, (void)point, (void)value;
  }
}

// TMA_GEMM_TRACE builds: the CTA's exit (clock64 and %globaltimer), the latest of the callers.
__device__ __forceinline__ void trace_kernel_exit(const Params& p) {
  if constexpr (TMA_GEMM_TRACE != 0) {
    atomicMax(trace_at(p, kTraceKernel, 0, kExit), static_cast<unsigned long long>(clock64()));
    atomicMax(trace_at(p, kTraceKernel, 0, kExitNs), cuda::ptx::get_sreg_globaltimer());
  } else {
    (void)p;
  }
}

// Per thread, identical in all threads of a warpgroup: which buffer the next chunk uses, and the
// parity each buffer's C barrier waits for next (bit b); the unit (for trace builds' stamps).
struct EpilogueState {
  std::uint32_t buffer = 0;
  std::uint32_t c_parity = 0;
  int unit = 0;
};

// Two adjacent output values as stored (4 bytes for 16-bit types, 8 for fp32).
template <class Out>
__device__ __forceinline__ void store_pair(unsigned char* at, float v0, float v1) {
  if constexpr (sizeof(Out) == 4) {
    *reinterpret_cast<float2*>(at) = make_float2(v0, v1);
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *reinterpret_cast<__nv_bfloat162*>(at) = __floats2bfloat162_rn(v0, v1);
  } else {
    *reinterpret_cast<__half2*>(at) = __floats2half2_rn(v0, v1);
  }
}

// Two 16-bit values as one register of stmatrix / ldmatrix (the first in the low half).
template <class Out>
__device__ __forceinline__ std::uint32_t pack_pair(float v0, float v1) {
  std::uint32_t r;
  if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    const __nv_bfloat162 x = __floats2bfloat162_rn(v0, v1);
    memcpy(&r, &x, 4);
  } else {
    const __half2 x = __floats2half2_rn(v0, v1);
    memcpy(&r, &x, 4);
  }
  return r;
}

template <class Out>
__device__ __forceinline__ float2 unpack_pair(std::uint32_t r) {
  if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    __nv_bfloat162 x;
    memcpy(&x, &r, 4);
    return __bfloat1622float2(x);
  } else {
    __half2 x;
    memcpy(&x, &r, 4);
    return __half22float2(x);
  }
}

template <class Out>
__device__ __forceinline__ float2 load_pair(const unsigned char* at) {
  if constexpr (sizeof(Out) == 4) {
    return *reinterpret_cast<const float2*>(at);
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(at));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(at));
  }
}

// Ordinary path: the chunk of C at (row0, col0) (64 rows x 128 B) into `buf` in the swizzled
// layout, with 16-byte loads, zeros outside the matrix. The whole warpgroup; a barrier follows.
// Only the chunk's first `cols` columns (a tile's last chunk may be narrower).
template <class Out>
__device__ __forceinline__ void copy_in_chunk(unsigned char* buf, const Params& p, int row0,
                                              int col0, int cols, int t) {
  constexpr int kPerVector = 16 / static_cast<int>(sizeof(Out));
#pragma unroll
  for (int u = 0; u < 64 * 8 / kWarpgroupThreads; ++u) {
    const int x = t + kWarpgroupThreads * u, row = x / 8, ch = x % 8;
    const int grow = row0 + row, gcol = col0 + ch * kPerVector;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (grow < p.m && gcol < p.n && ch * kPerVector < cols) {
      const unsigned char* src = p.c + grow * p.ldc_bytes + std::int64_t{gcol} * sizeof(Out);
      if (gcol + kPerVector <= p.n) {
        v = *reinterpret_cast<const uint4*>(src);
      } else {
        // The matrix's last columns: element by element into the vector's words.
        std::uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
        for (int e = 0; e < kPerVector; ++e) {
          if (gcol + e >= p.n) break;
          if constexpr (sizeof(Out) == 4) {
            words[e] = reinterpret_cast<const std::uint32_t*>(src)[e];
          } else {
            words[e / 2] |= std::uint32_t{reinterpret_cast<const std::uint16_t*>(src)[e]}
                            << (16 * (e % 2));
          }
        }
        v = make_uint4(words[0], words[1], words[2], words[3]);
      }
    }
    *reinterpret_cast<uint4*>(
        buf + swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(row * 128 + ch * 16))) = v;
  }
}

// Ordinary path: `buf` (the chunk of D at (row0, col0)) out to global memory with 16-byte
// stores, bounds-checked; 8 consecutive threads write one row's 128 B. Only the chunk's first
// `cols` columns: a tile's last chunk may be narrower, and the columns past it are the next
// tile's. The whole warpgroup, after a barrier.
template <class Out>
__device__ __forceinline__ void copy_out_chunk(const unsigned char* buf, const Params& p, int row0,
                                               int col0, int cols, int t) {
  constexpr int kPerVector = 16 / static_cast<int>(sizeof(Out));
#pragma unroll
  for (int u = 0; u < 64 * 8 / kWarpgroupThreads; ++u) {
    const int x = t + kWarpgroupThreads * u, row = x / 8, ch = x % 8;
    const int grow = row0 + row, gcol = col0 + ch * kPerVector;
    if (grow >= p.m || gcol >= p.n || ch * kPerVector >= cols) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(
        buf + swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(row * 128 + ch * 16)));
    unsigned char* dst = p.d + grow * p.ldd_bytes + std::int64_t{gcol} * sizeof(Out);
    if (gcol + kPerVector <= p.n) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      // The matrix's last columns: element by element, from the vector's words.
      const std::uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int e = 0; e < kPerVector; ++e) {
        if (gcol + e >= p.n) break;
        if constexpr (sizeof(Out) == 4) {
          reinterpret_cast<std::uint32_t*>(dst)[e] = words[e];
        } else {
          reinterpret_cast<std::uint16_t*>(dst)[e] =
              static_cast<std::uint16_t>(words[e / 2] >> (16 * (e % 2)));
        }
      }
    }
  }
}

// kWithC: beta != 0 (a template argument, not a run-time test inside the loop: with the test
// inside, every accumulator pair's shared-memory store waited on a predicated-off load of C from
// the same buffer, a chain of dependent round trips; docs/perf-log.md, GEMM v1.4). kScale: alpha
// != 1; the caller passes false only for alpha == 1 (exactly), which leaves out one FMUL per
// output value (128 per thread per 64 x 256 part, about half the issue slots of the chunk
// writes; docs/perf-log.md, GEMM v1.6).
//
// kHeadFirst (a tile of 16-bit outputs whose rows of D start 16 bytes into a 32-byte sector, an odd
// tile of 128 x 136: gemm_kernel.cuh, store_tile_as): the narrower chunk goes first, so that the
// whole chunks after it start on a sector.
//
// kTrans (a swapped-operand tile, Config::kSwap): acc holds the transpose of the warpgroup's part,
// kBlockN (its rows) x 64 (its columns); chunk q is its rows 64 q .. 64 q + 63 (accumulator
// columns), staged with stmatrix .trans (gemm_config.hpp: stmatrix_trans_row_offset) and stored at
// (tile.row0 + 64 q, tile.col0). 16-bit outputs, TMA path, no C.
template <class Out, int kBlockN, int kBuffers, bool kTma, bool kWithC, bool kScale = true,
          bool kHeadFirst = false, bool kTrans = false>
__device__ __forceinline__ void epilogue(const float (&acc)[kBlockN / 2], const Params& p,
                                         EpilogueTile tile, unsigned char* buffers,
                                         Barrier (&c_bar)[kBuffers], const EpilogueMaps& maps,
                                         int wgc, EpilogueState& es) {
  constexpr int kCols = 128 / static_cast<int>(sizeof(Out));  // columns per chunk
  constexpr int kFull = kBlockN / kCols;                      // whole chunks
  // A last, narrower chunk of kTail columns (8, 16, 32 or 48; 16-bit outputs: whole 16-column
  // stmatrix blocks, and an 8-column one through stmatrix .x2 where kTail is 8 modulo 16),
  // staged in the same buffer layout (its rows padded to the 128 B swizzle span, as TMA reads a
  // narrower box under SWIZZLE_128B: docs/hardware-findings.md, finding 2), stored and loaded
  // through maps.d_tail / maps.c_tail.
  constexpr int kTail = tail_columns(kBlockN, static_cast<int>(sizeof(Out)));
  constexpr int kChunks = kFull + (kTail > 0 ? 1 : 0);
  static_assert(!kTrans || (sizeof(Out) == 2 && kTma && !kWithC && !kHeadFirst && kTail == 0),
                "a transposed epilogue stages 16-bit outputs for TMA stores, without C");
  static_assert(kTail % 8 == 0, "a tile's last chunk has whole 8-column groups");
  constexpr int kGroups = kCols / 8;  // 8-column accumulator groups per chunk
  using ChunkBox = Box<Out, kCols, 64>;
  static_assert(ChunkBox::kBytes == kEpiBufferBytes, "a chunk fills one 8 KiB buffer");
  constexpr std::uint32_t kTailBytes = 64u * kTail * sizeof(Out);  // the tail box's bytes
  static_assert(kBuffers == 2 || kBuffers == 4 || (kTrans && kBuffers == 1),
                "the staging ring has 2 or 4 buffers (1: a transposed epilogue)");
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  const bool leader = t == 0;
  constexpr bool with_c = kWithC;
  const std::uint32_t barrier = kEpilogueBarrier + static_cast<std::uint32_t>(wgc);
  auto next = [](std::uint32_t b) { return (b + 1) % static_cast<std::uint32_t>(kBuffers); };
  static_assert(!kHeadFirst || kTail > 0, "a head-first tile has a narrower chunk");
  // Head-first: chunk q's first 8-column group of the tile (the narrower chunk is chunk 0). The
  // expressions below keep their earlier form for the other tiles (kHeadFirst false), whose SASS
  // is unchanged.
  constexpr auto hf_group = [](int q) { return q == 0 ? 0 : kTail / 8 + (q - 1) * kGroups; };

  // Leader only, with `buffer` free (its last store has read it).
  auto load_c_chunk = [&](int q, std::uint32_t buffer) {
    const bool whole = kHeadFirst ? q != 0 : q < kFull;
    c_bar[buffer].arrive_expect_tx(whole ? ChunkBox::kBytes : kTailBytes);
    const std::int32_t c[2] = {tile.col0 + (kHeadFirst ? 8 * hf_group(q) : q * kCols), tile.row0};
    load(buffers + buffer * kEpiBufferBytes, whole ? maps.c : maps.c_tail, c_bar[buffer], c);
  };
  if constexpr (kTma) {
    if (with_c && leader) {
      wait_group_read<kBuffers - 1>();
      load_c_chunk(0, es.buffer);
    }
  }

#pragma unroll
  for (int q = 0; q < kChunks; ++q) {
    unsigned char* buf = buffers + es.buffer * kEpiBufferBytes;
    const int col0 = kTrans ? tile.col0 : tile.col0 + (kHeadFirst ? 8 * hf_group(q) : q * kCols);
    const int row0 = kTrans ? tile.row0 + 64 * q : tile.row0;
    const bool whole = kHeadFirst ? q != 0 : q < kFull;
    const int groups = whole ? kGroups : kTail / 8;  // this chunk's 8-column groups
    // The chunk's first accumulator register (4 per 8-column group).
    const int reg0 = kHeadFirst ? 4 * hf_group(q) : 4 * q * kGroups;
    if constexpr (with_c) {
      if constexpr (kTma) {
        c_bar[es.buffer].wait((es.c_parity >> es.buffer) & 1u);
        es.c_parity ^= 1u << es.buffer;
      } else {
        copy_in_chunk<Out>(buf, p, row0, col0, 8 * groups, t);
        named_barrier_sync(barrier, kWarpgroupThreads);
      }
    } else if constexpr (kTma) {
      if (q == 0) trace(p, 1 + wgc, es.unit, 12);
      if (leader) wait_group_read<kBuffers - 1>();
      if (q == 0) trace(p, 1 + wgc, es.unit, 11);
      named_barrier_sync(barrier, kWarpgroupThreads);
    }
    if (q == 0 || q == 2) trace(p, 1 + wgc, es.unit, q == 0 ? 6 : 10);
    if constexpr (sizeof(Out) == 2) {
      // Four 16 x 16 blocks per warp, one stmatrix each (gemm_config.hpp: stmatrix_register).
      const std::uint32_t base = ptx::smem_addr(buf);
#pragma unroll
      for (int b = 0; b < groups / 2; ++b) {
        const std::uint32_t at =
            base + (kTrans ? stmatrix_trans_row_offset(t, b) : stmatrix_row_offset(t, b));
        std::uint32_t c[4] = {0, 0, 0, 0};
        if constexpr (with_c) ptx::ldmatrix_x4(at, c[0], c[1], c[2], c[3]);
        std::uint32_t v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int reg = kHeadFirst ? reg0 + stmatrix_register(b, j)
                                     : 4 * q * kGroups + stmatrix_register(b, j);
          float v0 = kScale ? p.alpha * acc[reg] : acc[reg];
          float v1 = kScale ? p.alpha * acc[reg + 1] : acc[reg + 1];
          if constexpr (with_c) {
            const float2 cf = unpack_pair<Out>(c[j]);
            v0 = fmaf(p.beta, cf.x, v0);
            v1 = fmaf(p.beta, cf.y, v1);
          }
          v[j] = pack_pair<Out>(v0, v1);
        }
        if constexpr (kTrans) {
          ptx::stmatrix_x4_trans(at, v[0], v[1], v[2], v[3]);
        } else {
          ptx::stmatrix_x4(at, v[0], v[1], v[2], v[3]);
        }
      }
      if (groups % 2 != 0) {
        // A last 8-column group (the tail of a 136-wide tile): matrices 0 and 1 of block
        // groups / 2, lanes 0..15 addressing them. (The pair computation is written out as in
        // the loop above on purpose: folded into one lambda for both, config 7's 240-register
        // ping-pong kernels spilled 16 bytes, session 30.)
        const int b = groups / 2;
        const std::uint32_t at = base + stmatrix_row_offset(t, b);
        std::uint32_t c[2] = {0, 0};
        if constexpr (with_c) ptx::ldmatrix_x2(at, c[0], c[1]);
        std::uint32_t v[2];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int reg = kHeadFirst ? reg0 + stmatrix_register(b, j)
                                     : 4 * q * kGroups + stmatrix_register(b, j);
          float v0 = kScale ? p.alpha * acc[reg] : acc[reg];
          float v1 = kScale ? p.alpha * acc[reg + 1] : acc[reg + 1];
          if constexpr (with_c) {
            const float2 cf = unpack_pair<Out>(c[j]);
            v0 = fmaf(p.beta, cf.x, v0);
            v1 = fmaf(p.beta, cf.y, v1);
          }
          v[j] = pack_pair<Out>(v0, v1);
        }
        ptx::stmatrix_x2(at, v[0], v[1]);
      }
    } else {
#pragma unroll
      for (int g = 0; g < groups; ++g) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          // reg and reg + 1 (the next column); col: the column within the chunk.
          const int reg = kHeadFirst ? reg0 + 4 * g + 2 * i : 4 * (q * kGroups + g) + 2 * i;
          const FragmentCoord at_d = accumulator_coord(t, reg);
          const int row = at_d.row, col = at_d.col - (kHeadFirst ? 8 * hf_group(q) : q * kCols);
          unsigned char* at =
              buf +
              swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(
                                                 row * 128 + col * static_cast<int>(sizeof(Out))));
          float v0 = kScale ? p.alpha * acc[reg] : acc[reg];
          float v1 = kScale ? p.alpha * acc[reg + 1] : acc[reg + 1];
          if constexpr (with_c) {
            const float2 c = load_pair<Out>(at);
            v0 = fmaf(p.beta, c.x, v0);
            v1 = fmaf(p.beta, c.y, v1);
          }
          store_pair<Out>(at, v0, v1);
        }
      }
    }
    if constexpr (kTma) {
      if (q == 0) trace(p, 1 + wgc, es.unit, 7);
      fence_proxy_async_shared();  // this thread's writes -> the TMA store's reads
      named_barrier_sync(barrier, kWarpgroupThreads);
      if (q == 0) trace(p, 1 + wgc, es.unit, 8);
      if (leader) {
        const std::int32_t c[2] = {col0, row0};
        store(whole ? maps.d : maps.d_tail, buf, c);
        commit_group();
        if (q == 0) trace(p, 1 + wgc, es.unit, 9);
        if (with_c && q + 1 < kChunks) {
          wait_group_read<kBuffers - 1>();
          load_c_chunk(q + 1, next(es.buffer));
        }
      }
    } else {
      named_barrier_sync(barrier, kWarpgroupThreads);
      // Chunk q + kBuffers reuses this buffer; chunk q + 1's barrier orders it after this copy.
      copy_out_chunk<Out>(buf, p, row0, col0, 8 * groups, t);
    }
    es.buffer = next(es.buffer);
  }
}

}  // namespace tma::ops::detail::gemm
