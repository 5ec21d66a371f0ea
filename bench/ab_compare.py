#!/usr/bin/env python3
"""A/B summary of `tma-bench gemm --json` runs of two or more builds.

    python3 bench/ab_compare.py INPUT... [--order B1,B2,...] [--expect SQUARES,LLM]

Each INPUT is a directory of JSONs named BUILD-rROUND.json (e.g. base-r1.json, warm-r1.json), or
BUILD=FILE (one round of BUILD; repeat it for more rounds), each from `tma-bench gemm
--no-ordinary --seed S --json ...` run alternately in one call on one GPU.
Prints, per build and round, the geometric mean of tmakit's ratio to cuBLASLt over the two sets of
issue 5 (squares >= 2048; LLM shapes with M >= 1024) and, for each later build against the first
(in name order, or the order given by --order), each shape's median time over the rounds and the
ratio first / later (> 1: the later build is faster), with geometric means per set, then each
shape's mean ratio to cuBLASLt and later / first (> 1: the later build better against the peer
timed beside it; this one is immune to the GPU's clock changing between runs). --expect: exit 1
unless every build's first round has these two geometric means (to 4 decimals; a check of the
script against a recorded run, tools/tma_bench/CMakeLists.txt).
"""
import argparse
import collections
import json
import math
import os
import sys

from issue_sets import issue_set


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')


def mean(xs):
    return sum(xs) / len(xs)


def per_shape(names, meta, values, compare, line):
    """One line per shape (line % (shape, a, b, compare(a, b)), values(name) = (a, b)), then the
    geometric mean of compare over all shapes and per issue-5 set."""
    per = collections.defaultdict(list)
    for name in names:
        a, b = values(name)
        x = compare(a, b)
        per['all'].append(x)
        per[issue_set(*meta[name])].append(x)
        print(line % (name.split('/', 1)[-1], a, b, x))
    for s in ('all', 'squares', 'llm', 'small'):
        print('  geomean %-8s %.4f  (n = %d)' % (s, geomean(per[s]), len(per[s])))


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument('inputs', nargs='+', metavar='INPUT')
    ap.add_argument('--order', help='comma-separated build names; the first is the baseline')
    ap.add_argument('--expect', help='SQUARES,LLM: the first round\'s geometric means')
    args = ap.parse_args()
    times = collections.defaultdict(lambda: collections.defaultdict(list))   # build -> case -> ms
    ratios = collections.defaultdict(lambda: collections.defaultdict(list))  # build -> case -> x
    meta = {}
    runs = []  # (build, path)
    for item in args.inputs:
        if os.path.isdir(item):
            for f in sorted(os.listdir(item)):
                if f.endswith('.json') and '-r' in f:
                    runs.append((f.rsplit('-r', 1)[0], os.path.join(item, f)))
        elif '=' in item:
            build, path = item.split('=', 1)
            runs.append((build, path))
        else:
            print(f'{item}: neither a directory nor BUILD=FILE', file=sys.stderr)
            return 2
    for build, path in runs:
        try:
            with open(path) as fh:
                j = json.load(fh)
        except (OSError, ValueError) as e:
            print(f'{path}: unreadable ({e})', file=sys.stderr)
            return 2
        for c in j.get('cases', []):
            tma = c.get('implementations', {}).get('tma', {})
            if tma.get('median_ms') is None or c.get('ratio_vs_cublas') is None:
                continue
            times[build][c['name']].append(tma['median_ms'])
            ratios[build][c['name']].append(c['ratio_vs_cublas'])
            meta[c['name']] = (c['m'], c['n'], c['k'], c['family'])
    if not times:
        print('no tma-bench gemm results in', ' '.join(args.inputs), file=sys.stderr)
        return 1
    builds = args.order.split(',') if args.order else sorted(times)
    missing = [b for b in builds if b not in times]
    if missing:
        print('no results of build(s) ' + ', '.join(missing), file=sys.stderr)
        return 2
    expect = [float(x) for x in args.expect.split(',')] if args.expect else None
    failed = False
    for b in builds:
        rounds = max(len(v) for v in ratios[b].values())
        for r in range(rounds):
            per = collections.defaultdict(list)
            for name, xs in ratios[b].items():
                if len(xs) > r:
                    per[issue_set(*meta[name])].append(xs[r])
            sq, llm = geomean(per['squares']), geomean(per['llm'])
            print('%-8s round %d vs cuBLASLt: squares>=2048 %.4f  LLM M>=1024 %.4f  (below 0.95: %d)'
                  % (b, r + 1, sq, llm,
                     sum(1 for s in ('squares', 'llm') for x in per[s] if x < 0.95)))
            if expect and r == 0 and (round(sq, 4) != expect[0] or round(llm, 4) != expect[1]):
                print(f'{b}: expected {expect[0]:.4f} / {expect[1]:.4f}', file=sys.stderr)
                failed = True
    base = builds[0]
    for other in builds[1:]:
        shared = [n for n in sorted(times[base], key=lambda n: meta[n]) if n in times[other]]
        print(f'\nmedian time per shape, {base} / {other} (> 1: {other} faster):')
        per_shape(shared, meta, lambda n: (median(times[base][n]) * 1e3,
                                           median(times[other][n]) * 1e3),
                  lambda a, b: a / b, '  %-34s %9.2f %9.2f us  %.3f')
        # The same against the peer: cuBLASLt is timed interleaved with ours in each run, so a
        # change of the GPU's clock between runs (power-capped shapes moved up to ~10% from run
        # to run on an H100, session 46) cancels here and not in the times above.
        print(f'\nmean ratio to cuBLASLt per shape, {other} / {base} (> 1: {other} better):')
        per_shape(shared, meta, lambda n: (mean(ratios[base][n]), mean(ratios[other][n])),
                  lambda a, b: b / a, '  %-34s %9.4f %9.4f     %.3f')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
