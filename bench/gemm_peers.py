#!/usr/bin/env python3
"""Times torch.mm and a Triton TMA-descriptor matmul on gemm-bench's cases and merges them in.

    python3 bench/gemm_peers.py GEMM.json [--out OUT.json] [--filter REGEX] [--no-triton]

For every case of the record (written by `gemm-bench --json`): the same M, N, K and layout
(record["cases"][i]["layout"]: A then B, r = row-major, c = column-major), bf16 in and out,
random non-zero inputs, then

    torch:       torch.mm(a, b, out=d)                  (cuBLAS through PyTorch)
    triton_tma:  a Triton matmul whose loads and store go through host-side TMA descriptors
                 (triton.tools.tensor_descriptor.TensorDescriptor), grouped tile order; the best
                 of a few tile configurations

with gemm-bench's policy (bench/torch_peers.py's Runner: CUDA events, warm-up, median of the
record's reps, buffers rotated past 3x the L2 or the L2 flushed, runs queued behind a sleep
kernel). Each result is verified first against torch.mm in fp32 of the same inputs (relative
Frobenius error <= 8e-3, all elements finite). Each case gets "implementations"."torch" and
"triton_tma" entries shaped like gemm-bench's (tflops, median_ms, ...), plus "ratio_vs_torch"
(tma / torch) and "ratio_vs_triton". Exit: 0 done, 1 a result failed verification, 2 bad
arguments or record, 3 PyTorch or CUDA missing (Triton missing only drops triton_tma).
"""

import argparse
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers  # noqa: E402  (the shared timing policy: Runner)

EXIT_FAILED, EXIT_USAGE = 1, 2
VERIFY_BOUND = 8e-3
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages): the usual Hopper choices.
TRITON_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 4), (64, 256, 64, 8, 4, 4)]


def fail(message, code):
    print(f"gemm_peers: {message}", file=sys.stderr)
    sys.exit(code)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("record", help="JSON written by gemm-bench --json")
    p.add_argument("--out", help="where to write the merged record (default: in place)")
    p.add_argument("--filter", default="", help="only cases whose name matches this regex")
    p.add_argument("--no-triton", action="store_true", help="time torch.mm only")
    return p.parse_args()


