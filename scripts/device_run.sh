#!/usr/bin/env bash
# One call on a lent GPU machine, with the build folder carried from the build machine:
#   scripts/device_run.sh BUILD_DIR STEPS...     (results and logs under $OUT, default out/device)
# Steps: info (GPU, clocks, driver, tma-info), suite (tests/gpu/run_gpu_tests.sh, no sanitizers),
# sanitize (the suite's --quick runs under compute-sanitizer), ops (gpu_ops byte-exact test),
# bench (tma-bench all: copy, transpose, copy-tune; then the torch peers into the same JSON),
# gemm (tests/gemm/gpu_gemm, then `tma-bench gemm` into gemm.json, then the torch / Triton peers
# into it), clocks (CLOCK_ROUNDS, default 3, alternating rounds of the README's gemm run without and
# with `--clock-probe`, the SM clock probed around every timed launch, into clocks/: the clocks
# tabulated by bench/clock_probe.py, both kinds of round compared by bench/ab_compare.py), overhead
# (bench/experiments/gemm_overhead for OVERHEAD_CONFIGS, default 0 1 2).
# Each step's log is kept; the script's exit status is the number of failed steps.
# gemm's test is bounded by GEMM_TEST_TIMEOUT seconds (default 300), its benchmark by
# GEMM_BENCH_TIMEOUT seconds (default 420): a hung GEMM kernel
# cannot be stopped from inside tma-bench, whose log names the step it hung in and whose JSON
# (rewritten after every case) keeps the cases it finished. GEMM_BENCH_ARGS adds options, e.g.
# "--quick", "--no-ordinary", "--sweep", "--layout cc".
set -uo pipefail
build=${1:?give the build directory}; shift
out=${OUT:-out/device}
mkdir -p "$out"
# CTest files hold absolute paths of the build machine's checkout; point that path here.
src_root=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src_root" ] && [ ! -e "$src_root" ]; then mkdir -p "$(dirname "$src_root")" && ln -s "$PWD" "$src_root"; fi
build_root=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$build_root" ] && [ ! -e "$build_root" ]; then mkdir -p "$(dirname "$build_root")" && ln -s "$PWD/$build" "$build_root"; fi

failed=0
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, prints a one-line verdict
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed=$((failed + 1))
  printf '[device] %-10s rc=%-3s %4ss  (%s)\n' "$name" "$rc" "$((SECONDS - t0))" "$*"
  tail -n 25 "$out/$name.log" | sed "s/^/[$name] /"
}

for s in "$@"; do
  case "$s" in
    info)
      step info bash -c "nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv; nvcc --version | tail -2; $build/tools/tma-info" ;;
    suite)
      step suite env TMAKIT_GPU_OUT=/tmp/gpu-out tests/gpu/run_gpu_tests.sh "$build" --no-sanitizers --pack "$out/gpu-results.tar.gz" ;;
    sanitize)
      step sanitize env TMAKIT_GPU_OUT=/tmp/gpu-san tests/gpu/run_gpu_tests.sh "$build" --quick --no-examples --pack "$out/gpu-sanitize.tar.gz" ;;
    ops)
      step ops "$build/tests/ops/gpu_ops" ;;
    bench)
      step bench "$build/tools/tma_bench/tma-bench" all --json "$out/bench.json"
      step torch python3 bench/torch_peers.py "$out/bench.json" ;;
    probes)
      step probes tests/gpu/run_probes.sh "$build" ;;
    triage)
      step triage tests/gpu/triage.sh "$build" /tmp/triage "${TRIAGE_SEED:-795300422}" gpu_load:96 gpu_im2col:48 gpu_multicast:48 gpu_store:64 gpu_descriptor:4
      tar czf "$out/triage.tar.gz" -C /tmp triage ;;
    gemm)
      step gemm timeout -k 10 "${GEMM_TEST_TIMEOUT:-300}" "$build/tests/gemm/gpu_gemm"
      # shellcheck disable=SC2086  # GEMM_BENCH_ARGS is a list of options
      step gemmbench timeout -k 10 "${GEMM_BENCH_TIMEOUT:-420}" \
        "$build/tools/tma_bench/tma-bench" gemm ${GEMM_BENCH_ARGS:-} --json "$out/gemm.json"
      if [ -s "$out/gemm.json" ]; then
        step gemmpeers python3 bench/torch_peers.py "$out/gemm.json"
      fi ;;
    clocks)
      # CLOCK_ROUNDS (default 3) alternating rounds: the README's gemm run plain, then with the
      # probe (one seed per round for both), into $out/clocks/{plain,clocks}-rN.json; then the
      # clocks of every probed round (bench/clock_probe.py) and both kinds of round against
      # cuBLASLt (bench/ab_compare.py: how far the probes move the ratios).
      mkdir -p "$out/clocks"
      for r in $(seq 1 "${CLOCK_ROUNDS:-3}"); do
        for kind in plain clocks; do
          probe=(); [ $kind = clocks ] && probe=(--clock-probe)
          # shellcheck disable=SC2086  # GEMM_BENCH_ARGS is a list of options
          step "$kind-r$r" timeout -k 10 "${GEMM_BENCH_TIMEOUT:-420}" \
            "$build/tools/tma_bench/tma-bench" gemm ${probe[@]+"${probe[@]}"} --seed "$r" ${GEMM_BENCH_ARGS:-} \
            --json "$out/clocks/$kind-r$r.json"
        done
      done
      step clocktable python3 bench/clock_probe.py "$out"/clocks/clocks-r*.json
      step clockab python3 bench/ab_compare.py "$out/clocks" --order plain,clocks ;;
    overhead)
      # The per-tile overhead of each configuration (bench/experiments/gemm_overhead.cu).
      for config in ${OVERHEAD_CONFIGS:-0 1 2}; do
        step "overhead$config" timeout -k 5 60 "$build/bench/experiments/gemm_overhead" 20 "$config"
      done ;;
    *) echo "unknown step $s" >&2; failed=$((failed + 1)) ;;
  esac
done
exit $failed
