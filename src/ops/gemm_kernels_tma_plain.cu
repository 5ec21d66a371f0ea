// tmakit ops (internal): the TMA path's plain kernels (D in the inputs' type, alpha 1, beta 0)
// (gemm_kernels.hpp).
#include "gemm_kernels.cuh"

namespace tma::ops::detail::gemm {
template KernelFn kernel_for<true, true>(int, bool, MatrixMajor, MatrixMajor);
}  // namespace tma::ops::detail::gemm
