#!/usr/bin/env python3
"""Draws a tma-bench JSON record as PNG charts, one PNG per suite.

    python3 bench/plot.py RESULTS.json [--out-dir DIR] [--prefix NAME-]

copy and transpose: the size-ladder cases (family "ladder"), one panel per dtype: x = input bytes
(log scale), y = GB/s counting bytes read + bytes written, one line per implementation:
    copy:       tma, ordinary, cudaMemcpy, torch
    transpose:  tma, ordinary, torch, copy_ceiling (the TMA copy of the same bytes)
and the GPU's peak DRAM bandwidth as a dashed line.
gemm: TFLOP/s (2 M N K / median time) per shape: one panel for the squares (x = M = N = K) and
one per LLM projection (N, K) (x = M, the tokens), lines for tma, ordinary, cublasLt and, after
bench/torch_peers.py, torch (torch.mm) and triton_tma (--sweep variants are left out).
Only verified, timed results are drawn.
Writes DIR/NAME<suite>.png (default: next to the record, NAME = the record's file name + "-").
Needs matplotlib (`pip install matplotlib`); without it this says so and exits 77.
"""

import argparse
import json
import os
import sys
from collections import defaultdict

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_MATPLOTLIB = 77  # "skipped" for ctest, as the repository's GPU tests use it

# The lines of each suite, in legend order, with their style: (label, colour, line style).
SERIES = {
    "copy": [
        ("tma", "ours: TMA", "tab:red", "-"),
        ("ordinary", "ours: ordinary loads", "tab:blue", "-"),
        ("cudaMemcpy", "cudaMemcpyAsync", "tab:gray", "--"),
        ("torch", "torch copy_", "tab:green", "--"),
    ],
    "transpose": [
        ("tma", "ours: TMA", "tab:red", "-"),
        ("ordinary", "ours: ordinary loads", "tab:blue", "-"),
        ("torch", "torch .t().contiguous()", "tab:green", "--"),
        ("copy_ceiling", "copy ceiling (TMA copy)", "black", ":"),
    ],
    "gemm": [
        ("tma", "ours: TMA", "tab:red", "-"),
        ("ordinary", "ours: ordinary cp.async loads", "tab:blue", "-"),
        ("cublasLt", "cuBLASLt (best of heuristic)", "tab:gray", "--"),
        ("torch", "torch.mm", "tab:green", "--"),
        ("triton_tma", "Triton TMA matmul", "tab:purple", "-."),
    ],
}
GEMM_PANEL_COLUMNS = 4
DTYPE_ORDER = ["u8", "bf16", "fp16", "fp32"]


def fail(message, code):
    print(f"plot.py: {message}", file=sys.stderr)
    sys.exit(code)


def size_label(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} PiB"


def ladder_points(cases, suite):
    """{dtype: {impl: [(input_bytes, gbps), ...]}} for the suite's verified ladder cases."""
    points = defaultdict(lambda: defaultdict(list))
    for c in cases:
        if c.get("suite") != suite or c.get("family") != "ladder":
            continue
        for impl, r in c.get("implementations", {}).items():
            if r.get("verified") and r.get("gbps"):
                points[c["dtype"]][impl].append((c["input_bytes"], r["gbps"]))
    for per_impl in points.values():
        for series in per_impl.values():
            series.sort()
    return points


def plot_suite(plt, record, suite, path):
    points = ladder_points(record["cases"], suite)
    if not points:
        return False
    dtypes = sorted(points, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else 99)
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5.2 * len(dtypes), 4.2), squeeze=False,
                             sharey=True)
    gpu = record.get("gpu", {})
    peak = gpu.get("peak_bandwidth_gbps")
    known = {s[0] for s in SERIES.get(suite, [])}
    for ax, dtype in zip(axes[0], dtypes):
        styles = list(SERIES.get(suite, []))
        # Implementations the table does not know yet (a new peer) still get a line.
        styles += [(impl, impl, None, "-.") for impl in sorted(points[dtype]) if impl not in known]
        for impl, label, colour, style in styles:
            series = points[dtype].get(impl)
            if not series:
                continue
            xs, ys = zip(*series)
            ax.plot(xs, ys, style, marker="o", markersize=3.5, color=colour, label=label)
        if peak:
            ax.axhline(peak, color="gray", linewidth=0.8, linestyle="--")
            ax.annotate(f"peak DRAM {peak:.0f} GB/s", (0.02, peak), xycoords=("axes fraction",
                        "data"), va="bottom", fontsize=7, color="gray")
        ax.set_xscale("log", base=2)
        xs = sorted({x for s in points[dtype].values() for x, _ in s})
        ax.set_xticks(xs)
        ax.set_xticklabels([size_label(x) for x in xs], rotation=45, ha="right", fontsize=8)
        ax.minorticks_off()
        ax.set_title(f"{suite} {dtype}")
        ax.set_xlabel("input size")
        ax.grid(True, alpha=0.3)
        top = max([y for s in points[dtype].values() for _, y in s] + [peak or 0])
        ax.set_ylim(0, 1.1 * top)
    axes[0][0].set_ylabel("GB/s (read + written)")
    axes[0][-1].legend(fontsize=8, loc="best")
    title = f"tma-bench {suite}: {gpu.get('name', '?')}"
    if record.get("timestamp"):
        title += f", {record['timestamp']}"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def gemm_points(cases):
    """{panel title: {impl: [(x, tflops), ...]}} for the verified gemm cases, with the x label
    of each panel: squares by size, LLM projections by M per (N, K)."""
    points = defaultdict(lambda: defaultdict(list))
    xlabel = {}
    for c in cases:
        if c.get("suite") != "gemm":
            continue
        if c.get("family") == "square":
            title, x = "squares (M = N = K)", c["m"]
        elif c.get("family") == "llm":
            title, x = f"N={c['n']}, K={c['k']}", c["m"]
        else:
            title, x = c.get("family", "?"), c["m"]
        xlabel[title] = "M = N = K" if c.get("family") == "square" else "M (tokens)"
        for impl, r in c.get("implementations", {}).items():
            if r.get("role") != "variant" and r.get("verified") and r.get("tflops"):
                points[title][impl].append((x, r["tflops"]))
    for per_impl in points.values():
        for series in per_impl.values():
            series.sort()
    return points, xlabel


