#!/usr/bin/env python3
"""The SM clock beside each GEMM in a `tma-bench gemm --clock-probe --json FILE` record.

    python3 bench/clock_probe.py RECORD... [--ours tma] [--peer cublasLt] [--expect CLOCK,CYCLES]

With --clock-probe, tma-bench runs a one-thread probe before every timed launch and after the
last (tools/tma_bench/timing.hpp, ClockProbe): each implementation gets the median SM clock (MHz)
just before and just after its runs. This prints, per case and record, the time ratio (peer time /
our time, > 1: ours faster), both implementations' clocks, and the cycle ratio: the time ratio with
each side's time counted in its own cycles (time x the mean of its before and after clocks). Where
the two clocks agree the two ratios agree; where ours meets a lower clock, the cycle ratio is the
larger. Then, per issue-5 set (bench/issue_sets.py), the geometric means of both ratios and of the
clock ratio ours / peer.

The question it answers (docs/perf-log.md, session 42's next steps): whether our kernels' gap to
cuBLASLt's in the README's regime is one of clock (the power cap) or of cycles. Exit 1 when a
record has no case with both implementations probed. --expect: exit 1
unless the first record's LLM-set geometric means of the clock ratio and of the cycle ratio are
these (to 4 decimals; a check of the script on a fixture, tools/tma_bench/CMakeLists.txt).
--range LO,HI: exit 1 unless every probed clock lies in [LO, HI] MHz (a GPU test's check that
the probe reads a clock at all).
"""
import argparse
import json
import math
import sys

from issue_sets import issue_set


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')


def clock_mhz(impl):
    """The mean of the median clocks before and after the runs; None without probes."""
    probe = impl.get('clock_probe') if impl else None
    if not probe or probe.get('samples', 0) <= 0:
        return None
    return 0.5 * (probe['mhz_before'] + probe['mhz_after'])


def rows(record, ours, peer):
    """(case, set, time ratio, our clock, peer clock, cycle ratio, our probe, peer probe)."""
    out = []
    for case in record['cases']:
        impls = case.get('implementations', {})
        a, b = impls.get(ours), impls.get(peer)
        if not a or not b or not a.get('median_ms') or not b.get('median_ms'):
            continue
        ca, cb = clock_mhz(a), clock_mhz(b)
        if ca is None or cb is None:
            continue
        time_ratio = b['median_ms'] / a['median_ms']
        cycle_ratio = (b['median_ms'] * cb) / (a['median_ms'] * ca)
        group = issue_set(case['m'], case['n'], case['k'], case.get('family'))
        out.append((case, group, time_ratio, ca, cb, cycle_ratio, a['clock_probe'],
                    b['clock_probe']))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument('records', nargs='+', metavar='RECORD')
    ap.add_argument('--ours', default='tma', help='our implementation (default tma)')
    ap.add_argument('--peer', default='cublasLt', help='the peer (default cublasLt)')
    ap.add_argument('--expect', help='CLOCK,CYCLES: the first record\'s LLM-set geometric means')
    ap.add_argument('--range', help='LO,HI: exit 1 unless every probed clock (MHz) of every '
                    'implementation lies in [LO, HI] (a check that the probe reads a clock)')
    args = ap.parse_args()
    records = []
    for path in args.records:
        with open(path) as f:
            records.append((path, json.load(f)))

    if args.range:
        lo, hi = (float(x) for x in args.range.split(','))
        bad = []
        for path, record in records:
            for case in record['cases']:
                for name, impl in case.get('implementations', {}).items():
                    probe = impl.get('clock_probe') or {}
                    if not probe:
                        continue
                    for key in ('mhz_before', 'mhz_after'):
                        if probe.get('samples', 0) <= 0 or not lo <= probe[key] <= hi:
                            bad.append(f'{path}: {case["name"]} [{name}] {key} {probe.get(key)}'
                                       f' ({probe.get("samples", 0)} samples)')
        if bad:
            print(f'--range {args.range}: clocks outside the range:', *bad, sep='\n  ',
                  file=sys.stderr)
            return 1

    first_llm = None
    for path, record in records:
        window = record.get('policy', {}).get('clock_probe_window_ns')
        r = rows(record, args.ours, args.peer)
        print(f'{path}: {record.get("gpu", {}).get("name", "?")}, probe window {window} ns')
        if not r:
            print(f'  no case has both {args.ours} and {args.peer} timed with clock probes '
                  '(run tma-bench gemm --clock-probe)')
            return 1
        print(f'  {"shape":>20} {"set":>7} {"time":>6} {"cycles":>6} '
              f'{args.ours + " MHz b/a":>17} {args.peer + " MHz b/a":>17}')
        for case, group, tr, ca, cb, cr, pa, pb in r:
            shape = f'{case["m"]}x{case["n"]}x{case["k"]}'
            clocks = [f'{p["mhz_before"]:.0f} / {p["mhz_after"]:.0f}' for p in (pa, pb)]
            print(f'  {shape:>20} {group:>7} {tr:6.3f} {cr:6.3f} {clocks[0]:>17} {clocks[1]:>17}')
        means = {}
        for group in ('squares', 'llm', 'small'):
            sel = [x for x in r if x[1] == group]
            if not sel:
                continue
            clock = geomean([x[3] / x[4] for x in sel])
            time = geomean([x[2] for x in sel])
            cycles = geomean([x[5] for x in sel])
            means[group] = (clock, cycles)
            print(f'  {group:>7} ({len(sel):2d} shapes): time ratio {time:.4f}, cycle ratio '
                  f'{cycles:.4f}, clock {args.ours} / {args.peer} {clock:.4f}')
        if first_llm is None:
            first_llm = means.get('llm', ())
    if args.expect:
        want = tuple(float(x) for x in args.expect.split(','))
        got = tuple(round(x, 4) for x in (first_llm or ()))
        if got != want:
            print(f'--expect {args.expect}: the first record gives {got}', file=sys.stderr)
            return 1
        print(f'--expect {args.expect}: matches')
    return 0


if __name__ == '__main__':
    sys.exit(main())
