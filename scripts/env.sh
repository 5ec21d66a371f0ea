# Sourced by the scripts: finds nvcc and picks the build flags.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null; then
  TMAKIT_CUDA_FLAG=-DTMAKIT_CUDA=ON
else
  echo "[tmakit] no nvcc found: building the CPU parts only (validator, model, tma-info describe)"
  TMAKIT_CUDA_FLAG=-DTMAKIT_CUDA=OFF
fi
[ -x .tools/bin/nvdisasm ] && export PATH=$PWD/.tools/bin:$PATH
JOBS=${JOBS:-$(nproc)}
