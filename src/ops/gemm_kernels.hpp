// tmakit ops (internal): the GEMM kernels' instances as the host sees them. The instances compile
// in four translation units (gemm_kernels_{tma,tma_plain,ordinary,ordinary_plain}.cu, each
// including gemm_kernels.cuh), so that a parallel build compiles them side by side and each
// kernel is instantiated in exactly one of them; gemm.cu asks kernel_for.
#pragma once

#include <type_traits>
#include <utility>

#include "gemm_kernel.cuh"  // Params, MatrixMajor, TensorMap; the kernel template (not instantiated)
#include "tma/host/tensor_map.hpp"

namespace tma::ops::detail::gemm {

// Every kernel instance has this signature (the maps are __grid_constant__ by value).
using KernelFn = void (*)(TensorMap, TensorMap, TensorMap, TensorMap, TensorMap, TensorMap, Params);

// f(std::integral_constant<int, config>{}) for a run-time config in 0 .. kNumGemmConfigs - 1 (a
// value-initialized result outside it; check_args rejects such a config first): one instance per
// configuration of kGemmConfigs, none listed by hand.
template <class F, int... kC>
auto with_config(int config, F&& f, std::integer_sequence<int, kC...>) {
  decltype(f(std::integral_constant<int, 0>{})) r{};
  (void)((config == kC ? (r = f(std::integral_constant<int, kC>{}), true) : false) || ...);
  return r;
}
template <class F>
auto with_config(int config, F&& f) {
  return with_config(config, f, std::make_integer_sequence<int, kNumGemmConfigs>{});
}

// Run-time choices -> one of the compiled kernels (null where none exists: a TMA-only
// configuration on the ordinary path, a row-box configuration with an MN-major B; check_args and
// the plan keep those away). kTma: the path; kPlain: D in the inputs' type with alpha 1 and beta 0
// (gemm_kernel.cuh: gemm_kernel). Defined in gemm_kernels.cuh, instantiated once per pair.
template <bool kTma, bool kPlain>
KernelFn kernel_for(int config, bool f16, MatrixMajor a, MatrixMajor b);

extern template KernelFn kernel_for<true, false>(int, bool, MatrixMajor, MatrixMajor);
extern template KernelFn kernel_for<true, true>(int, bool, MatrixMajor, MatrixMajor);
extern template KernelFn kernel_for<false, false>(int, bool, MatrixMajor, MatrixMajor);
extern template KernelFn kernel_for<false, true>(int, bool, MatrixMajor, MatrixMajor);

}  // namespace tma::ops::detail::gemm
