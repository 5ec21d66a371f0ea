#!/usr/bin/env python3
"""Prints the README's GEMM table (Markdown) from a `tma-bench gemm --json` record.

    python3 bench/readme_table.py RECORD.json [--expect SQUARES,LLM]

One row per shape of issue 5's two target sets that the README lists (the squares >= 2048 and
the LLM shapes with M >= 1024 named below), in the README's order: tmakit's TMA path and
cuBLASLt in TFLOP/s, their ratio, our plan (tile, ping-pong, stream-K, cluster), where the record
has it tma_tuned's ratio to cuBLASLt and its plan ("same" when it is the plan's), and the ordinary
(cp.async) path of the same kernel; then the two geometric means over the full sets, the number
of shapes below 0.95x and the lowest three, the same for tma_tuned, and (after bench/torch_peers.py) the geometric mean
against torch.mm and the Triton TMA matmul over all shapes. --expect: exit 1 unless the two
geometric means are these (to 4 decimals; a check of the script against a recorded run,
tools/tma_bench/CMakeLists.txt).
"""
import json
import re
import sys

from ab_compare import geomean
from issue_sets import issue_set

ROWS = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384), (8192, 28672, 8192),
        (4096, 4096, 11008), (16384, 4096, 4096), (8192, 2112, 7168), (4096, 2112, 7168),
        (1024, 11008, 4096), (2048, 11008, 4096), (4096, 11008, 4096), (1024, 7168, 2048),
        (2048, 7168, 2048), (8192, 7168, 2048), (1024, 4096, 4096), (1024, 2112, 7168),
        (2048, 2048, 2048)]


def shape_name(m, n, k):
    return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"


# The ping-pong configurations (include/tma/ops/gemm.hpp: kGemmConfigs[i].pingpong), and the
# swapped-operand ones with their tiles (kGemmConfigs[i].swap_ab: 256 rows; session 39's first
# records name them "128x64" in the detail).
PINGPONG_CONFIGS = {2, 7, 10}
SWAPPED_CONFIGS = {10: "256x64"}


def plan_of(detail):
    tile = re.search(r"\((\d+x\d+)", detail)
    config = re.search(r"config (\d+)", detail)
    cluster = re.search(r"cluster (\d+)", detail)
    text = tile.group(1) if tile else "?"
    if config and int(config.group(1)) in SWAPPED_CONFIGS:
        text = SWAPPED_CONFIGS[int(config.group(1))] + " swapped"
    if config and int(config.group(1)) in PINGPONG_CONFIGS:
        text += " ping-pong"
    if "stream-K" in detail:
        text += " stream-K"
    return f"{text}, cluster {cluster.group(1) if cluster else '?'}"


def main():
    args = sys.argv[1:]
    expect = None
    if len(args) == 3 and args[1] == "--expect":
        expect = [float(x) for x in args[2].split(",")]
        args = args[:1]
    if len(args) != 1:
        sys.exit(__doc__)
    record = json.load(open(args[0]))
    # Keyed by family too: 4096 x 4096 x 4096 is both a square and an LLM shape.
    cases = {(c["family"], c["m"], c["n"], c["k"]): c for c in record["cases"]
             if c.get("status") == "ok"}
    tuned = any("tma_tuned" in c["implementations"] for c in cases.values())
    if tuned:
        print("| shape (M x N x K) | tmakit TMA | cuBLASLt | ratio | plan | tuned ratio | tuned plan "
              "| ordinary cp.async (same kernel) |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("| shape (M x N x K) | tmakit TMA | cuBLASLt | ratio | plan | ordinary cp.async "
              "(same kernel) |")
        print("|---|---|---|---|---|---|")
    for i, key in enumerate(ROWS):
        c = cases.get(("square" if key[0] == key[1] == key[2] else "llm",) + key)
        if c is None:
            continue
        im = c["implementations"]
        t, b = im["tma"], im["cublasLt"]
        ordinary = im.get("ordinary", {}).get("tflops")
        unit = " TFLOP/s" if i == 0 else ""
        ordinary_text = f"{ordinary:.0f}" if ordinary else "-"
        tuned_text = ""
        if tuned:
            u = im.get("tma_tuned")
            if u and u.get("median_ms"):
                same = plan_of(u["detail"]) == plan_of(t["detail"])
                tuned_text = (f"{b['median_ms'] / u['median_ms']:.2f}x | "
                              f"{'same' if same else plan_of(u['detail'])} | ")
            else:
                tuned_text = "- | - | "
        print(f"| {shape_name(*key)} | {t['tflops']:.0f}{unit} | {b['tflops']:.0f} | "
              f"{b['median_ms'] / t['median_ms']:.2f}x | {plan_of(t['detail'])} | "
              f"{tuned_text}{ordinary_text} |")
    print()
    means = []
    for ours, label in (("tma", ""), ("tma_tuned", "tuned ")):
        ratios = {}
        for key, c in cases.items():
            im = c["implementations"]
            if ours in im and "cublasLt" in im and im[ours].get("median_ms"):
                ratios[key] = (c, im["cublasLt"]["median_ms"] / im[ours]["median_ms"])
        if not ratios:
            continue
        for name in ("squares", "llm"):
            xs = [(key[1:], r) for key, (c, r) in ratios.items()
                  if issue_set(c["m"], c["n"], c["k"], c.get("family")) == name]
            low = sorted(xs, key=lambda kr: kr[1])[:3]
            mean = geomean([r for _, r in xs])
            if ours == "tma":
                means.append(round(mean, 4))
            print(f"{label}{name}: geomean {mean:.4f} over {len(xs)}, "
                  f"{sum(r < 0.95 for _, r in xs)} below 0.95x; lowest "
                  + ", ".join(f"{shape_name(*key)} {r:.3f}" for key, r in low))
    for peer in ("torch", "triton_tma"):
        xs = [c["implementations"][peer]["median_ms"] / c["implementations"]["tma"]["median_ms"]
              for c in cases.values()
              if peer in c["implementations"] and c["implementations"][peer].get("median_ms")]
        if xs:
            print(f"against {peer}: geomean {geomean(xs):.3f} over {len(xs)} shapes")
    if expect is not None and means != expect:
        sys.exit(f"readme_table: geometric means {means}, expected {expect}")


if __name__ == "__main__":
    main()
