// tmakit ops (internal): kernel_for's definition (gemm_kernels.hpp), included by the four
// gemm_kernels_*.cu files, each of which instantiates it for one (path, plain) pair and so
// compiles that pair's kernels.
#pragma once

#include "gemm_kernels.hpp"

namespace tma::ops::detail::gemm {

template <bool kTma, bool kPlain>
KernelFn kernel_for(int config, bool f16, MatrixMajor a, MatrixMajor b) {
  const auto with_majors = [&](auto cfg, auto is_f16) -> KernelFn {
    constexpr int kC = decltype(cfg)::value;
    constexpr bool kF = decltype(is_f16)::value;
    constexpr MatrixMajor K = MatrixMajor::kK, MN = MatrixMajor::kMN;
    // A TMA-only configuration has no ordinary-path kernel (check_args and the plan keep it
    // away).
    if constexpr (!kTma && ::tma::ops::gemm_config_tma_only(kGemmConfigs[kC])) {
      return nullptr;
    } else if constexpr (Config<kC>::kSwap) {
      // A swapped-operand configuration: the plain TMA kernels with both operands K-major only
      // (gemm_config_swap_supported; check_args and the plan keep the rest away).
      if constexpr (kPlain) {
        return a == K && b == K ? gemm_kernel<kC, kF, K, K, kPlain, kTma> : nullptr;
      } else {
        return nullptr;
      }
#ifdef TMA_GEMM_EXP_BF16_KK_ONLY
      // Experiment builds only (bench/experiments, -DTMA_GEMM_EXP_BF16_KK_ONLY): the bf16 kernels
      // with both operands K-major, what tma-bench gemm's default shapes run; minutes, not a
      // quarter of an hour. Every other choice has no kernel (launches refuse it).
    } else if constexpr (kF) {
      return nullptr;
    } else if constexpr (true) {
      (void)MN;
      return a == K && b == K ? gemm_kernel<kC, kF, K, K, kPlain, kTma> : nullptr;
#endif
    } else {
      if (a == K && b == K) return gemm_kernel<kC, kF, K, K, kPlain, kTma>;
      if (a == MN && b == K) return gemm_kernel<kC, kF, MN, K, kPlain, kTma>;
      // A row-box configuration has no MN-major B kernel (check_args and the plan keep it away).
      if constexpr (Config<kC>::kRowBoxB) {
        return nullptr;
      } else {
        if (a == K) return gemm_kernel<kC, kF, K, MN, kPlain, kTma>;
        return gemm_kernel<kC, kF, MN, MN, kPlain, kTma>;
      }
    }
  };
  const auto with_type = [&](auto cfg) {
    return f16 ? with_majors(cfg, std::true_type{}) : with_majors(cfg, std::false_type{});
  };
  return with_config(config, with_type);
}

}  // namespace tma::ops::detail::gemm
