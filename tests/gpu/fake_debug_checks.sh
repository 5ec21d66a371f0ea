#!/usr/bin/env bash
# A stand-in for gpu_debug_checks, for CPU tests of run_debug_checks.sh (tests/gpu/CMakeLists.txt).
# FAKE_DEBUG_CHECKS selects how it behaves in every mode but "ok" (which always completes):
#   silent (default): the checks never fire (every mode completes, no "tmakit:" line): must fail;
#   fire: each mode prints its check's line as the real binary does (with another address) and
#         exits 3 as a failed kernel does: must pass;
#   wrong: as fire, with the bulk-align line naming another rule: must fail;
#   noisy: as fire, with a check's line in the "ok" mode too: must fail.
mode=${1:-?}
how=${FAKE_DEBUG_CHECKS:-silent}
if [ "$mode" = ok ] && [ "$how" = noisy ]; then
  echo "tmakit: bulk_load: bytes = 0x18: must be a non-zero multiple of 16 bytes (cp.async.bulk)"
  echo "gpu_debug_checks ok: the kernel completed"
  exit 0
fi
if [ "$mode" = ok ] || [ "$how" = silent ]; then
  echo "gpu_debug_checks $mode: the kernel completed"
  exit 0
fi
where="(block (0,0,0), thread (0,0,0))"
align="must be 16-byte aligned"
[ "$how" = wrong ] && align="must be 8-byte aligned"
case "$mode" in
  fields) echo "tmakit: DescriptorFields::box_inner_first[1] = 0x0: must be 1 .. 256 $where" ;;
  bulk-size) echo "tmakit: bulk_load: bytes = 0x18: must be a non-zero multiple of 16 bytes (cp.async.bulk) $where" ;;
  bulk-align) echo "tmakit: bulk_load: shared-memory destination = 0x7f1200000488: $align $where" ;;
  not-shared) echo "tmakit: bulk_load: shared-memory destination = 0x7f34e1e00200: must point to shared memory (a __shared__ variable or dynamic smem) $where" ;;
  hang) echo "tmakit: mbarrier wait gave up after 4096 polls (TMA_DEBUG_HANG_BOUND): block (0,0,0) warp 0 (lanes 0x00000001)" ;;
  *) echo "fake_debug_checks: unknown mode $mode" >&2; exit 2 ;;
esac
echo "gpu_debug_checks $mode: the kernel cudaErrorLaunchFailure"
exit 3
