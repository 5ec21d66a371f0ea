#!/usr/bin/env bash
# The main job. Builds tmakit, then:
#   on a GPU machine: tma-info (device and TMA support) and the benchmarks, results under out/
#                     (bench.json: tma-bench all + torch; gemm.json: tma-bench gemm + torch/Triton);
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
  # GEMM runs apart from `all` (TFLOP/s, not GB/s) and bounded: its ordinary (cp.async) path
  # has hung before (docs/perf-log.md), and a hung kernel cannot be stopped from inside the
  # process. tma-bench logs each step before launching it and rewrites the JSON after every
  # case, so a timeout still leaves the finished cases and says where it stopped.
  echo "== tma-bench gemm -> out/gemm.json"
  gemm_rc=0
  timeout -k 10 "${GEMM_TIMEOUT:-600}" "$build/tools/tma_bench/tma-bench" gemm \
    --json out/gemm.json || gemm_rc=$?
  [ "$gemm_rc" -eq 0 ] || echo "tma-bench gemm: exit $gemm_rc (124: timed out after ${GEMM_TIMEOUT:-600} s)"
  if python3 -c "import torch" 2>/dev/null; then
    echo "== torch peers -> out/bench.json"
    python3 bench/torch_peers.py out/bench.json || [ $? -eq 77 ]  # 77: no CUDA for torch
    if [ -s out/gemm.json ]; then
      echo "== torch + Triton peers -> out/gemm.json"
      python3 bench/torch_peers.py out/gemm.json || [ $? -eq 77 ]
    fi
  fi
  # A GEMM failure or timeout fails the job, after the peers have run on what it finished.
  if [ "$gemm_rc" -ne 0 ]; then exit "$gemm_rc"; fi
else
  echo
  echo "== describe walk-through (no GPU needed)"
  run() { echo "\$ tma-info describe $*"; "$info" describe "$@" || echo "(exit code $?)"; echo; }
  run --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B
  run --dtype fp32 --dims 1000,1000 --box 32,32 --swizzle 128B
  run --dtype fp16 --dims 512,1001 --box 64,64
  run --dtype u8 --dims 8,64,64,32 --box 4,8,8,16 --elem-strides 1,2,2,1
fi
