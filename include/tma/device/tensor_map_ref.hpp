// tmakit device/: how device code names a tensor map.
//
// Device functions take `const TensorMap*`: the address of a `const __grid_constant__ TensorMap`
// kernel parameter, or of a descriptor in global memory (descriptor.hpp). Only the pointer is
// needed here, so this declares the type and leaves its definition (struct alignas(64) TensorMap
// { std::byte bytes[128]; }) to host/tensor_map.hpp, which also encodes it.
#pragma once

#include "tma/config.hpp"

namespace tma {

struct TensorMap;

namespace detail {
// Size of a tensor map (CUtensorMap, CU_TENSOR_MAP_NUM_QWORDS * 8); device code copies it as bytes.
inline constexpr int kTensorMapBytes = 128;
}  // namespace detail

}  // namespace tma
