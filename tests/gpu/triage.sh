#!/usr/bin/env bash
# Triage of a failing GPU test program: which cases fail, and where a faulting kernel stops.
#   tests/gpu/triage.sh BUILD_DIR OUT_DIR SEED PROGRAM:CASES ...
# For each PROGRAM (e.g. gpu_load:96): compute-sanitizer memcheck on its --quick run (the first
# errors, with the kernel and PC of a fault), then every case 0..CASES-1 replayed alone with
# --only (8 at a time, each in its own process, so one fault cannot hide the others); a table of
# exit codes and each failing case's records land in OUT_DIR/PROGRAM/.
set -uo pipefail
build=$1 out=$2 seed=$3; shift 3
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for item in "$@"; do
  prog=${item%%:*} cases=${item##*:}
  dir="$out/$prog"; mkdir -p "$dir"
  timeout 120 "$san" --tool memcheck --print-limit 4 "$build/tests/gpu/$prog" --quick --seed "$seed" \
    --out "$dir/sanitizer" >"$dir/memcheck.log" 2>&1
  echo "[triage] $prog memcheck rc=$? ($(grep -c '^=========.*Error\|Invalid\|Illegal' "$dir/memcheck.log") error lines)"
  grep -m 12 -E "Error|Illegal|Invalid|at 0x|by thread|Kernel|kernel" "$dir/memcheck.log" | sed "s/^/[triage] $prog: /"
  seq 0 $((cases - 1)) | xargs -P 8 -I{} sh -c \
    "timeout 60 '$build/tests/gpu/$prog' --seed $seed --only {} --timeout 10 --out '$dir/case{}' >'$dir/case{}.log' 2>&1; echo {} \$?" \
    | sort -n >"$dir/rc.txt"
  echo "[triage] $prog per-case exit codes: $(awk '{print $2}' "$dir/rc.txt" | sort | uniq -c | tr '\n' ' ')"
done
