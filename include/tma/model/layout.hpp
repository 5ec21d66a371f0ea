// tmakit: what the reference model shares between load, store, reduce, multicast and im2col: where
// a tensor element lives in the global buffer, where a box element lands in the shared-memory
// image, what out-of-bounds elements are filled with, and the argument checks.
//
// Conventions (docs/design.md, "model"):
//   * "global" is a host byte buffer standing for the memory at spec.address (never dereferenced).
//     Element (i0..i_{r-1}) lives at byte sum(i_d * stride_d), stride_0 = element size,
//     stride_d = strides_bytes_inner_first[d] for d >= 1. Elements are little-endian.
//   * "smem" is the box's shared-memory image as it appears in a buffer aligned to
//     smem_alignment(spec): a dense array of rows, dimension 0 fastest (tiled: one row per
//     combination of the box indices k1..k_{r-1}, k1 fastest; im2col: one row per pixel), each row
//     holding the row's elements contiguously, then every byte moved by swizzle_offset().
//   * Tiled traversal (PTX ISA, "Tensors" > "Tiled Mode" > "Bounding Box", "Traversal-Stride"):
//     along dimension d the box visits coords[d] + k * traversal_step(d) for
//     k < box_extent(spec, d); an index < 0 or >= dims[d] in any dimension is out of bounds
//     ("Out of Boundary Access": filled on loads, and, for stores, not written; but stores write
//     dimension 0 in whole 16 B chunks, stored_dim0_limit).
//   * Interleaved tiled maps (INTERLEAVE_16B / 32B; MEASURED on the H200, docs/hardware-findings.md
//     finding 12): the unit of dimension 0 is one whole interleave chunk of C = 16 / 32 bytes, not
//     an element: chunk i0 lives at byte i0 * C (plus the outer dimensions' strides), and
//     dims[0], box[0], element_strides[0] and coords[0] all count chunks. Dimension rank - 2 is
//     not traversed (traversed_extent). The image is the chunks in traversal order (dimension 0
//     fastest), C bytes each with no padding, then swizzled. An out-of-bounds chunk is filled
//     element by element by loads and skipped by stores and reduces, which write every in-bounds
//     chunk of the same walk.
//
// Everything the documents leave open is a named function marked HYPOTHESIS, so that the GPU
// tests' verdict is a one-place change.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"
#include "tma/model/swizzle.hpp"

namespace tma::model {

namespace detail {

[[noreturn]] inline void fail(std::string_view who, const std::string& what) {
  throw std::invalid_argument(std::string(who) + ": " + what);
}

template <class T>
std::string list(const T& a, int n) {
  std::ostringstream o;
  o << '{';
  for (int i = 0; i < n; ++i)
    o << (i ? "," : "") << a[static_cast<std::size_t>(i)];
  o << '}';
  return o.str();
}

// a * b + c, or false on 64-bit overflow.
inline bool mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t* out) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (b != 0 && a > kMax / b) return false;
  if (a * b > kMax - c) return false;
  *out = a * b + c;
  return true;
}

}  // namespace detail

// Element size in bytes of the spec's type (the model covers byte-sized types only).
inline std::size_t element_size(const TensorMapSpec& s) {
  return static_cast<std::size_t>(element_bytes(s.dtype));
}

