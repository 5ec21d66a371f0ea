#!/usr/bin/env bash
# Runs every probe of a probe list (default tests/gpu/probes.txt), 8 at a time, each in its own
# process (a fault in one cannot hide another), and prints one verdict line per probe in order.
#   tests/gpu/run_probes.sh BUILD_DIR [PROBES_FILE]
set -uo pipefail
build=$1 list=${2:-$(dirname "$0")/probes.txt}
grep -v '^#' "$list" | grep -v '^\s*$' | nl -ba -w3 -s' ' |
  xargs -P 8 -L 1 sh -c 'n=$0; out=$(timeout 30 "'"$build"'/tests/gpu/gpu_probe" "$@" 2>&1 | tail -1); echo "$n $out"' |
  sort -n
