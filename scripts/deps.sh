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
