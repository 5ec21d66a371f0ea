// tma-bench: the tensor layouts of the benchmark cases and the facts about them every suite needs.
//
// A case's layouts are tma::ops::TensorView values with data == nullptr (row-major shape and
// strides in elements, torch's order); a suite binds them to buffers with with_data(). Every
// layout the bench makes is "nested": each stride covers the whole extent of the dimension inside
// it (strides[d] >= shape[d+1] * strides[d+1]), so an element offset inside the allocation maps
// back to exactly one index (index_of), which the verifier uses to tell view from padding.
// Plain C++: no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tma/host/types.hpp"
#include "tma/ops/tensor_view.hpp"

namespace tma::bench {

using ops::TensorView;

// Short dtype names used on the command line, in case names and in the JSON: u8 bf16 fp16 fp32.
std::string_view dtype_name(DataType t);
// The DataType of a short name (also accepts tma::to_string's long names); nullopt if unknown.
std::optional<DataType> parse_dtype(std::string_view name);

// Bytes of one element of `v`.
std::size_t element_size(const TensorView& v);
// Elements from the first to one past the last element of the view (padding inside included).
std::int64_t footprint_elements(const TensorView& v);
// footprint_elements in bytes: what a buffer for `v` must hold.
std::size_t footprint_bytes(const TensorView& v);
// Bytes of the elements themselves (numel * element size), without padding.
std::size_t logical_bytes(const TensorView& v);

// `v` pointing at `data`.
TensorView with_data(TensorView v, void* data);
// A layout (data == nullptr) with explicit row-major shape and strides in elements.
TensorView make_layout(DataType t, const std::vector<std::int64_t>& shape,
                       const std::vector<std::int64_t>& strides);
// A contiguous layout of `shape`.
TensorView contiguous_layout(DataType t, const std::vector<std::int64_t>& shape);
// A nested layout of `shape` whose rows (innermost dimension) start `row_pitch` elements apart
// and whose outer dimensions are packed around them.
TensorView pitched_layout(DataType t, const std::vector<std::int64_t>& shape,
                          std::int64_t row_pitch);
// The row pitch, in elements, for rows of `cols` elements plus `extra_bytes` of padding, rounded
// up to the 16 bytes TMA needs between rows.
std::int64_t row_pitch_for(DataType t, std::int64_t cols, std::int64_t extra_bytes = 0);

// True when every stride covers the extent of the dimension inside it and the innermost stride
// is 1 (see the file comment).
bool is_nested(const TensorView& v);
// The row-major index of the element at `offset` (elements from the base) of a nested layout,
// and whether it lies inside the view (false: padding).
struct IndexOf {
  std::vector<std::int64_t> index;
  bool inside = false;
};
IndexOf index_of(const TensorView& v, std::int64_t offset);

// `a` and `b` (same shape) with neighbouring dimensions merged wherever both are contiguous across
// them (strides[d] == shape[d+1] * strides[d+1] in both): the lowest rank that describes the same
// pair of layouts. A contiguous pair becomes rank 1.
struct MergedPair {
  TensorView a;
  TensorView b;
};
MergedPair merge_contiguous_dims(const TensorView& a, const TensorView& b);

// "4095x1999"; "[1,2,3]"-style lists for strides.
std::string shape_string(const TensorView& v);
std::string list_string(const std::int64_t* values, int count);
// Exact binary size for names: "1MiB", "4GiB", "1536KiB", "1000B".
std::string size_label(std::size_t bytes);
// Human size for tables: "1 MiB", "74.1 MiB", "4 GiB".
std::string size_human(std::size_t bytes);

}  // namespace tma::bench