def plot_gemm(plt, record, path):
    points, xlabel = gemm_points(record["cases"])
    if not points:
        return False
    # Squares first, then the projections in the order the record lists them.
    order = list(points)
    titles = sorted(order, key=lambda t: (not t.startswith("squares"), order.index(t)))
    cols = min(GEMM_PANEL_COLUMNS, len(titles))
    rows = (len(titles) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.9 * rows), squeeze=False)
    known = {s[0] for s in SERIES["gemm"]}
    for i, title in enumerate(titles):
        ax = axes[i // cols][i % cols]
        styles = list(SERIES["gemm"])
        styles += [(impl, impl, None, ":") for impl in sorted(points[title]) if impl not in known]
        for impl, label, colour, style in styles:
            series = points[title].get(impl)
            if not series:
                continue
            xs, ys = zip(*series)
            ax.plot(xs, ys, style, marker="o", markersize=3.5, color=colour, label=label)
        ax.set_xscale("log", base=2)
        xs = sorted({x for s in points[title].values() for x, _ in s})
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs], rotation=45, ha="right", fontsize=8)
        ax.minorticks_off()
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel[title], fontsize=8)
        ax.set_ylim(0, 1.1 * max(y for s in points[title].values() for _, y in s))
        ax.grid(True, alpha=0.3)
        if i % cols == 0:
            ax.set_ylabel("TFLOP/s")
    for j in range(len(titles), rows * cols):
        axes[j // cols][j % cols].axis("off")
    # One legend for the figure: every implementation that appears in some panel.
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center",
               ncol=min(len(handles), 5), fontsize=8, frameon=False)
    gpu = record.get("gpu", {})
    layouts = sorted({c.get("layout", "?") for c in record["cases"] if c.get("suite") == "gemm"})
    title = (f"tma-bench gemm, bf16 -> bf16, layout {'/'.join(layouts)}: "
             f"{gpu.get('name', '?')}")
    if record.get("timestamp"):
        title += f", {record['timestamp']}"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("record", help="JSON written by tma-bench --json (and torch_peers.py)")
    p.add_argument("--out-dir", help="directory for the PNGs (default: the record's)")
    p.add_argument("--prefix", help="file name prefix (default: the record's name + '-')")
    args = p.parse_args()

    try:
        import matplotlib  # noqa: PLC0415 - imported here so its absence gets a clear message
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        fail("needs matplotlib, which is not installed: pip install matplotlib", EXIT_NO_MATPLOTLIB)

    try:
        with open(args.record) as f:
            record = json.load(f)
        record["cases"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read a tma-bench record from {args.record}: {e}", EXIT_USAGE)

    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.record))
    prefix = args.prefix
    if prefix is None:
        prefix = os.path.splitext(os.path.basename(args.record))[0] + "-"
    os.makedirs(out_dir, exist_ok=True)

    suites = sorted({c.get("suite") for c in record["cases"] if c.get("suite")})
    written = []
    for suite in suites:
        path = os.path.join(out_dir, f"{prefix}{suite}.png")
        if suite == "gemm":
            drawn = plot_gemm(plt, record, path)
        else:
            drawn = plot_suite(plt, record, suite, path)
        if drawn:
            written.append(path)
    if not written:
        fail(f"{args.record} has no verified ladder or gemm cases to draw", EXIT_FAILED)
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
