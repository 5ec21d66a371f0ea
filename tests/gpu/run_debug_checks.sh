#!/usr/bin/env bash
# Runs gpu_debug_checks once per mode (a trap ends the process's CUDA context) and checks that
# each broken precondition printed its own "tmakit: ..." line and failed the kernel, and that the
# "ok" mode completed without one.
#   tests/gpu/run_debug_checks.sh PATH/TO/gpu_debug_checks
# Exit 0 all as expected, 1 otherwise, 77 no suitable GPU (the binary's own skip).
set -u
bin=${1:?give the gpu_debug_checks binary}
failed=0
# check MODE WANT_RC [PART...]: the mode must exit WANT_RC and print a line holding every PART (fixed
# strings, in that order; parts between them vary, e.g. an address); no PART: no "tmakit:" line.
check() {
  local mode=$1 want_rc=$2 out rc part line
  shift 2
  out=$("$bin" "$mode" 2>&1)
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "$out"
    exit 77
  fi
  local verdict=PASS
  if [ $rc -ne "$want_rc" ]; then
    verdict="FAIL (exit $rc, want $want_rc)"
  elif [ $# -eq 0 ] && grep -q '^tmakit:' <<<"$out"; then
    verdict="FAIL (a check fired)"
  elif [ $# -gt 0 ]; then
    # The first output line holding the parts in order: each part is cut off with what precedes it.
    local found=0
    while IFS= read -r line; do
      local rest=$line ok=1
      for part in "$@"; do
        case "$rest" in
          *"$part"*) rest=${rest#*"$part"} ;;
          *) ok=0; break ;;
        esac
      done
      if [ $ok -eq 1 ]; then found=1; break; fi
    done <<<"$out"
    [ $found -eq 1 ] || verdict="FAIL (no line with: $*)"
  fi
  [ "$verdict" = PASS ] || failed=$((failed + 1))
  echo "$verdict $mode"
  while IFS= read -r l; do echo "    $l"; done <<<"$out"
}
check ok 0
check fields 3 "tmakit: DescriptorFields::box_inner_first[1] = 0x0: must be 1 .. 256"
check bulk-size 3 "tmakit: bulk_load: bytes = 0x18: must be a non-zero multiple of 16 bytes"
check bulk-align 3 "tmakit: bulk_load: shared-memory destination = " ": must be 16-byte aligned"
check not-shared 3 "tmakit: bulk_load: shared-memory destination = " ": must point to shared memory"
check hang 3 "tmakit: mbarrier wait gave up after 4096 polls (TMA_DEBUG_HANG_BOUND)"
echo "run_debug_checks: $failed failed"
[ $failed -eq 0 ]
