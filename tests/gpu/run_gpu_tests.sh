#!/usr/bin/env bash
# Runs tmakit's GPU test suite on a machine with a Hopper GPU and prints one summary table.
#
#   tests/gpu/run_gpu_tests.sh BUILD_DIR [--quick] [--seed N] [--no-sanitizers] [--no-examples]
#                              [--pack FILE]
#
#   1. every GPU test program at full size (--quick: the sanitizer-sized counts);
#   2. the same programs with --quick under compute-sanitizer memcheck, racecheck and synccheck
#      (--error-exitcode 1);
#   3. the example binaries found under BUILD_DIR/examples, then any other CTest test labelled gpu;
#   4. an observation that never fails the suite: gpu_store --negative-coords (tensor stores at
#      negative start coordinates, which the PTX ISA leaves undefined).
# Logs and JSONL records go to $TMAKIT_GPU_OUT (default ./gpu-out): full/, memcheck/, racecheck/,
# synccheck/, examples/, observe/, plus summary.txt. --pack FILE also writes them all into one
# .tar.gz (handy where only a few files can be carried back). Every program gets the same seed
# (printed; default from the clock): rerun one with `BUILD_DIR/tests/gpu/gpu_load --seed N`, or a
# single case with `--only I`. Exit status: 0 when nothing failed (skips are not failures).
set -uo pipefail

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

build=""
quick=0
sanitizers=1
examples=1
pack=""
seed=$(( $(date +%s) % 1000000007 ))
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --seed) seed=$2; shift ;;
    --no-sanitizers) sanitizers=0 ;;
    --no-examples) examples=0 ;;
    --pack) pack=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
if [ -z "$build" ] || [ ! -d "$build" ]; then
  echo "run_gpu_tests.sh: give the build directory (the one cmake configured) as the argument" >&2
  usage >&2
  exit 2
fi
build=$(cd "$build" && pwd)
out=${TMAKIT_GPU_OUT:-$PWD/gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin="$build/tests/gpu"
tests=(gpu_encode gpu_load gpu_store gpu_multicast gpu_im2col gpu_descriptor gpu_pipeline gpu_bulk)
other_filter='^(gpu_(encode|load|store|multicast|im2col|descriptor|pipeline|bulk)|example_.*)$'

sanitizer=""
for c in compute-sanitizer /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  if command -v "$c" >/dev/null 2>&1; then sanitizer=$(command -v "$c"); break; fi
done

echo "[gpu] seed $seed; build $build; output $out"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | sed 's/^/[gpu] GPU: /'

rows=()        # "label|mode|result|seconds|counts"
failed=0
passed=0
skipped=0

# run LABEL MODE OBSERVE(0/1) TIMEOUT_S LOGFILE CMD...
run() {
  local label=$1 mode=$2 observe=$3 limit=$4 log=$5
  shift 5
  mkdir -p "$(dirname "$log")"
  local t0=$SECONDS rc result counts
  echo "[gpu] >>> $label ($mode): $*"
  timeout --signal=KILL "$limit" "$@" >"$log" 2>&1
  rc=$?
  grep -E '^\[gpu\]' "$log" | sed 's/^/    /' | tail -n 25
  case $rc in
    0) result=PASS ;;
    77) result=SKIP ;;
    124|137) result=TIMEOUT ;;
    *) result="FAIL($rc)" ;;
  esac
  # The sanitizers' own verdict line, when there is one.
  if [ "$mode" != full ] && [ "$mode" != example ] && [ "$mode" != observe ]; then
    local san
    san=$(grep -E '========= (ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)' "$log" | tail -n 1 | sed 's/=* *//')
    [ -n "$san" ] && echo "    $san"
  fi
  counts=$(grep -E '^\[gpu\] .*(descriptors|tiles|mismatches)|tests passed|tests failed' "$log" | tail -n 1 | sed -E 's/^\[gpu\] [^:]*: //' | cut -c1-90)
  [ -z "$counts" ] && counts=$(tail -n 1 "$log" | cut -c1-90)
  if [ "$observe" = 1 ]; then
    result="$result(info)"
  else
    case $result in
      PASS) passed=$((passed + 1)) ;;
      SKIP) skipped=$((skipped + 1)) ;;
      *) failed=$((failed + 1)); echo "    -> $result: see $log" ;;
    esac
  fi
  rows+=("$label|$mode|$result|$((SECONDS - t0))|$counts")
}

