// tmakit: build a TensorMapSpec from a row-major description, the way Triton's TensorDescriptor
// and PyTorch describe tensors: shape and strides outermost first (`x.shape`, `x.stride()`),
// strides in ELEMENTS, and a row-major box (Triton's `block_shape`).
//
// This is the one place where row-major order turns into the spec's innermost-first byte order
// (STYLE.md habit 3). Mistakes visible at this level (a box of the wrong rank, a non-contiguous
// innermost dimension) throw tma::Error naming the row-major argument; everything else is left to
// validate(), which make_tensor_map() runs before encoding.
//
//   // bf16 matrix of 4096 x 4096, 128 x 64 tiles, 128 B swizzle
//   TensorMapSpec s = tma::make_tiled_spec<tma::bf16>(ptr, {4096, 4096}, {}, {128, 64},
//                                                     {.swizzle = tma::Swizzle::k128B});
//   // s.dims_inner_first = {4096, 4096}, s.strides_bytes_inner_first = {2, 8192},
//   // s.box_inner_first = {64, 128}
//
// Plain C++: the CUDA headers are not needed. With them included first, __half and
// __nv_bfloat16 map to their DataType too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tma/config.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"
#include "tma/host/validate.hpp"

namespace tma {

// Tag types for the bf16 / fp16 / tf32 formats, usable without the CUDA headers:
// make_tiled_spec<tma::bf16>(void_ptr, ...).
struct bf16 {};
struct f16 {};
struct tf32 {};

// DataType of a C++ element type; `dtype` is absent for types TMA cannot copy.
template <class T>
struct element_type_traits {};

// Integers map by size. TMA copies bytes and never converts or sign-extends, so a signed 8- or
// 16-bit integer is described as UINT8 / UINT16 (the driver has no INT8 / INT16); 32- and 64-bit
// ones keep their signedness because the driver distinguishes them (it matters for reductions).
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct element_type_traits<T> {
  static constexpr DataType dtype =
      sizeof(T) == 1   ? DataType::kUInt8
      : sizeof(T) == 2 ? DataType::kUInt16
      : sizeof(T) == 4 ? (std::is_signed_v<T> ? DataType::kInt32 : DataType::kUInt32)
                       : (std::is_signed_v<T> ? DataType::kInt64 : DataType::kUInt64);
};
template <>
struct element_type_traits<float> {
  static constexpr DataType dtype = DataType::kFloat32;
};
template <>
struct element_type_traits<double> {
  static constexpr DataType dtype = DataType::kFloat64;
};
template <>
struct element_type_traits<bf16> {
  static constexpr DataType dtype = DataType::kBFloat16;
};
template <>
struct element_type_traits<f16> {
  static constexpr DataType dtype = DataType::kFloat16;
};
template <>
struct element_type_traits<tf32> {
  static constexpr DataType dtype = DataType::kTFloat32;
};
#ifdef __CUDA_BF16_TYPES_EXIST__
template <>
struct element_type_traits<__nv_bfloat16> {
  static constexpr DataType dtype = DataType::kBFloat16;
};
#endif
#ifdef __CUDA_FP16_TYPES_EXIST__
template <>
struct element_type_traits<__half> {
  static constexpr DataType dtype = DataType::kFloat16;
};
#endif

// A type TMA can copy: element_type_traits<T>::dtype exists.
template <class T>
concept Element = requires {
  element_type_traits<std::remove_cv_t<T>>::dtype;
};

// The DataType of element type T.
template <Element T>
inline constexpr DataType dtype_of = element_type_traits<std::remove_cv_t<T>>::dtype;

// Everything but the geometry. element_strides is row-major (outermost first), one per
// dimension; empty means 1 everywhere.
struct DescriptorOptions {
  Swizzle swizzle = Swizzle::kNone;
  Interleave interleave = Interleave::kNone;
  L2Promotion l2_promotion = L2Promotion::kNone;
  OobFill oob_fill = OobFill::kZero;
  std::vector<std::uint32_t> element_strides{};  // {} keeps -Wextra quiet on {.swizzle = ...}
};

// Row-major strides, in elements, of a contiguous tensor of `shape` (like torch's x.stride()).
inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

namespace detail {

// Checks shared by the tiled and im2col builders; collects violations instead of stopping at the
// first one.
struct RowMajorChecker {
  std::vector<Violation> out;
  std::size_t rank;

  void sizes(const char* field, std::size_t n, const char* what) {
    if (n == rank) return;
    out.push_back({Rule::kBuilderRankMismatch, field, -1,
                   cat(field, " has ", n, n == 1 ? " value" : " values", " but shape has ", rank,
                       ": give one ", what, " per dimension, outermost first")});
  }
  void non_negative(const char* field, const std::vector<std::int64_t>& v, const char* fix) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] >= 0) continue;
      out.push_back({Rule::kBuilderNegative, field, int(i),
                     cat(field, '[', i, "] = ", v[i], " is negative: ", fix)});
    }
  }
};

