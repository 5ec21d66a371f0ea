#!/usr/bin/env bash
# ncu_l2: an experiment helper, not a benchmark of record (docs/perf-log.md, session 19). Profiles
# kernels of a command with ncu (base clocks, its default) and prints, per kernel, the cycles and
# the L2 traffic, including the L2 request coalescer (LRC) counters. Those separate the two ways
# Hopper serves one read to several SMs: multicast ("programmatic" coalescing) and the merging of
# identical read requests that arrive close together ("hardware" coalescing), which session 19
# found only among SMs of one GPC.
#   bench/experiments/ncu_l2.sh KERNEL_REGEX SKIP COUNT COMMAND...
# e.g. (ours, then cuBLAS through torch.mm, 2048^3):
#   bench/experiments/ncu_l2.sh gemm_kernel 2 1 build/bench/experiments/gemm_loop 2048 2048 2048 0.05 2 0
#   bench/experiments/ncu_l2.sh nvjet 1 1 python3 bench/experiments/torch_loop.py 2048 2048 2048 0.05
# Columns: kcyc = gpc__cycles_elapsed.max / 1e3; in = bytes into the SMs; req = LRC read requests;
# hw / mc = request sectors merged by hardware / delivered by multicast; lts = sectors the LRC read
# from the L2 slices; tex = L2 sectors looked up for the SMs; fab = L2 fabric sectors; DRAM read.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,17p' "$0"
  exit 2
fi
regex=$1 skip=$2 count=$3
shift 3
metrics=gpc__cycles_elapsed.max,l1tex__m_xbar2l1tex_read_bytes.sum,lrc__xbar2lrc_requests_op_read.sum
metrics=$metrics,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
metrics=$metrics,lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum
metrics=$metrics,lrc__lts2lrc_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics=$metrics,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
ncu --print-units base --csv --metrics "$metrics" -k "regex:$regex" -s "$skip" -c "$count" "$@" \
  >"$csv"
python3 - "$csv" <<'PY'
import collections
import csv
import sys

rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 10]
if not rows:
    sys.exit("ncu_l2: ncu profiled no kernel (check KERNEL_REGEX, SKIP and COUNT)")
h = rows[0]
ii, ki = h.index("ID"), h.index("Kernel Name")
mi, vi = h.index("Metric Name"), h.index("Metric Value")
per = collections.OrderedDict()
for r in rows[1:]:
    per.setdefault((r[ii], r[ki]), {})[r[mi]] = float(r[vi].replace(",", ""))
cols = [("kcyc", "gpc__cycles_elapsed.max", 1e3),
        ("in GB", "l1tex__m_xbar2l1tex_read_bytes.sum", 1e9),
        ("req M", "lrc__xbar2lrc_requests_op_read.sum", 1e6),
        ("hw M", "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 1e6),
        ("mc M", "lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum", 1e6),
        ("lts M", "lrc__lts2lrc_sectors_op_read.sum", 1e6),
        ("tex M", "lts__t_sectors_srcunit_tex_op_read.sum", 1e6),
        ("fab M", "lts__t_sectors_srcunit_ltcfabric.sum", 1e6),
        ("DRAM MB", "dram__bytes_read.sum", 1e6)]
print("  ".join("%9s" % c for c, _, _ in cols) + "  kernel")
for (_, name), m in per.items():
    print("  ".join("%9.3f" % (m.get(k, float("nan")) / s) for _, k, s in cols) + "  " + name[:70])
PY