# 1. The programs at full size (or quick).
size_args=()
[ $quick = 1 ] && size_args=(--quick)
for t in "${tests[@]}"; do
  if [ ! -x "$bin/$t" ]; then
    rows+=("$t|full|MISSING|0|not built: cmake --build $build --target $t")
    failed=$((failed + 1))
    continue
  fi
  run "$t" full 0 900 "$out/full/$t.log" \
    "$bin/$t" --seed "$seed" --out "$out/full" "${size_args[@]}"
done

# 2. Under compute-sanitizer, sanitizer-sized.
if [ $sanitizers = 1 ]; then
  if [ -z "$sanitizer" ]; then
    rows+=("compute-sanitizer|-|MISSING|0|not found on PATH or in /usr/local/cuda")
    failed=$((failed + 1))
  else
    for tool in memcheck racecheck synccheck; do
      for t in "${tests[@]}"; do
        [ -x "$bin/$t" ] || continue
        # gpu_encode launches no kernel worth checking; it still runs, quickly. It hands the
        # driver invalid specs on purpose (validator against driver), so the API errors it
        # provokes are its subject, not a finding: memcheck must not count them.
        api=()
        [ "$t" = gpu_encode ] && api=(--report-api-errors no)
        run "$t" "$tool" 0 1200 "$out/$tool/$t.log" \
          "$sanitizer" --tool "$tool" "${api[@]}" --error-exitcode 1 \
          "$bin/$t" --quick --seed "$seed" --timeout 600 --out "$out/$tool"
      done
    done
  fi
fi

# 3. The examples (whatever was built under BUILD_DIR/examples).
if [ $examples = 1 ] && [ -d "$build/examples" ]; then
  while IFS= read -r ex; do
    run "$(basename "$ex")" example 0 300 "$out/examples/$(basename "$ex").log" "$ex"
  done < <(find "$build/examples" -type f -perm -u+x -not -path '*/CMakeFiles/*' | sort)
fi

# 3b. Any other CTest test labelled gpu (e.g. the ops' tests), in one row.
others=$(ctest --test-dir "$build" -N -L gpu -E "$other_filter" 2>/dev/null | grep -c 'Test *#' || true)
if [ "${others:-0}" -gt 0 ]; then
  run "ctest -L gpu (others)" ctest 0 1200 "$out/ctest/others.log" \
    ctest --test-dir "$build" -L gpu -E "$other_filter" --output-on-failure
fi

# 4. Observations: recorded, never failing the suite.
if [ -x "$bin/gpu_store" ]; then
  run gpu_store_negative_coords observe 1 600 "$out/observe/gpu_store_negative_coords.log" \
    "$bin/gpu_store" --negative-coords --seed "$seed" --out "$out/observe" "${size_args[@]}" --count 1500
fi

# Summary.
{
  echo
  printf '%-28s %-10s %-12s %6s  %s\n' TEST MODE RESULT SECONDS COUNTS
  for r in "${rows[@]}"; do
    IFS='|' read -r label mode result secs counts <<<"$r"
    printf '%-28s %-10s %-12s %6s  %s\n' "$label" "$mode" "$result" "$secs" "$counts"
  done
  echo
  echo "seed $seed: repeat any line with BUILD_DIR/tests/gpu/<test> --seed $seed [--quick] [--only CASE]"
  echo "records: $out/<mode>/*.jsonl (one JSON object per line: kind run / mismatch / timeout / ...)"
  echo "$passed passed, $failed failed, $skipped skipped"
} | tee "$out/summary.txt"

if [ -n "$pack" ]; then
  tar -czf "$pack" -C "$(dirname "$out")" "$(basename "$out")" && echo "[gpu] packed $out into $pack"
fi
[ $failed -eq 0 ]