// Bytes of a row-major stride of `elements` elements; false when it does not convert exactly.
inline bool stride_to_bytes(DataType t, std::int64_t elements, std::uint64_t& bytes) {
  const auto e = static_cast<std::uint64_t>(elements);
  if (is_packed(t)) {  // packed values come in groups of 16; a stride must be whole groups
    bytes = inner_bytes(t, e);
    return e % 16 == 0;
  }
  const auto size = static_cast<std::uint64_t>(element_bytes(t));
  if (size != 0 && e > std::numeric_limits<std::uint64_t>::max() / size) return false;
  bytes = e * size;
  return true;
}

// Fills dims and strides of `s` (innermost first) from row-major shape / strides in elements.
inline void convert_layout(DataType dtype, const std::vector<std::int64_t>& shape,
                           const std::vector<std::int64_t>& strides, RowMajorChecker& c,
                           TensorMapSpec& s) {
  const int r = static_cast<int>(shape.size());
  for (int i = 0; i < r; ++i) {
    s.dims_inner_first[i] = static_cast<std::uint64_t>(std::max<std::int64_t>(shape[r - 1 - i], 0));
  }
  if (strides.size() != shape.size()) return;
  // The innermost stride must be 1 element, unless that dimension has extent 1 (PyTorch gives
  // size-1 dimensions arbitrary strides, and they are never stepped through).
  if (strides[r - 1] != 1 && shape[r - 1] != 1 && strides[r - 1] >= 0) {
    c.out.push_back(
        {Rule::kBuilderInnermostStride, "strides", r - 1,
         cat("strides[", r - 1, "] = ", strides[r - 1],
             " elements is not 1: TMA needs the innermost (last) dimension contiguous: transpose "
             "so the contiguous dimension comes last, or copy the tensor contiguous "
             "(x.contiguous())")});
  }
  s.strides_bytes_inner_first[0] = is_packed(dtype) ? 0 : std::uint64_t(element_bytes(dtype));
  for (int i = 1; i < r; ++i) {
    const std::int64_t e = strides[r - 1 - i];
    if (e < 0) continue;  // reported as negative
    std::uint64_t bytes = 0;
    if (!stride_to_bytes(dtype, e, bytes)) {
      c.out.push_back(
          {Rule::kBuilderOverflow, "strides", r - 1 - i,
           is_packed(dtype)
               ? cat("strides[", r - 1 - i, "] = ", e, " values of ", to_string(dtype),
                     " is not a whole number of 16-value groups: use a multiple of 16")
               : cat("strides[", r - 1 - i, "] = ", e, " elements x ", element_bytes(dtype),
                     " B does not fit in 64 bits: strides must be below 2^40 B")});
      continue;
    }
    s.strides_bytes_inner_first[i] = bytes;
  }
}

inline void convert_options(const DescriptorOptions& o, int r, RowMajorChecker& c,
                            TensorMapSpec& s) {
  s.swizzle = o.swizzle;
  s.interleave = o.interleave;
  s.l2_promotion = o.l2_promotion;
  s.oob_fill = o.oob_fill;
  if (o.element_strides.empty()) return;
  c.sizes("options.element_strides", o.element_strides.size(), "element stride");
  if (o.element_strides.size() != std::size_t(r)) return;
  for (int i = 0; i < r; ++i)
    s.element_strides_inner_first[i] = o.element_strides[r - 1 - i];
}

inline void throw_if_any(std::vector<Violation>& v) {
  if (v.empty()) return;
  std::string headline = cat("invalid row-major tensor description (", v.size(),
                             v.size() == 1 ? " violation)" : " violations)");
  throw Error(std::move(v), std::move(headline));
}

}  // namespace detail

// Tiled-mode spec from a row-major description. `shape`, `strides` (elements; empty = contiguous)
// and `box` are outermost first. Throws tma::Error for mistakes in the description itself (ranks
// that differ, a negative value, an innermost stride other than 1); the result still needs
// validate() (make_tensor_map runs it).
inline TensorMapSpec make_tiled_spec(DataType dtype, const void* base,
                                     const std::vector<std::int64_t>& shape,
                                     const std::vector<std::int64_t>& strides,
                                     const std::vector<std::int64_t>& box,
                                     const DescriptorOptions& options = {}) {
  using detail::cat;
  const std::vector<std::int64_t> st = strides.empty() ? contiguous_strides(shape) : strides;
  detail::RowMajorChecker c{{}, shape.size()};
  if (shape.empty() || shape.size() > std::size_t(kMaxRank)) {
    c.out.push_back({Rule::kRankRange, "shape", -1,
                     cat("shape has ", shape.size(),
                         " dimensions: a tiled tensor map has 1..5: merge adjacent dimensions "
                         "whose strides nest so that at most 5 remain")});
    detail::throw_if_any(c.out);
  }
  c.sizes("strides", st.size(), "stride");
  c.sizes("box", box.size(), "box extent");
  c.non_negative("shape", shape, "give each extent as a number of elements >= 1");
  c.non_negative("strides", st,
                 "TMA cannot step backwards through memory: copy the tensor contiguous first");
  c.non_negative("box", box, "give each box extent as a number of elements in 1..256");
  for (std::size_t i = 0; i < box.size(); ++i) {
    if (box[i] <= std::int64_t{std::numeric_limits<std::uint32_t>::max()}) continue;
    c.out.push_back({Rule::kBoxRange, "box", int(i),
                     cat("box[", i, "] = ", box[i],
                         " is outside 1..256: use at most 256 elements per dimension and issue "
                         "several copies")});
  }

  TensorMapSpec s;
  s.mode = Mode::kTiled;
  s.dtype = dtype;
  s.rank = static_cast<int>(shape.size());
  s.address = base;
  detail::convert_layout(dtype, shape, st, c, s);
  if (box.size() == shape.size()) {
    for (int i = 0; i < s.rank; ++i) {
      s.box_inner_first[i] = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
          box[s.rank - 1 - i], 0, std::numeric_limits<std::uint32_t>::max()));
    }
  }
  detail::convert_options(options, s.rank, c, s);
  detail::throw_if_any(c.out);
  return s;
}

