// tmakit ops (internal): the ordinary path's kernels with every epilogue
// (gemm_kernels.hpp).
#include "gemm_kernels.cuh"

namespace tma::ops::detail::gemm {
template KernelFn kernel_for<false, false>(int, bool, MatrixMajor, MatrixMajor);
}  // namespace tma::ops::detail::gemm