// Throws std::invalid_argument unless the model can run `s` in `mode`: a rank the mode allows,
// a byte-sized type, a Hopper swizzle, non-zero dims / box / strides / pixel counts. The rest of
// the descriptor rules are validate()'s business; these checks only keep the model well defined.
inline void require_modelled(const TensorMapSpec& s, Mode mode, std::string_view who) {
  if (s.mode != mode) {
    detail::fail(
        who,
        "spec.mode = " + std::string(to_string(s.mode)) + " but this function models " +
            std::string(to_string(mode)) + " mode: use " +
            (mode == Mode::kTiled ? "load_im2col for im2col maps" : "load_box for tiled maps"));
  }
  const int min_rank = mode == Mode::kIm2col ? 3 : 1;
  if (s.rank < min_rank || s.rank > kMaxRank) {
    detail::fail(who, "spec.rank = " + std::to_string(s.rank) + " is outside " +
                          std::to_string(min_rank) + ".." + std::to_string(kMaxRank) + " for " +
                          std::string(to_string(mode)) + " mode: use a rank in that range");
  }
  if (!is_valid(s.dtype) || is_packed(s.dtype)) {
    detail::fail(who, "spec.dtype = " + std::string(to_string(s.dtype)) +
                          " is not modelled (packed sub-byte types need compute capability >= 10): "
                          "use a byte-sized element type");
  }
  if (!is_valid(s.swizzle) ||
      (swizzle_span_bytes(s.swizzle) == 128 && s.swizzle != Swizzle::k128B)) {
    detail::fail(who, "spec.swizzle = " + std::string(to_string(s.swizzle)) +
                          " is not modelled (the 128B_ATOM modes need compute capability >= 10): "
                          "use none, 32B, 64B or 128B");
  }
  if (!is_valid(s.interleave) || !is_valid(s.oob_fill)) {
    detail::fail(who,
                 "spec.interleave or spec.oob_fill holds an out-of-range enum value: use one "
                 "of the named enumerators");
  }
  for (int d = 0; d < s.rank; ++d) {
    if (s.dims_inner_first[d] == 0) {
      detail::fail(who, "spec.dims_inner_first[" + std::to_string(d) +
                            "] = 0: every dimension needs at least one element");
    }
    const bool stride_used = d > 0 || s.interleave != Interleave::kNone;
    if (stride_used && s.element_strides_inner_first[d] == 0) {
      detail::fail(who, "spec.element_strides_inner_first[" + std::to_string(d) +
                            "] = 0: use a traversal stride of 1..8");
    }
    if (mode == Mode::kTiled && s.box_inner_first[d] == 0) {
      detail::fail(
          who, "spec.box_inner_first[" + std::to_string(d) + "] = 0: use a box extent of 1..256");
    }
  }
  if (mode == Mode::kIm2col && (s.channels_per_pixel == 0 || s.pixels_per_column == 0)) {
    detail::fail(who, "spec.channels_per_pixel = " + std::to_string(s.channels_per_pixel) +
                          " and spec.pixels_per_column = " + std::to_string(s.pixels_per_column) +
                          ": both must be at least 1");
  }
}

// Bytes of one interleave chunk, the unit of dimension 0 of an interleaved tiled map; 0 otherwise.
inline std::size_t interleave_chunk_bytes(const TensorMapSpec& s) {
  return is_interleaved_tiled(s) ? static_cast<std::size_t>(interleave_bytes(s.interleave)) : 0;
}

// Byte distance between consecutive indices of dimension `d` in the global buffer (dimension 0:
// the element size, or the chunk size of an interleaved tiled map).
inline std::uint64_t global_stride_bytes(const TensorMapSpec& s, int d) {
  if (d != 0) return s.strides_bytes_inner_first[d];
  return is_interleaved_tiled(s) ? interleave_chunk_bytes(s) : element_size(s);
}

// Bytes from spec.address to the last byte of the tensor's last element, plus one: the smallest
// "global" buffer the model accepts. Throws std::invalid_argument if it does not fit in 64 bits.
inline std::size_t global_footprint_bytes(const TensorMapSpec& s) {
  if (s.rank < 1 || s.rank > kMaxRank || !is_valid(s.dtype) || is_packed(s.dtype)) {
    detail::fail("global_footprint_bytes",
                 "spec.rank = " + std::to_string(s.rank) +
                     ", spec.dtype = " + std::string(to_string(s.dtype)) +
                     ": needs a rank of 1..5 and a byte-sized element type");
  }
  std::uint64_t total = is_interleaved_tiled(s) ? interleave_chunk_bytes(s) : element_size(s);
  for (int d = 0; d < s.rank; ++d) {
    const std::uint64_t last = s.dims_inner_first[d] == 0 ? 0 : s.dims_inner_first[d] - 1;
    if (!detail::mul_add(last, global_stride_bytes(s, d), total, &total)) {
      detail::fail("global_footprint_bytes",
                   "dims_inner_first = " + detail::list(s.dims_inner_first, s.rank) +
                       " with strides_bytes_inner_first = " +
                       detail::list(s.strides_bytes_inner_first, s.rank) +
                       " spans more than 2^64 bytes: use smaller dims or strides");
    }
  }
  // A store writes the last row's whole 16 B chunk (stored_dim0_limit).
  total = (total + 15) / 16 * 16;
  if (total > std::numeric_limits<std::size_t>::max()) {
    detail::fail("global_footprint_bytes", "the tensor spans " + std::to_string(total) +
                                               " bytes, more than this host can address");
  }
  return static_cast<std::size_t>(total);
}