// Typed form: the DataType comes from T (float, std::uint8_t, __nv_bfloat16, ...).
template <Element T>
TensorMapSpec make_tiled_spec(const T* base, const std::vector<std::int64_t>& shape,
                              const std::vector<std::int64_t>& strides,
                              const std::vector<std::int64_t>& box,
                              const DescriptorOptions& options = {}) {
  return make_tiled_spec(dtype_of<T>, base, shape, strides, box, options);
}

// Tag form for untyped pointers: make_tiled_spec<tma::bf16>(void_ptr, ...).
template <Element T>
TensorMapSpec make_tiled_spec(const void* base, const std::vector<std::int64_t>& shape,
                              const std::vector<std::int64_t>& strides,
                              const std::vector<std::int64_t>& box,
                              const DescriptorOptions& options = {}) {
  return make_tiled_spec(dtype_of<T>, base, shape, strides, box, options);
}

// Im2col-mode spec from a channels-last row-major description: `shape` is N,W,C / N,H,W,C /
// N,D,H,W,C (PyTorch's channels_last memory order), `strides` in elements (empty = contiguous),
// the corners one per spatial dimension outermost first (D,H,W; typically lower = -padding,
// upper = padding - (filter - 1) * dilation). Throws tma::Error like make_tiled_spec.
inline TensorMapSpec make_im2col_spec(
    DataType dtype, const void* base, const std::vector<std::int64_t>& shape,
    const std::vector<std::int64_t>& strides, const std::vector<int>& lower_corner,
    const std::vector<int>& upper_corner, std::uint32_t channels_per_pixel,
    std::uint32_t pixels_per_column, const DescriptorOptions& options = {}) {
  using detail::cat;
  const std::vector<std::int64_t> st = strides.empty() ? contiguous_strides(shape) : strides;
  detail::RowMajorChecker c{{}, shape.size()};
  if (shape.size() < 3 || shape.size() > std::size_t(kMaxRank)) {
    c.out.push_back({Rule::kRankRange, "shape", -1,
                     cat("shape has ", shape.size(),
                         " dimensions: an im2col tensor map has 3..5 (N,W,C / N,H,W,C / "
                         "N,D,H,W,C): add or merge dimensions")});
    detail::throw_if_any(c.out);
  }
  const std::size_t spatial = shape.size() - 2;
  c.sizes("strides", st.size(), "stride");
  for (const auto& [field, corner] :
       {std::pair{"lower_corner", &lower_corner}, std::pair{"upper_corner", &upper_corner}}) {
    if (corner->size() == spatial) continue;
    c.out.push_back({Rule::kBuilderRankMismatch, field, -1,
                     cat(field, " has ", corner->size(), corner->size() == 1 ? " value" : " values",
                         " but shape has ", spatial,
                         spatial == 1 ? " spatial dimension" : " spatial dimensions",
                         ": give one offset per spatial dimension, outermost first (D,H,W)")});
  }
  c.non_negative("shape", shape, "give each extent as a number of elements >= 1");
  c.non_negative("strides", st,
                 "TMA cannot step backwards through memory: copy the tensor contiguous first");

  TensorMapSpec s;
  s.mode = Mode::kIm2col;
  s.dtype = dtype;
  s.rank = static_cast<int>(shape.size());
  s.address = base;
  detail::convert_layout(dtype, shape, st, c, s);
  for (std::size_t i = 0; i < spatial; ++i) {
    if (lower_corner.size() == spatial) s.pixel_box_lower_corner[i] = lower_corner[spatial - 1 - i];
    if (upper_corner.size() == spatial) s.pixel_box_upper_corner[i] = upper_corner[spatial - 1 - i];
  }
  s.channels_per_pixel = channels_per_pixel;
  s.pixels_per_column = pixels_per_column;
  detail::convert_options(options, s.rank, c, s);
  detail::throw_if_any(c.out);
  return s;
}

}  // namespace tma
