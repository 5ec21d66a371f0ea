// tmakit ops (internal): argument checks shared by the host entry points, and the tile grid that
// the copy kernels walk. Host code only.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>

#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/ops/tensor_view.hpp"

namespace tma::ops::detail {

template <class... A>
std::string cat(const A&... a) {
  std::ostringstream o;
  (o << ... << a);
  return o.str();
}

// Throws tma::Error with `what` prefixed by the entry point's name. Nothing has been launched.
[[noreturn]] inline void fail(const char* op, const std::string& what) {
  throw Error(cat("tma::ops::", op, ": ", what), 0);
}

inline std::string shape_string(const TensorView& v) {
  std::ostringstream o;
  o << '[';
  for (int i = 0; i < v.rank; ++i)
    o << (i ? "," : "") << v.shape[i];
  o << ']';
  return o.str();
}

inline std::string strides_string(const TensorView& v) {
  std::ostringstream o;
  o << '[';
  for (int i = 0; i < v.rank; ++i)
    o << (i ? "," : "") << v.strides[i];
  o << ']';
  return o.str();
}

// [first byte, last byte + 1) that `v` touches.
inline std::array<std::uintptr_t, 2> footprint(const TensorView& v) {
  const auto base = reinterpret_cast<std::uintptr_t>(v.data);
  std::uintptr_t last = 0;
  for (int i = 0; i < v.rank; ++i)
    last += static_cast<std::uintptr_t>(v.shape[i] - 1) * static_cast<std::uintptr_t>(v.strides[i]);
  return {base, base + (last + 1) * static_cast<std::uintptr_t>(element_bytes(v.dtype))};
}

// The checks every op makes on one tensor argument `name` ("src" / "dst"): a supported element
// size, rank 1..5, positive extents, innermost stride 1, outer strides that are non-negative
// multiples of 16 bytes, a 16-byte-aligned base.
inline void check_view(const char* op, const char* name, const TensorView& v) {
  if (!is_valid(v.dtype) || is_packed(v.dtype))
    fail(op, cat(name, ".dtype = ", to_string(v.dtype),
                 " is not supported: use an element type of 1, 2, 4 or 8 bytes"));
  if (v.rank < 1 || v.rank > kMaxRank)
    fail(op, cat(name, ".rank = ", v.rank, " is outside 1..5: reshape to at most 5 dimensions"));
  if (v.data == nullptr) fail(op, cat(name, ".data is null: pass a device pointer"));
  const int esize = element_bytes(v.dtype);
  for (int i = 0; i < v.rank; ++i) {
    if (v.shape[i] <= 0)
      fail(op, cat(name, ".shape[", i, "] = ", v.shape[i], " (shape ", shape_string(v),
                   "): every extent must be >= 1; skip the call for empty tensors"));
    if (v.shape[i] > (std::int64_t{1} << 32))
      fail(op, cat(name, ".shape[", i, "] = ", v.shape[i],
                   " exceeds TMA's 2^32 elements per dimension: split that dimension"));
  }
  const int inner = v.rank - 1;
  if (v.strides[inner] != 1 && v.shape[inner] > 1)
    fail(op,
         cat(name, ".strides[", inner, "] = ", v.strides[inner], " (strides ", strides_string(v),
             "): the innermost dimension must be contiguous (stride 1) for TMA; make it "
             "contiguous first (e.g. x.contiguous())"));
  for (int i = 0; i < inner; ++i) {
    if (v.strides[i] < 0)
      fail(op, cat(name, ".strides[", i, "] = ", v.strides[i],
                   " is negative: TMA needs non-negative strides; flip the view first"));
    const std::int64_t bytes = v.strides[i] * esize;
    if (v.shape[i] > 1 && bytes % 16 != 0)
      fail(op,
           cat(name, ".strides[", i, "] = ", v.strides[i], " elements x ", esize, " B = ", bytes,
               " B is not a multiple of 16 B (TMA's rule for outer strides): pad the "
               "rows to a multiple of ",
               16 / std::gcd(16, esize), " elements"));
  }
  if (reinterpret_cast<std::uintptr_t>(v.data) % 16 != 0)
    fail(op, cat(name, ".data = ", v.data,
                 " is not 16-byte aligned (TMA's rule for the global address): use an aligned "
                 "allocation or offset"));
}

inline void check_no_overlap(const char* op, const TensorView& dst, const TensorView& src) {
  const auto a = footprint(dst);
  const auto b = footprint(src);
  if (a[0] < b[1] && b[0] < a[1])
    fail(op,
         cat("dst [", reinterpret_cast<void*>(a[0]), ", ", reinterpret_cast<void*>(a[1]),
             ") overlaps src [", reinterpret_cast<void*>(b[0]), ", ", reinterpret_cast<void*>(b[1]),
             "): the result would depend on the order of the copies; use separate buffers"));
}

// Elements of a row's first `n` that TMA may store: n rounded down to whole 16-byte chunks.
// TMA stores write dimension 0 in whole 16-byte chunks (docs/hardware-findings.md, finding 4;
// model::stored_dim0_limit), so a map whose dims[0] ends inside a chunk overwrites the rest of it
// (row padding, or past the end of the last row). Ops that must not write outside their view
// store the first tma_store_columns(n) elements with TMA and the rest (< 16 / esize) otherwise.
template <class I>
constexpr I tma_store_columns(I n, int esize) {
  return n * static_cast<I>(esize) / 16 * 16 / static_cast<I>(esize);
}

// A tensor as the copy kernels see it: innermost first, byte strides, size-1 dimensions dropped
// and dimensions that are contiguous in both tensors merged.
struct Layout {
  int rank = 0;
  std::array<std::uint64_t, kMaxRank> dims{};
  std::array<std::uint64_t, kMaxRank> src_stride{};  // bytes; [0] = element size
  std::array<std::uint64_t, kMaxRank> dst_stride{};
};

inline Layout merge_dims(const TensorView& dst, const TensorView& src) {
  const std::uint64_t esize = element_bytes(src.dtype);
  Layout l;
  for (int i = src.rank - 1; i >= 0; --i) {  // innermost first
    const auto n = static_cast<std::uint64_t>(src.shape[i]);
    if (n == 1 && l.rank > 0) continue;
    const std::uint64_t ss = static_cast<std::uint64_t>(src.strides[i]) * esize;
    const std::uint64_t ds = static_cast<std::uint64_t>(dst.strides[i]) * esize;
    if (l.rank > 0) {
      const int p = l.rank - 1;
      if (ss == l.src_stride[p] * l.dims[p] && ds == l.dst_stride[p] * l.dims[p]) {
        l.dims[p] *= n;
        continue;
      }
    }
    l.dims[l.rank] = n;
    l.src_stride[l.rank] = l.rank == 0 ? esize : ss;
    l.dst_stride[l.rank] = l.rank == 0 ? esize : ds;
    ++l.rank;
  }
  return l;
}

// One TMA box per tile: tiles_per_dim[d] = ceil(dims[d] / box[d]); the edge tiles stick out and
// TMA fills (load) and clips (store) them.
struct TileGrid {
  std::uint32_t box[kMaxRank];
  std::uint32_t tiles[kMaxRank];  // per dimension, innermost first
  std::uint64_t total;            // product of tiles[]
  std::uint32_t tile_bytes;       // product of box[] x element size
};

// Rank-5 tiled spec for one side of a copy (padding dimensions of extent 1).
inline TensorMapSpec copy_spec(DataType dtype, const void* base, const Layout& l,
                               const std::array<std::uint64_t, kMaxRank>& strides,
                               const TileGrid& g) {
  TensorMapSpec s;
  s.dtype = dtype;
  s.rank = kMaxRank;
  s.address = base;
  for (int d = 0; d < kMaxRank; ++d) {
    s.dims_inner_first[d] = d < l.rank ? l.dims[d] : 1;
    s.box_inner_first[d] = g.box[d];
    if (d == 0) {
      s.strides_bytes_inner_first[d] = 0;
    } else if (d < l.rank) {
      s.strides_bytes_inner_first[d] = strides[d];
    } else {
      // A padding dimension of extent 1: its stride is never used; any legal value covering the
      // dimension below does.
      const std::uint64_t below =
          s.strides_bytes_inner_first[d - 1] != 0
              ? s.strides_bytes_inner_first[d - 1] * s.dims_inner_first[d - 1]
              : s.dims_inner_first[0] * element_bytes(dtype);
      constexpr std::uint64_t kMaxStride = (std::uint64_t{1} << 40) - 16;
      s.strides_bytes_inner_first[d] =
          std::min(kMaxStride, std::max<std::uint64_t>(16, (below + 15) / 16 * 16));
    }
  }
  return s;
}

}  // namespace tma::ops::detail