// The bits of the "OOB-NaN" that CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA writes (PTX ISA,
// "Out of Boundary Access": "a special NaN called OOB-NaN"; the value is not documented).
// MEASURED (H200, driver 580, tests/gpu/probes.txt group C): the 16-bit pattern 0x7FF7 repeated
// over the element: bf16 / fp16 0x7FF7, fp32 0x7FF77FF7, fp64 0x7FF77FF77FF77FF7 (a NaN in each
// format). For non-float types (which the driver rejects with NaN fill) the model fills zeros.
constexpr std::uint64_t oob_nan_bits(DataType t) {
  switch (t) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 0x7FF7u;
    case DataType::kFloat32:
    case DataType::kFloat32Ftz:
    case DataType::kTFloat32:
    case DataType::kTFloat32Ftz:
      return 0x7FF77FF7u;
    case DataType::kFloat64:
      return 0x7FF77FF77FF77FF7ull;
    default:
      return 0;
  }
}

// The bits a load writes to shared memory for an in-bounds element with global bits `bits`.
// MEASURED (H200, tests/gpu/gpu_load.cu: every mismatch of the first full run was a TF32 map): TMA
// converts TFLOAT32 / TFLOAT32_FTZ elements to TF32 on the way: the fp32 mantissa is rounded to 10
// bits to nearest, ties to even (a tie with an even result stays: 0xD797D000 -> 0xD797C000),
// subnormals included (the _FTZ type
// does not flush on load), and every NaN becomes the canonical TF32 NaN 0x7FFFE000. Other types
// are copied bit for bit.
constexpr std::uint64_t loaded_bits(DataType t, std::uint64_t bits) {
  if (t != DataType::kTFloat32 && t != DataType::kTFloat32Ftz) return bits;
  const auto x = static_cast<std::uint32_t>(bits);
  if ((x & 0x7F800000u) == 0x7F800000u) {
    return (x & 0x007FFFFFu) != 0 ? 0x7FFFE000u : x;  // NaN -> canonical; Inf stays
  }
  return (x + 0x0FFFu + ((x >> 13) & 1u)) & 0xFFFFE000u;  // magnitude rounding: ties to even
}

// The bits a load writes for an out-of-bounds element of `s`.
constexpr std::uint64_t oob_fill_bits(const TensorMapSpec& s) {
  return s.oob_fill == OobFill::kNan ? oob_nan_bits(s.dtype) : 0;
}

// Index step of the traversal along dimension `d` (the element / traversal stride). The driver
// and the PTX ISA say dimension 0's stride is ignored (must be 1) without interleave.
// HYPOTHESIS (check on hardware): stores and reduces traverse with the same steps as loads (the
// PTX ISA describes traversal strides on the tensor map, not per direction).
inline std::int64_t traversal_step(const TensorMapSpec& s, int d) {
  if (d == 0 && s.interleave == Interleave::kNone) return 1;
  return static_cast<std::int64_t>(s.element_strides_inner_first[d]);
}

// Elements in one shared-memory row: box_extent(0) (tiled), channels_per_pixel (im2col), or the
// elements of one interleave chunk (interleaved tiled: each row is one chunk).
inline std::size_t smem_row_elements(const TensorMapSpec& s) {
  if (is_interleaved_tiled(s)) return interleave_chunk_bytes(s) / element_size(s);
  return static_cast<std::size_t>(box_extent(s, 0));
}

// Rows of the shared-memory image: product of box_extent(d) for d >= 1 (tiled), pixels_per_column
// (im2col), or the chunks a copy moves (interleaved tiled: product of traversed_extent(d), d >= 0).
inline std::size_t smem_rows(const TensorMapSpec& s) {
  if (s.mode == Mode::kIm2col) return s.pixels_per_column;
  const bool chunks = is_interleaved_tiled(s);
  std::size_t rows = 1;
  for (int d = chunks ? 0 : 1; d < s.rank && d < kMaxRank; ++d)
    rows *= static_cast<std::size_t>(chunks ? traversed_extent(s, d) : box_extent(s, d));
  return rows;
}

