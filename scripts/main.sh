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
"$info"   # says plainly when there is no TMA-capable GPU, and why

if "$info" --json | grep -q '"tma": true'; then
  mkdir -p out
  echo "== tma-bench all -> out/bench.json"
  "$build/tools/tma_bench/tma-bench" all --json out/bench.json
  if python3 -c "import torch" 2>/dev/null; then
    echo "== torch peers -> out/bench.json"
    python3 bench/torch_peers.py out/bench.json
  fi
  # gemm-bench joins once its ordinary (cp.async) path stops hanging (docs/perf-log.md, GEMM).
else
  echo
  echo "== describe walk-through (no GPU needed)"
  run() { echo "\$ tma-info describe $*"; "$info" describe "$@" || echo "(exit code $?)"; echo; }
  run --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B
  run --dtype fp32 --dims 1000,1000 --box 32,32 --swizzle 128B
  run --dtype fp16 --dims 512,1001 --box 64,64
  run --dtype u8 --dims 8,64,64,32 --box 4,8,8,16 --elem-strides 1,2,2,1
fi
