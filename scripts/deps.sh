#!/usr/bin/env bash
# Installs what tmakit's build needs when it is missing (Debian/Ubuntu): a C++20 compiler, CMake,
# Ninja, GoogleTest. The CUDA toolkit (nvcc 12.8+ / 13.x) is expected on PATH or in /usr/local/cuda;
# without it only the CPU parts build, and the scripts say so.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev libgmock-dev)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  echo "[deps] installing: ${need[*]}"
  sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${need[@]}"
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "[deps] adding /usr/local/cuda/bin to PATH"
fi
# cuobjdump (with the nvdisasm it calls) reads the SASS for the build checks (TMA opcodes present,
# no local memory). Some toolkit installs lack them; NVIDIA publishes both on PyPI.
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ] && [ ! -x .tools/bin/nvdisasm ]; then
  echo "[deps] fetching cuobjdump and nvdisasm (PyPI: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) into .tools/"
  if python3 -m pip install -q --target .tools/pip nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >/dev/null 2>&1; then
    mkdir -p .tools/bin
    for tool in cuobjdump nvdisasm; do
      ln -sf "$(find "$PWD/.tools/pip" -name "$tool" -type f | head -1)" ".tools/bin/$tool"
    done
  else
    echo "[deps] could not fetch cuobjdump / nvdisasm: the SASS checks will be skipped"
  fi
fi