// Bytes one row occupies in shared memory. Without interleave: the elements exactly
// (box_extent(0) * element size; the driver requires a multiple of 16 B). Interleaved tiled: one
// chunk (16 / 32 B, MEASURED). HYPOTHESIS (im2col with interleave, not probed): dimension 0's
// traversal stride is honoured and the row is padded up to a multiple of the interleave size; the
// padding bytes are not written by loads nor read by stores.
inline std::size_t smem_row_bytes(const TensorMapSpec& s) {
  if (is_interleaved_tiled(s)) return interleave_chunk_bytes(s);
  const std::size_t dense = smem_row_elements(s) * element_size(s);
  const auto unit = static_cast<std::size_t>(interleave_bytes(s.interleave));
  if (unit == 0) return dense;
  return (dense + unit - 1) / unit * unit;
}

// Distance between the starts of consecutive rows. MEASURED (H200, tests/gpu/probes.txt group B):
// with a swizzle, a row narrower than the swizzle span is padded to the span (e.g. 112 B rows under
// SWIZZLE_128B start 128 B apart; the padding bytes are not written), and the swizzle is the XOR of
// swizzle_offset() on the padded offsets. Without swizzle rows are dense. MEASURED (probes D2):
// the chunks of an interleaved tiled map are dense under every swizzle (16 B chunks under
// SWIZZLE_32B and SWIZZLE_128B start 16 B apart), so the image is the swizzled dense stream.
inline std::size_t smem_row_pitch(const TensorMapSpec& s) {
  if (is_interleaved_tiled(s)) return smem_row_bytes(s);
  const auto span = static_cast<std::size_t>(swizzle_span_bytes(s.swizzle));
  return std::max(smem_row_bytes(s), span);
}

// Bytes of the shared-memory buffer a box needs: one past the last byte the swizzled image
// reaches. The image is rows * pitch dense bytes moved by swizzle_offset(), which permutes 16 B
// chunks only within span-aligned blocks; a partly filled last block can send a chunk past
// rows * pitch (e.g. 9 rows of 16 B under SWIZZLE_128B: row 8 lands at bytes 144..159). Equals
// transaction_bytes(spec) whenever rows are dense and the image ends on a span boundary or inside
// the first 128 B, i.e. in every common case. Buffer bytes outside the image are neither written by
// loads nor read by stores.
inline std::size_t smem_bytes(const TensorMapSpec& s) {
  const std::size_t dense = smem_rows(s) * smem_row_pitch(s);
  const auto span = static_cast<std::size_t>(swizzle_span_bytes(s.swizzle));
  if (span == 0 || dense == 0 || dense > (std::size_t{1} << 31)) return dense;
  std::size_t end = 0;
  for (std::size_t chunk = (dense - 1) / span * span; chunk < dense; chunk += 16) {
    const std::size_t bytes = dense - chunk < 16 ? dense - chunk : 16;
    const std::size_t moved = swizzle_offset(s.swizzle, static_cast<std::uint32_t>(chunk));
    if (moved + bytes > end) end = moved + bytes;
  }
  return end;
}

// Where byte `byte_in_row` of row `row` of the box image lands in the shared-memory buffer.
inline std::size_t smem_offset(const TensorMapSpec& s, std::size_t row, std::size_t byte_in_row) {
  const auto linear = static_cast<std::uint32_t>(row * smem_row_pitch(s) + byte_in_row);
  return swizzle_offset(s.swizzle, linear);
}

// Element bits at `offset` (little-endian, `size` bytes), zero-extended.
inline std::uint64_t read_element(std::span<const std::byte> buf, std::size_t offset,
                                  std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i)
    v |= static_cast<std::uint64_t>(std::to_integer<unsigned>(buf[offset + i])) << (8 * i);
  return v;
}

// Writes the low `size` bytes of `bits` at `offset`, little-endian.
inline void write_element(std::span<std::byte> buf, std::size_t offset, std::size_t size,
                          std::uint64_t bits) {
  for (std::size_t i = 0; i < size; ++i)
    buf[offset + i] = static_cast<std::byte>((bits >> (8 * i)) & 0xFFu);
}

// One element visited by a box traversal.
struct ElementAccess {
  // Tensor index, innermost first (may be out of bounds); interleaved tiled maps: index[0] is the
  // chunk's index, shared by every element of the chunk.
  std::array<std::int64_t, kMaxRank> index;
  std::size_t smem_offset;    // first byte of the element in the smem buffer
  bool in_bounds;             // index inside the tensor in every dimension
  std::size_t global_offset;  // first byte in the global buffer; 0 if !written
  // A store / reduce writes it: in bounds, or past dims[0] within its 16 B chunk (interleaved
  // tiled maps: exactly the in-bounds chunks; see for_each_interleaved_element).
  bool stored;
};

