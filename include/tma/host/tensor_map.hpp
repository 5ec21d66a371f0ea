// tmakit: the encoded TMA descriptor (TensorMap) and the one path from a TensorMapSpec to it.
//
// make_tensor_map() validates first and throws tma::Error listing every broken rule without
// calling the driver; only a spec the validator accepts reaches cuTensorMapEncodeTiled /
// cuTensorMapEncodeIm2col. The driver functions come from cudaGetDriverEntryPointByVersion, so
// libcuda is never linked (TMA-RULES.md, "Encoding"); only the CUDA runtime is.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>

#include "tma/config.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/types.hpp"
#include "tma/host/validate.hpp"

namespace tma {

// The 128-byte descriptor TMA reads. Pass it to kernels as `const __grid_constant__ TensorMap`
// (or keep it in global memory) and hand its address to the copy functions.
//
// Aligned to 64 B, what the driver documents for the tensorMap argument. CUDA 13's cuda.h
// declares CUtensorMap alignas(128) (CUDA 12 used 64), so the driver writes into a local
// CUtensorMap and the bytes are copied here: a TensorMap is never reinterpreted as a CUtensorMap.
struct alignas(64) TensorMap {
  std::byte bytes[128];
};
static_assert(sizeof(TensorMap) == 128, "a TMA descriptor is 128 bytes (CU_TENSOR_MAP_NUM_QWORDS)");
static_assert(sizeof(TensorMap) == sizeof(CUtensorMap),
              "TensorMap must hold exactly one CUtensorMap (128 bytes)");
static_assert(alignof(TensorMap) == 64 && alignof(CUtensorMap) % alignof(TensorMap) == 0,
              "TensorMap needs the driver's documented 64-byte alignment, which CUtensorMap's "
              "alignment (64 in CUDA 12, 128 in CUDA 13) is a multiple of");

// Our enums are the driver's, value for value: encoding is a cast.
static_assert(int(DataType::kUInt8) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
static_assert(int(DataType::kUInt16) == CU_TENSOR_MAP_DATA_TYPE_UINT16);
static_assert(int(DataType::kUInt32) == CU_TENSOR_MAP_DATA_TYPE_UINT32);
static_assert(int(DataType::kInt32) == CU_TENSOR_MAP_DATA_TYPE_INT32);
static_assert(int(DataType::kUInt64) == CU_TENSOR_MAP_DATA_TYPE_UINT64);
static_assert(int(DataType::kInt64) == CU_TENSOR_MAP_DATA_TYPE_INT64);
static_assert(int(DataType::kFloat16) == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
static_assert(int(DataType::kFloat32) == CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
static_assert(int(DataType::kFloat64) == CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
static_assert(int(DataType::kBFloat16) == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(int(DataType::kFloat32Ftz) == CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ);
static_assert(int(DataType::kTFloat32) == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
static_assert(int(DataType::kTFloat32Ftz) == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ);
static_assert(int(DataType::k16U4Align8B) == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B);
static_assert(int(DataType::k16U4Align16B) == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B);
static_assert(int(DataType::k16U6Align16B) == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
static_assert(int(Interleave::kNone) == CU_TENSOR_MAP_INTERLEAVE_NONE);
static_assert(int(Interleave::k16B) == CU_TENSOR_MAP_INTERLEAVE_16B);
static_assert(int(Interleave::k32B) == CU_TENSOR_MAP_INTERLEAVE_32B);
static_assert(int(Swizzle::kNone) == CU_TENSOR_MAP_SWIZZLE_NONE);
static_assert(int(Swizzle::k32B) == CU_TENSOR_MAP_SWIZZLE_32B);
static_assert(int(Swizzle::k64B) == CU_TENSOR_MAP_SWIZZLE_64B);
static_assert(int(Swizzle::k128B) == CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(int(Swizzle::k128BAtom32B) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B);
static_assert(int(Swizzle::k128BAtom32BFlip8B) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B);
static_assert(int(Swizzle::k128BAtom64B) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
static_assert(int(L2Promotion::kNone) == CU_TENSOR_MAP_L2_PROMOTION_NONE);
static_assert(int(L2Promotion::k64B) == CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
static_assert(int(L2Promotion::k128B) == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
static_assert(int(L2Promotion::k256B) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
static_assert(int(OobFill::kZero) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
static_assert(int(OobFill::kNan) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);

namespace detail {

// The driver functions tmakit calls, found once per process.
struct DriverApi {
  PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = nullptr;
  PFN_cuTensorMapEncodeIm2col_v12000 encode_im2col = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_current = nullptr;
  std::string problem;  // why a function is missing; empty when all were found
};

// The tensor-map functions appeared in CUDA 12.0; asking for that version returns their 12.0 ABI
// from any newer driver.
inline constexpr unsigned kDriverApiVersion = 12000;

inline std::string runtime_error_text(cudaError_t e) {
  return cat(cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

template <class Fn>
std::string find_driver_function(const char* symbol, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, kDriverApiVersion, cudaEnableDefault, &found);
  if (e != cudaSuccess) {
    return cat("cudaGetDriverEntryPointByVersion(\"", symbol, "\", ", kDriverApiVersion,
               ") failed with ", runtime_error_text(e),
               " (is an NVIDIA driver installed and a GPU visible? try tma-info)");
  }
  if (p == nullptr || found != cudaDriverEntryPointSuccess) {
    return cat("the driver has no ", symbol, " for CUDA ", kDriverApiVersion / 1000,
               ".0 (update the NVIDIA driver to a CUDA 12 or newer one)");
  }
  fn = reinterpret_cast<Fn>(p);
  return {};
}

// Found on first use and kept for the process (a function-local static: immutable after its
// thread-safe initialisation). A failed lookup stays failed: the driver does not appear later.
inline const DriverApi& driver_api() {
  static const DriverApi api = [] {
    const cudaError_t before = cudaPeekAtLastError();
    DriverApi a;
    for (std::string problem : {find_driver_function("cuTensorMapEncodeTiled", a.encode_tiled),
                                find_driver_function("cuTensorMapEncodeIm2col", a.encode_im2col),
                                find_driver_function("cuGetErrorName", a.error_name),
                                find_driver_function("cuCtxGetCurrent", a.ctx_current)}) {
      if (!problem.empty() && a.problem.empty()) a.problem = std::move(problem);
    }
    // Leave the runtime's last error as the caller had it: clear only what the lookup set.
    if (before == cudaSuccess) (void)cudaGetLastError();
    return a;
  }();
  return api;
}

// "CUDA_ERROR_INVALID_VALUE" for a CUresult, or "CUresult 1" when the driver cannot say.
inline std::string driver_error_name(int code) {
  const char* name = nullptr;
  const DriverApi& api = driver_api();
  if (api.error_name != nullptr &&
      api.error_name(static_cast<CUresult>(code), &name) == CUDA_SUCCESS && name != nullptr) {
    return name;
  }
  return cat("CUresult ", code);
}

// What to say about a runtime error that was pending before encoding.
inline std::string pending_note(cudaError_t pending) {
  if (pending == cudaSuccess) return "no CUDA error was pending before encoding";
  return cat("an earlier CUDA error (", runtime_error_text(pending),
             ") was pending before encoding; the descriptor may be fine: find the failing kernel "
             "first (CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer)");
}

}  // namespace detail

// Raw driver call without validation, for the validator-vs-driver sweep: returns the CUresult of
// cuTensorMapEncodeTiled / Im2col (CUDA_SUCCESS = 0). `out` may be null. Makes the current
// device's primary context current first (the driver needs one). Returns
// CUDA_ERROR_NOT_FOUND when the driver function cannot be obtained, and CUDA_ERROR_INVALID_VALUE
// without calling the driver for a rank outside 0..8 (its arrays are padded to 8 entries so that
// ranks the driver rejects are still safe to pass). Enum fields are passed as they are, in range
// or not.
inline int encode_unchecked(const TensorMapSpec& s, TensorMap* out) {
  constexpr int kPad = 8;
  const detail::DriverApi& api = detail::driver_api();
  if (!is_valid(s.mode)) return CUDA_ERROR_INVALID_VALUE;  // no driver function to pass it to
  if (s.mode == Mode::kTiled ? api.encode_tiled == nullptr : api.encode_im2col == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  if (s.rank < 0 || s.rank > kPad) return CUDA_ERROR_INVALID_VALUE;
  std::array<cuuint64_t, kPad> dims{}, strides{};
  std::array<cuuint32_t, kPad> box{}, element_strides{};
  std::array<int, kPad> lower{}, upper{};
  for (int i = 0; i < kMaxRank; ++i) {
    dims[i] = s.dims_inner_first[i];
    strides[i] = s.strides_bytes_inner_first[i];
    box[i] = s.box_inner_first[i];
    element_strides[i] = s.element_strides_inner_first[i];
  }
  for (int i = 0; i < 3; ++i) {
    lower[i] = s.pixel_box_lower_corner[i];
    upper[i] = s.pixel_box_upper_corner[i];
  }
  // The driver encodes only into a current context: without one it returns
  // CUDA_ERROR_INVALID_CONTEXT (seen on an H200 with driver 580). cudaFree(nullptr) makes the
  // runtime's primary context of the current device current, as any kernel launch would. Only
  // when no context is current: while a stream is being captured in cudaStreamCaptureModeGlobal,
  // cudaFree is a forbidden call that invalidates the capture (session 24: a GEMM launched into a
  // graph failed with cudaErrorStreamCaptureInvalidated), and a capture always has a context.
  CUcontext current = nullptr;
  if (api.ctx_current == nullptr || api.ctx_current(&current) != CUDA_SUCCESS || current == nullptr)
    (void)cudaFree(nullptr);
  CUtensorMap map{};
  const auto dtype = static_cast<CUtensorMapDataType>(s.dtype);
  const auto interleave = static_cast<CUtensorMapInterleave>(s.interleave);
  const auto swizzle = static_cast<CUtensorMapSwizzle>(s.swizzle);
  const auto l2 = static_cast<CUtensorMapL2promotion>(s.l2_promotion);
  const auto oob = static_cast<CUtensorMapFloatOOBfill>(s.oob_fill);
  // globalStrides omits dimension 0: the driver takes rank - 1 strides, starting at dimension 1.
  const CUresult r =
      s.mode == Mode::kTiled
          ? api.encode_tiled(&map, dtype, static_cast<cuuint32_t>(s.rank),
                             const_cast<void*>(s.address), dims.data(), strides.data() + 1,
                             box.data(), element_strides.data(), interleave, swizzle, l2, oob)
          : api.encode_im2col(&map, dtype, static_cast<cuuint32_t>(s.rank),
                              const_cast<void*>(s.address), dims.data(), strides.data() + 1,
                              lower.data(), upper.data(), s.channels_per_pixel, s.pixels_per_column,
                              element_strides.data(), interleave, swizzle, l2, oob);
  if (r == CUDA_SUCCESS && out != nullptr) std::memcpy(out->bytes, &map, sizeof(map));
  return static_cast<int>(r);
}

// Validates `spec` for `limits` and encodes it. Throws tma::Error: with every violation (the
// driver is not called) when the spec breaks a rule; with the CUresult, the whole spec and
// whether an earlier CUDA error was pending when the driver rejects it or cannot be reached.
inline TensorMap make_tensor_map(const TensorMapSpec& spec, const Limits& limits) {
  check(spec, limits);
  // The driver lookup first: without a driver, the runtime's "last error" is its own failure to
  // start, which is no earlier kernel's fault and must not be reported as one.
  const detail::DriverApi& api = detail::driver_api();
  if (!api.problem.empty()) {
    throw Error(
        detail::cat("cannot encode a tensor map: ", api.problem, "; spec: ", to_string(spec)), 0);
  }
  const cudaError_t pending = cudaPeekAtLastError();
  TensorMap map{};
  const int r = encode_unchecked(spec, &map);
  if (r != CUDA_SUCCESS) {
    const char* fn =
        spec.mode == Mode::kTiled ? "cuTensorMapEncodeTiled" : "cuTensorMapEncodeIm2col";
    throw Error(
        detail::cat(fn, " returned ", r, " (", detail::driver_error_name(r),
                    ") for a spec tmakit's validator accepts; ", detail::pending_note(pending),
                    pending == cudaSuccess && r == CUDA_ERROR_INVALID_VALUE
                        ? " (so the driver has a rule tmakit lacks: please report it)"
                        : "",
                    "; spec: ", to_string(spec)),
        r, static_cast<int>(pending));
  }
  return map;
}

// Validates `spec` for Hopper (Limits::hopper()) and encodes it; see the overload with limits.
inline TensorMap make_tensor_map(const TensorMapSpec& spec) {
  return make_tensor_map(spec, Limits::hopper());
}

}  // namespace tma
