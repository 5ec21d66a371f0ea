#!/usr/bin/env bash
# Builds and runs every test: the full build (CPU tests, package tests, and the GPU tests, which run
# on a GPU and skip with a printed reason elsewhere), then the CPU tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, then the repository checks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
source scripts/env.sh
build=${BUILD_DIR:-build}

echo "== configure + build ($build)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$TMAKIT_CUDA_FLAG"
cmake --build "$build" -j "$JOBS"

echo "== ctest ($build)"
ctest --test-dir "$build" --output-on-failure -j "$JOBS"

echo "== CPU tests under ASan + UBSan (build-sanitize)"
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTMAKIT_SANITIZE=ON \
  -DTMAKIT_BUILD_TOOLS=ON -DTMAKIT_BUILD_EXAMPLES=OFF
cmake --build build-sanitize -j "$JOBS" --target tmakit_cpu_tests
ctest --test-dir build-sanitize --output-on-failure -j "$JOBS" -L cpu

echo "== repository checks"
bash scripts/check_repo.sh
echo "== all tests passed"