// MEASURED (H200, tests/gpu/probes.txt group E): stores and reduces write dimension 0 in whole
// 16-byte chunks: elements past dims_inner_first[0] that share a 16 B chunk with the row's last
// element are written too (from shared memory), so they land in the row's padding. Rows are 16 B
// aligned (strides are multiples of 16), so the chunk never reaches the next row, but it can reach
// past the end of the last row when dims[0] * element size is not a multiple of 16.
inline std::uint64_t stored_dim0_limit(const TensorMapSpec& s) {
  const std::uint64_t e = element_size(s);
  return (s.dims_inner_first[0] * e + 15) / 16 * 16 / e;
}

// The interleaved-tiled branch of for_each_box_element: one ElementAccess per element of every
// chunk, chunks in traversal order (box index k0 fastest; dimension rank - 2 stays at its
// coordinate). Chunk (i0, i1, ..) is global bytes [i0 * C + sum(i_d * strides[d]), + C) and is in
// bounds when every i_d is.
// MEASURED (H200, docs/hardware-findings.md finding 12): stores and reduces take the same walk
// and write exactly the in-bounds chunks, each from its place in the image (every step of the
// outermost dimension included; dimension rank - 2 not traversed, as for loads). Probes D2 line
// 83 and D3 lines 111-113 (tagged dumps), and every one of the 2,156 interleaved cases of a
// gpu_store --interleave 0.3 run (1,294 mismatches of the earlier "first outermost step only"
// hypothesis, 862 matches) replayed by tests/gpu/replay/store_replay.cpp.
template <class F>
void for_each_interleaved_element(const TensorMapSpec& s, std::span<const std::int32_t> coords,
                                  F&& f) {
  const int rank = s.rank;
  const std::size_t esize = element_size(s);
  const std::size_t chunk = interleave_chunk_bytes(s);
  std::array<std::uint64_t, kMaxRank> extent{};
  for (int d = 0; d < rank; ++d) {
    extent[d] = traversed_extent(s, d);
    if (extent[d] == 0) return;
  }
  std::array<std::uint64_t, kMaxRank> k{};  // box index per dimension (odometer, k0 fastest)
  ElementAccess e{};
  for (std::size_t row = 0;; ++row) {
    bool in = true;
    std::uint64_t base = 0;
    for (int d = 0; d < rank; ++d) {
      const std::int64_t i = coords[d] + static_cast<std::int64_t>(k[d]) * traversal_step(s, d);
      e.index[d] = i;
      if (i < 0 || static_cast<std::uint64_t>(i) >= s.dims_inner_first[d]) {
        in = false;
      } else {
        base += static_cast<std::uint64_t>(i) * global_stride_bytes(s, d);
      }
    }
    e.in_bounds = in;
    e.stored = in;
    for (std::size_t j = 0; j < chunk / esize; ++j) {
      e.global_offset = in ? static_cast<std::size_t>(base + j * esize) : 0;
      e.smem_offset = smem_offset(s, row, j * esize);
      f(static_cast<const ElementAccess&>(e));
    }
    int d = 0;
    for (; d < rank; ++d) {
      if (++k[d] < extent[d]) break;
      k[d] = 0;
    }
    if (d >= rank) return;
  }
}

