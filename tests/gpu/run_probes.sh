#!/usr/bin/env bash
# Runs the probes of a probe list (default tests/gpu/probes.txt), 8 at a time, each in its own
# process (a fault in one cannot hide or stop another), then prints one verdict per probe in file
# order, "LINE GROUP VERDICT ...", gpu_probe's dump lines indented under it, and a summary.
#   tests/gpu/run_probes.sh BUILD_DIR [PROBES_FILE] [GROUPS]
# GROUPS: comma-separated group names (a comment line "# D2: ..." starts group D2; its "# D2a:"
# subgroups belong to it), e.g. D2,H; default all. Exit status 0 once every probe has run
# (the verdicts are the result), 2 when gpu_probe is missing.
set -uo pipefail
build=$1
list=${2:-$(dirname "$0")/probes.txt}
groups=${3:-}
probe="$build/tests/gpu/gpu_probe"
if [ ! -x "$probe" ]; then
  echo "run_probes.sh: no $probe: build the gpu_probe target first" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "LINE GROUP ARGS..." for every probe line of the selected groups.
awk -v want=",$groups," '
  /^#[[:space:]]*[A-Z][0-9]*[a-z]?:/ {
    g = $0; sub(/^#[[:space:]]*/, "", g); sub(/:.*/, "", g); sub(/[a-z]+$/, "", g); group = g; next
  }
  /^[[:space:]]*(#|$)/ { next }
  { if (want == ",," || index(want, "," group ",") > 0) print NR, (group == "" ? "-" : group), $0 }
' "$list" > "$tmp/probes"

export PROBE="$probe" TMPD="$tmp"
# One process per probe; a hung probe is killed after 60 s (its verdict then says so).
xargs -P 8 -L 1 sh -c '
  n=$0; shift
  timeout 60 "$PROBE" "$@" > "$TMPD/$n.out" 2>&1
  echo $? > "$TMPD/$n.rc"
' < "$tmp/probes"

verdicts='^(PASS|MISMATCH|TIMEOUT|FAULT|INVALID|MODEL-ERROR|DRIVER-REJECT|ERROR|SKIP)'
while read -r n group _; do
  out="$tmp/$n.out"
  rc=$(cat "$tmp/$n.rc" 2>/dev/null || echo "?")
  verdict=$(grep -m1 -E "$verdicts" "$out")
  if [ -z "$verdict" ]; then
    last=$(tail -1 "$out")
    [ "$rc" = 124 ] && verdict="KILLED after 60 s: $last" || verdict="CRASH (exit $rc): $last"
  fi
  echo "$n $group $verdict"
  grep -v -x -F -e "$verdict" "$out" | sed 's/^/  /'
  word=${verdict%% *}
  echo "${word%:}" >> "$tmp/summary"
done < "$tmp/probes"

total=$(wc -l < "$tmp/probes")
printf 'summary: %s probes (%s%s):' "$total" "$list" "${groups:+, groups $groups}"
sort "$tmp/summary" 2>/dev/null | uniq -c | while read -r count word; do printf ' %s %s' "$count" "$word"; done
printf '\n'
exit 0
