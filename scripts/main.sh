#!/usr/bin/env bash
# The main job. Builds tmakit, then:
#   on a GPU machine: tma-info (device and TMA support) and the benchmarks, results under out/;
#   without a GPU:    tma-info, and a walk-through of `tma-info describe` on good and bad specs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
source scripts/env.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$TMAKIT_CUDA_FLAG" >/dev/null
cmake --build "$build" -j "$JOBS"
info="$build/tools/tma-info"

echo "== tma-info"
"$info" || true   # exits non-zero when there is no TMA-capable GPU; it says why

if "$info" --json >/dev/null 2>&1; then
  mkdir -p out
  if [ -x "$build/tools/tma-bench" ]; then
    echo "== tma-bench (all suites) -> out/bench.json"
    "$build/tools/tma-bench" --json out/bench.json
  else
    echo "(tma-bench is not built yet: no benchmarks to run)"
  fi
else
  echo
  echo "== describe walk-through (no GPU needed)"
  run() { echo "\$ tma-info describe $*"; "$info" describe "$@" || echo "(exit code $?)"; echo; }
  run --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B
  run --dtype fp32 --dims 1000,1000 --box 32,32 --swizzle 128B
  run --dtype fp16 --dims 512,1001 --box 64,64
  run --dtype u8 --dims 8,64,64,32 --box 4,8,8,16 --elem-strides 1,2,2,1
fi
