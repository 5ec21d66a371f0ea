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
# cuobjdump reads the SASS for the build checks (TMA opcodes present, no local memory). Some
# toolkit installs lack it; NVIDIA publishes it on PyPI.
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ] && [ ! -x .tools/bin/cuobjdump ]; then
  echo "[deps] fetching cuobjdump (PyPI: nvidia-cuda-cuobjdump) into .tools/"
  if python3 -m pip install -q --target .tools/pip nvidia-cuda-cuobjdump >/dev/null 2>&1; then
    mkdir -p .tools/bin && ln -sf "$(find "$PWD/.tools/pip" -name cuobjdump -type f | head -1)" .tools/bin/cuobjdump
  else
    echo "[deps] could not fetch cuobjdump: the SASS checks will be skipped"
  fi
fi