// Calls f(const ElementAccess&) for every element of the tiled box at `coords`, dimension 0
// fastest. Preconditions (the public functions check them): require_modelled(s, kTiled, ...) and
// coords.size() == s.rank. Elements of one row occupy consecutive element slots of the row.
template <class F>
void for_each_box_element(const TensorMapSpec& s, std::span<const std::int32_t> coords, F&& f) {
  if (is_interleaved_tiled(s)) {
    for_each_interleaved_element(s, coords, std::forward<F>(f));
    return;
  }
  const int rank = s.rank;
  const std::size_t esize = element_size(s);
  std::array<std::uint64_t, kMaxRank> extent{};
  for (int d = 0; d < rank; ++d) {
    extent[d] = box_extent(s, d);
    if (extent[d] == 0) return;
  }
  std::array<std::uint64_t, kMaxRank> k{};  // box index of dims 1..rank-1 (odometer, k1 fastest)
  const std::uint64_t stored_limit = stored_dim0_limit(s);
  ElementAccess e{};
  for (std::size_t row = 0;; ++row) {
    bool outer_in = true;
    std::uint64_t outer_offset = 0;
    for (int d = 1; d < rank; ++d) {
      const std::int64_t i = coords[d] + static_cast<std::int64_t>(k[d]) * traversal_step(s, d);
      e.index[d] = i;
      if (i < 0 || static_cast<std::uint64_t>(i) >= s.dims_inner_first[d]) {
        outer_in = false;
      } else {
        outer_offset += static_cast<std::uint64_t>(i) * global_stride_bytes(s, d);
      }
    }
    for (std::uint64_t k0 = 0; k0 < extent[0]; ++k0) {
      const std::int64_t i = coords[0] + static_cast<std::int64_t>(k0) * traversal_step(s, 0);
      e.index[0] = i;
      e.in_bounds = outer_in && i >= 0 && static_cast<std::uint64_t>(i) < s.dims_inner_first[0];
      e.stored = outer_in && i >= 0 && static_cast<std::uint64_t>(i) < stored_limit;
      e.global_offset =
          e.stored ? static_cast<std::size_t>(outer_offset + static_cast<std::uint64_t>(i) * esize)
                   : 0;
      e.smem_offset = smem_offset(s, row, static_cast<std::size_t>(k0) * esize);
      f(static_cast<const ElementAccess&>(e));
    }
    int d = 1;
    for (; d < rank; ++d) {
      if (++k[d] < extent[d]) break;
      k[d] = 0;
    }
    if (d >= rank) return;
  }
}

// Throws unless `coords` has one coordinate per dimension.
inline void check_coords(const TensorMapSpec& s, std::span<const std::int32_t> coords,
                         std::string_view who) {
  if (coords.size() != static_cast<std::size_t>(s.rank)) {
    detail::fail(who, "coords has " + std::to_string(coords.size()) +
                          " values but spec.rank = " + std::to_string(s.rank) +
                          ": pass one signed coordinate per dimension, innermost first");
  }
  // MEASURED (H200, tests/gpu/probes.txt group A): a tiled copy whose box starts at a dimension-0
  // byte offset that is not a multiple of 16 faults with cudaErrorIllegalInstruction (loads and
  // stores, negative coordinates too). The driver cannot check it: it is a per-copy value.
  // Interleaved tiled maps count coordinate 0 in whole chunks, so every start is chunk aligned
  // (MEASURED, H200 2026-11-22, probes group D3c: bf16 coords[0] = 1 starts one chunk in and does
  // not fault).
  if (s.mode == Mode::kTiled && !is_interleaved_tiled(s) && !coords.empty() &&
      (static_cast<std::int64_t>(coords[0]) * static_cast<std::int64_t>(element_size(s))) % 16 !=
          0) {
    detail::fail(who, "coords[0] = " + std::to_string(coords[0]) + " elements x " +
                          std::to_string(element_size(s)) +
                          " B is not a multiple of 16 B: TMA faults (illegal instruction) on a box "
                          "that starts inside a 16-byte chunk; start boxes on multiples of " +
                          std::to_string(16 / std::min<std::size_t>(16, element_size(s))) +
                          " elements");
  }
}

// Throws unless the global buffer covers the tensor's footprint (the model never reads or writes
// outside its buffers).
inline void check_global(const TensorMapSpec& s, std::size_t global_size, std::string_view who) {
  const std::size_t need = global_footprint_bytes(s);
  if (global_size < need) {
    detail::fail(who, "global buffer has " + std::to_string(global_size) +
                          " bytes but the tensor (dims_inner_first = " +
                          detail::list(s.dims_inner_first, s.rank) +
                          ", strides_bytes_inner_first = " +
                          detail::list(s.strides_bytes_inner_first, s.rank) + ") spans " +
                          std::to_string(need) + " bytes: pass a buffer of at least " +
                          std::to_string(need) + " bytes (see global_footprint_bytes)");
  }
}

// Throws unless the shared-memory buffer is exactly smem_bytes(s) long.
inline void check_smem(const TensorMapSpec& s, std::size_t smem_size, std::string_view who) {
  const std::size_t need = smem_bytes(s);
  if (need > (std::size_t{1} << 31)) {
    detail::fail(who, "the box needs " + std::to_string(need) +
                          " bytes of shared memory, beyond any GPU's: use a smaller box");
  }
  if (smem_size != need) {
    detail::fail(who, "shared-memory buffer has " + std::to_string(smem_size) +
                          " bytes but the box image needs exactly " + std::to_string(need) +
                          " (smem_bytes(spec)): size the buffer with smem_bytes");
  }
}

}  // namespace tma::model