def make_triton_kernel():
    """The Triton kernel, or (None, reason) when Triton or its TMA descriptors are missing."""
    try:
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError as e:
        return None, None, f"Triton with TensorDescriptor is not available ({e})"

    @triton.jit
    def matmul_tma(a_desc, b_desc, c_desc, M, N, K, A_KM: tl.constexpr, B_NK: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
        # A_KM: A is stored K x M (column-major m x k); B_NK: B is stored N x K (column-major).
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        in_group = GROUP_M * num_pid_n
        first_m = (pid // in_group) * GROUP_M
        group_m = tl.minimum(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % in_group) % group_m
        pid_n = (pid % in_group) // group_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(0, tl.cdiv(K, BLOCK_K)):
            k = kb * BLOCK_K
            if A_KM:
                a = a_desc.load([k, pid_m * BLOCK_M]).T
            else:
                a = a_desc.load([pid_m * BLOCK_M, k])
            if B_NK:
                b = b_desc.load([pid_n * BLOCK_N, k]).T
            else:
                b = b_desc.load([k, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.bfloat16))

    def launch(a_store, b_store, d, m, n, k, a_km, b_nk, cfg):
        bm, bn, bk, group, warps, stages = cfg
        a_desc = TensorDescriptor(a_store, a_store.shape, a_store.stride(),
                                  [bk, bm] if a_km else [bm, bk])
        b_desc = TensorDescriptor(b_store, b_store.shape, b_store.stride(),
                                  [bn, bk] if b_nk else [bk, bn])
        c_desc = TensorDescriptor(d, d.shape, d.stride(), [bm, bn])
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        matmul_tma[grid](a_desc, b_desc, c_desc, m, n, k, A_KM=a_km, B_NK=b_nk, BLOCK_M=bm,
                         BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps,
                         num_stages=stages)

    return launch, triton.__version__, None


def empty_entry(detail):
    return {"role": "peer", "detail": detail, "verified": False, "failure": None,
            "median_ms": None, "min_ms": None, "max_ms": None, "reps": None, "tflops": None}


def rel_error(torch, got, want):
    if not torch.isfinite(got).all():
        return float("inf")
    diff = (got.float() - want).norm().item()
    ref = want.norm().item()
    return diff / ref if ref > 0 else diff


def peers_for_case(runner, case, triton_launch):
    """{"torch": entry, "triton_tma": entry} for one case (never raises for the case's errors)."""
    torch = runner.torch
    m, n, k = case["m"], case["n"], case["k"]
    layout = case.get("layout", "rc")
    a_km, b_nk = layout[0] == "c", layout[1] == "c"
    flops = 2.0 * m * n * k
    set_bytes = 2 * (m * k + k * n + m * n)
    plan, free = runner.plan_sets(set_bytes, 4 * m * n)
    out = {"torch": empty_entry("torch.mm(a, b, out=d), bf16")}
    if triton_launch is not None:
        out["triton_tma"] = empty_entry("Triton matmul with TensorDescriptor loads and store")
    if plan is None:
        for e in out.values():
            e["failure"] = f"skipped: needs {torch_peers.human(set_bytes)}, " \
                           f"{torch_peers.human(free)} free"
        return out
    sets, flush = plan
    dev = runner.device
    a_stores, b_stores, a_views, b_views, ds = [], [], [], [], []
    for _ in range(sets):
        a_store = torch.empty((k, m) if a_km else (m, k), dtype=torch.bfloat16, device=dev)
        b_store = torch.empty((n, k) if b_nk else (k, n), dtype=torch.bfloat16, device=dev)
        runner.fill_random(a_store)
        runner.fill_random(b_store)
        # Random signs too, like gemm-bench's inputs (fill_random gives 0.5 .. 1.5).
        a_store.mul_(torch.randint(0, 2, a_store.shape, device=dev, dtype=torch.int8) * 2 - 1)
        b_store.mul_(torch.randint(0, 2, b_store.shape, device=dev, dtype=torch.int8) * 2 - 1)
        a_stores.append(a_store)
        b_stores.append(b_store)
        a_views.append(a_store.t() if a_km else a_store)
        b_views.append(b_store.t() if b_nk else b_store)
        ds.append(torch.empty((m, n), dtype=torch.bfloat16, device=dev))
    want = torch.mm(a_views[0].float(), b_views[0].float())

    def finish(entry, run):
        ds[0].fill_(float("nan"))
        run(0)
        torch.cuda.synchronize(dev)
        err = rel_error(torch, ds[0], want)
        entry["verify_rel_error"] = err
        if not err <= VERIFY_BOUND:
            entry["failure"] = f"MISMATCH: relative error {err:.3g} > {VERIFY_BOUND}"
            return entry
        entry["verified"] = True
        timing = runner.time_runs(run, sets, flush)
        entry.update(timing)
        entry["tflops"] = flops / (timing["median_ms"] * 1e-3) / 1e12
        entry["l2_policy"] = (f"flush {torch_peers.FLUSH_FACTOR}x L2 between runs" if flush
                              else f"rotate {sets} sets > {torch_peers.ROTATION_FACTOR}x L2")
        return entry

    try:
        out["torch"] = finish(out["torch"],
                              lambda s: torch.mm(a_views[s], b_views[s], out=ds[s]))
    except RuntimeError as e:
        out["torch"]["failure"] = f"error: {e}"
    if triton_launch is not None:
        best = None
        for cfg in TRITON_CONFIGS:
            entry = empty_entry("Triton matmul, TensorDescriptor loads and store, tile "
                                f"{cfg[0]}x{cfg[1]}x{cfg[2]}, group {cfg[3]}, warps {cfg[4]}, "
                                f"stages {cfg[5]}")
            try:
                entry = finish(entry, lambda s, cfg=cfg: triton_launch(
                    a_stores[s], b_stores[s], ds[s], m, n, k, a_km, b_nk, cfg))
            except Exception as e:  # noqa: BLE001 - a config Triton cannot compile or run
                entry["failure"] = f"error: {type(e).__name__}: {e}"
            if entry["verified"] and (best is None or entry["tflops"] > best["tflops"]):
                best = entry
            elif best is None and not entry["verified"]:
                out["triton_tma"] = entry
        if best is not None:
            out["triton_tma"] = best
    return out


def main():
    args = parse_args()
    try:
        with open(args.record) as f:
            record = json.load(f)
        cases, policy, gpu = record["cases"], record["policy"], record["gpu"]
        if record.get("tool") != "gemm-bench":
            raise KeyError("tool is not gemm-bench")
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read a gemm-bench record from {args.record}: {e}", EXIT_USAGE)
    try:
        name_filter = re.compile(args.filter)
    except re.error as e:
        fail(f"--filter {args.filter!r} is not a valid regex: {e}", EXIT_USAGE)

    torch = torch_peers.import_torch()
    device = torch.device("cuda", gpu.get("device", 0))
    torch.cuda.set_device(device)
    props = torch.cuda.get_device_properties(device)
    if props.name != gpu.get("name"):
        print(f"gemm_peers: note: the record was made on {gpu.get('name')!r}, this is "
              f"{props.name!r}; the ratios compare different GPUs", file=sys.stderr)
    triton_launch, triton_version, why = (None, None, "--no-triton") if args.no_triton \
        else make_triton_kernel()
    if triton_launch is None:
        print(f"gemm_peers: no triton_tma: {why}", file=sys.stderr)
    l2_bytes = getattr(props, "L2_cache_size", 0) or gpu["l2_bytes"]
    runner = torch_peers.Runner(torch, device, l2_bytes, gpu["sm_clock_khz"], policy["warmup"],
                                policy["reps"], False)
    torch.manual_seed(record.get("seed", 0) & 0xFFFFFFFF)

    todo = [c for c in cases if c.get("status") != "skipped" and name_filter.search(c["name"])]
    failed = 0
    print(f"{'case':30} {'torch':>9} {'triton':>9} {'tma':>9} {'tma/torch':>9} {'tma/trit':>9}")
    for case in todo:
        try:
            entries = peers_for_case(runner, case, triton_launch)
        except RuntimeError as e:  # CUDA errors and out-of-memory included
            entries = {"torch": {"role": "peer", "verified": False, "failure": f"error: {e}"}}
        torch.cuda.empty_cache()
        impls = case["implementations"]
        impls.update(entries)
        ours = impls.get("tma", {}).get("tflops")
        for name, key in (("torch", "ratio_vs_torch"), ("triton_tma", "ratio_vs_triton")):
            peer = impls.get(name, {}).get("tflops")
            case[key] = ours / peer if ours and peer else None
        for name, e in entries.items():
            if e.get("failure") and not e["failure"].startswith("skipped"):
                failed += 1
                print(f"gemm_peers: {case['name']} [{name}]: {e['failure']}")

        def cell(name):
            e = impls.get(name, {})
            return f"{e['tflops']:.1f}" if e.get("tflops") else ("FAIL" if e.get("failure") else "-")

        def fmt(x):
            return f"{x:.2f}" if x else "-"
        print(f"{case['name']:30} {cell('torch'):>9} {cell('triton_tma'):>9} {cell('tma'):>9} "
              f"{fmt(case.get('ratio_vs_torch')):>9} {fmt(case.get('ratio_vs_triton')):>9}",
              flush=True)

    record["gemm_peers"] = {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "triton": triton_version,
        "device": props.name,
        "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command_line": " ".join(sys.argv),
        "cases": len(todo),
        "failed": failed,
    }
    out = args.out or args.record
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, out)
    print(f"gemm_peers: {len(todo)} case(s), {failed} failed result(s); wrote {out}")
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main())
