// tmakit ops: TensorView, how the ops take a tensor: pointer, element type, and a row-major shape
// and strides in elements (the order of torch's x.shape / x.stride()).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tma/config.hpp"
#include "tma/host/types.hpp"

namespace tma::ops {

struct TensorView {
  void* data = nullptr;
  DataType dtype = DataType::kUInt8;
  int rank = 0;                                // 1..5
  std::array<std::int64_t, kMaxRank> shape{};  // row-major: shape[rank-1] is the innermost
  std::array<std::int64_t, kMaxRank>
      strides{};  // in elements, row-major; strides[rank-1] must be 1

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= shape[i];
    return n;
  }
};

// A contiguous row-major view of `shape`.
inline TensorView contiguous(void* data, DataType dtype,
                             std::initializer_list<std::int64_t> shape) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.rank = static_cast<int>(shape.size());
  int i = 0;
  for (std::int64_t s : shape)
    v.shape[i++] = s;
  std::int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

}  // namespace tma::ops
