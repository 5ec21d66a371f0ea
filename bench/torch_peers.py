#!/usr/bin/env python3
"""Times PyTorch (and Triton) on tma-bench's cases and merges the numbers into the bench's record.

    python3 bench/torch_peers.py RESULTS.json [--out OUT.json] [--filter REGEX] [--no-triton]
                                              [--reps N] [--warmup N] [--device N] [--dry-run]

RESULTS.json is what `tma-bench <suite> --json` wrote. The suites present decide the peers:

    copy:       torch      dst.copy_(src)                     (dst with the bench's dst strides)
    transpose:  torch      x.t().contiguous()                 (2-D)
                           x.transpose(-1, -2).contiguous()   (batched)
    gemm:       torch      torch.mm(a, b, out=d)              (cuBLAS through PyTorch)
                triton_tma a Triton matmul whose loads and store go through host-side TMA
                           descriptors (triton.tools.tensor_descriptor.TensorDescriptor), grouped
                           tile order; the fastest of a few tile configurations

(other suites, e.g. copy-tune, get none). Every peer rebuilds the case's tensors (shapes, strides,
GEMM layout from the record), is verified first and then timed with the bench's policy:
torch.cuda.Event around each run, `warmup` untimed runs, the median of `reps` runs, buffers rotated
so that consecutive runs touch more than 3x the L2 (or the L2 flushed between runs when that does
not fit), runs queued behind a sleep kernel so the events time the GPU and not Python.
Verification: copy and transpose element for element (random non-zero inputs); GEMM as tma-bench
does it: output filled with NaN first, every element finite afterwards, and 1024 sampled elements
within 8e-3 (relative, Frobenius) of an fp64 dot product of the same bf16 inputs.

Each case gets "implementations"."torch" (and for gemm "triton_tma") entries shaped like the
bench's own (gbps; gemm also tflops), and best_peer / ratio are recomputed with them among the
peers, plus ratio_vs_torch (and ratio_vs_triton). The record is rewritten in place unless --out is
given. --dry-run lists what would run, without PyTorch. Triton missing (or too old for
TensorDescriptor) only drops triton_tma, with the reason printed and recorded.
Exit codes: 0 done, 1 a peer result did not verify or failed, 2 bad arguments or record,
77 PyTorch or a CUDA device missing (skipped: the reason is printed).
"""

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import time

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SKIPPED = 77  # as the repository's GPU tests and tma-bench without a GPU

ROTATION_FACTOR = 3  # as tma-bench (tools/tma_bench/timing.hpp)
FLUSH_FACTOR = 2
MEMORY_MARGIN = 512 << 20  # bytes left free, as tma-bench (runner.cpp)
SPIN_MIN_US, SPIN_MAX_US, SPIN_SAFETY, ENQUEUE_EXTRA_US = 50.0, 500_000.0, 2.0, 5.0

DTYPES = {"u8": "uint8", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}

# GEMM verification, as tma-bench (tools/tma_bench/gemm_check.hpp).
GEMM_SAMPLES = 1024
GEMM_BOUND = 8e-3
# Candidate choice, as tma-bench does for cuBLASLt's algorithms: each candidate verified and timed
# briefly (warm-up, runs), the fastest timed with the full policy.
TRIAL_WARMUP, TRIAL_REPS = 2, 5
# Triton tiles: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), the usual Hopper ones.
TRITON_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 4), (64, 256, 64, 8, 4, 4)]

# The peers each suite gets, in the order they run.
PEERS = {"copy": ["torch"], "transpose": ["torch"], "gemm": ["torch", "triton_tma"]}


def fail(message, code):
    print(f"torch_peers: {message}", file=sys.stderr)
    sys.exit(code)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("record", help="JSON written by tma-bench --json")
    p.add_argument("--out", help="where to write the merged record (default: in place)")
    p.add_argument("--filter", default="", help="only cases whose name matches this regex")
    p.add_argument("--reps", type=int, help="timed runs (default: the record's policy)")
    p.add_argument("--warmup", type=int, help="untimed runs (default: the record's policy)")
    p.add_argument("--device", type=int, default=None, help="CUDA device (default: the record's)")
    p.add_argument("--no-triton", action="store_true", help="gemm: time torch.mm only")
    p.add_argument("--dry-run", action="store_true",
                   help="list the cases and the peers each would get; needs no PyTorch")
    return p.parse_args()


def import_torch():
    try:
        import torch  # noqa: PLC0415 - imported here so the message below can explain its absence
    except ImportError as e:
        fail(f"skipped: PyTorch is not installed ({e}); run this where python3 has torch "
             "(the GPU machine's python3)", EXIT_SKIPPED)
    if not torch.cuda.is_available():
        fail(f"skipped: torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() "
             f"is False; built for CUDA {torch.version.cuda}): run this on the GPU machine",
             EXIT_SKIPPED)
    return torch


def footprint_elements(shape, strides):
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


def l2_policy(sets, flush):
    return (f"flush {FLUSH_FACTOR}x L2 between runs" if flush
            else f"rotate {sets} sets > {ROTATION_FACTOR}x L2")


class Runner:
    """Allocation, input and timing with the bench's policy."""

    def __init__(self, torch, device, l2_bytes, sm_clock_khz, warmup, reps, force_flush):
        self.torch = torch
        self.force_flush = force_flush  # the bench ran with --flush-l2
        self.device = device
        self.l2_bytes = l2_bytes
        self.sm_clock_khz = sm_clock_khz
        self.warmup = warmup
        self.reps = reps
        self.flush_buffer = torch.empty(FLUSH_FACTOR * l2_bytes, dtype=torch.uint8, device=device)

    def strided(self, dtype, shape, strides):
        """A tensor with exactly the bench's layout, on its own storage (padding included)."""
        torch = self.torch
        storage = torch.empty(footprint_elements(shape, strides), dtype=dtype, device=self.device)
        return storage.as_strided(shape, strides)

    def fill_random(self, x, signed=False):
        """Random non-zero values: 1..255 for u8, 0.5 <= |x| < 1.5 for floats (sign random when
        `signed`, as tma-bench's GEMM inputs)."""
        if x.dtype == self.torch.uint8:
            x.random_(1, 256)
            return
        x.uniform_(0.5, 1.5)
        if signed:
            x.mul_(self.torch.randint_like(x, 0, 2).mul_(2).sub_(1))

    def plan_sets(self, set_bytes, extra_bytes):
        """(sets, flush) as tma-bench's plan_l2, or None when one set does not fit."""
        free, _ = self.torch.cuda.mem_get_info(self.device)
        room = free - MEMORY_MARGIN
        if set_bytes + extra_bytes > room:
            return None, free
        if self.force_flush:
            return (1, True), free
        sets = ROTATION_FACTOR * self.l2_bytes // set_bytes + 1
        if sets * set_bytes > room - extra_bytes:
            return (1, True), free
        return (sets, False), free

    def time_runs(self, run, sets, flush, warmup=None, reps=None):
        """Median/min/max ms of `run(set)`, queued behind a sleep kernel (see the module doc)."""
        torch = self.torch
        warmup = self.warmup if warmup is None else warmup
        reps = self.reps if reps is None else reps
        stream = torch.cuda.current_stream(self.device)
        nxt = 0
        host_us = []
        for _ in range(warmup):
            t0 = time.perf_counter()
            run(nxt % sets)
            host_us.append((time.perf_counter() - t0) * 1e6)
            nxt += 1
        torch.cuda.synchronize(self.device)
        host_per_launch = statistics.median(host_us)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        spin_us = min(max(SPIN_SAFETY * reps * (host_per_launch + ENQUEUE_EXTRA_US),
                          SPIN_MIN_US), SPIN_MAX_US)
        for attempt in range(1, 4):
            torch.cuda._sleep(int(spin_us * self.sm_clock_khz * 1e-3))
            t0 = time.perf_counter()
            for r in range(reps):
                if flush:
                    self.flush_buffer.fill_(r & 0xFF)
                starts[r].record(stream)
                run(nxt % sets)
                nxt += 1
                stops[r].record(stream)
            enqueued_us = (time.perf_counter() - t0) * 1e6
            torch.cuda.synchronize(self.device)
            host_bound = enqueued_us > spin_us
            if not host_bound or attempt == 3 or spin_us >= SPIN_MAX_US:
                break
            spin_us = min(SPIN_MAX_US, SPIN_SAFETY * enqueued_us + SPIN_MIN_US)
        samples = sorted(s.elapsed_time(e) for s, e in zip(starts, stops))
        return {
            "median_ms": statistics.median(samples),
            "min_ms": samples[0],
            "max_ms": samples[-1],
            "reps": len(samples),
            "host_us_per_launch": host_per_launch,
            "host_bound": host_bound,
        }


def empty_entry(detail, gemm=False):
    e = {"role": "peer", "detail": detail, "verified": False, "failure": None,
         "median_ms": None, "min_ms": None, "max_ms": None, "reps": None, "gbps": None}
    if gemm:
        e["tflops"] = None
    return e


# ---- copy and transpose ------------------------------------------------------------------------

def torch_case(runner, case):
    """The "torch" entry of a copy or transpose case (never raises for the case's own errors)."""
    torch = runner.torch
    dtype = getattr(torch, DTYPES[case["dtype"]])
    esize = case["element_bytes"]
    shape, src_strides = case["shape"], case["src_strides"]
    dst_shape, dst_strides = case["dst_shape"], case["dst_strides"]
    suite = case["suite"]
    entry = empty_entry(None)

    src_bytes = footprint_elements(shape, src_strides) * esize
    if suite == "copy":
        entry["detail"] = "dst.copy_(src)"
        out_bytes = footprint_elements(dst_shape, dst_strides) * esize
    else:
        entry["detail"] = ("x.t().contiguous()" if len(shape) == 2
                           else "x.transpose(-1, -2).contiguous()")
        out_bytes = case["input_bytes"]  # torch allocates a contiguous output
    plan, free = runner.plan_sets(src_bytes + out_bytes, 0)
    if plan is None:
        entry["failure"] = (f"skipped: needs {human(src_bytes + out_bytes)}, "
                            f"{human(free)} free")
        return entry
    sets, flush = plan

    srcs = []
    for _ in range(sets):
        x = runner.strided(dtype, shape, src_strides)
        runner.fill_random(x)
        srcs.append(x)
    if suite == "copy":
        dsts = [runner.strided(dtype, dst_shape, dst_strides) for _ in range(sets)]

        def run(s):
            dsts[s].copy_(srcs[s])

        dsts[0].zero_()  # the inputs are non-zero: an element copy_ skips stays 0
        run(0)
        torch.cuda.synchronize(runner.device)
        ok = torch.equal(dsts[0], srcs[0])
    else:
        outs = [None] * sets

        def run(s):
            outs[s] = srcs[s].transpose(-1, -2).contiguous() if len(shape) == 3 \
                else srcs[s].t().contiguous()

        run(0)
        if outs[0].data_ptr() == srcs[0].data_ptr():
            # torch calls x.t() contiguous already (a size-1 dimension): .contiguous() moves
            # nothing. Time the copy into a fresh contiguous tensor instead, which does.
            entry["detail"] = "torch.empty(dst_shape).copy_(x.t()) (x.t() is already contiguous)"

            def run(s):
                out = torch.empty(dst_shape, dtype=dtype, device=runner.device)
                outs[s] = out.copy_(srcs[s].transpose(-1, -2))

            run(0)
        torch.cuda.synchronize(runner.device)
        expected = srcs[0].t() if len(shape) == 2 else srcs[0].transpose(-1, -2)
        ok = list(outs[0].shape) == list(dst_shape) and torch.equal(outs[0], expected)
    if not ok:
        entry["failure"] = "MISMATCH: the torch result differs from the bench's semantics"
        return entry
    entry["verified"] = True
    timing = runner.time_runs(run, sets, flush)
    entry.update(timing)
    entry["gbps"] = case["bytes"] / (timing["median_ms"] * 1e-3) / 1e9
    entry["l2_policy"] = l2_policy(sets, flush)
    return entry


# ---- gemm --------------------------------------------------------------------------------------

def make_triton_kernel():
    """(launch, triton version, None), or (None, None, why) when Triton or its host-side TMA
    descriptors are missing."""
    try:
        import triton  # noqa: PLC0415 - optional: its absence only drops triton_tma
        import triton.language as tl  # noqa: PLC0415
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: PLC0415
    except ImportError as e:
        return None, None, f"Triton with triton.tools.tensor_descriptor is not available ({e})"

    @triton.jit
    def matmul_tma(a_desc, b_desc, c_desc, M, N, K, A_KM: tl.constexpr, B_NK: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
        # A_KM: A is stored K x M (column-major m x k); B_NK: B is stored N x K (column-major).
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        # Grouped order: GROUP_M tile rows sweep the tile columns together, so their B tiles
        # stay in the L2.
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


def gemm_check(torch, a, b, d, generator):
    """What is wrong with d = a @ b (a, b as stored views), or None: every element written (d
    was NaN) and GEMM_SAMPLES sampled elements within GEMM_BOUND of fp64 dot products."""
    m, n = d.shape
    bad = (~torch.isfinite(d)).sum().item()
    if bad:
        return f"{bad} of {m * n} elements of D not finite (NaN fill not overwritten?)"
    rows = torch.randint(0, m, (GEMM_SAMPLES,), device=d.device, generator=generator)
    cols = torch.randint(0, n, (GEMM_SAMPLES,), device=d.device, generator=generator)
    want = (a[rows].double() * b[:, cols].t().double()).sum(dim=1)
    got = d[rows, cols].double()
    err = (got - want).norm().item()
    ref = want.norm().item()
    rel = err / ref if ref > 0 else err
    if not rel <= GEMM_BOUND:
        worst = (got - want).abs().argmax().item()
        return (f"sampled relative error {rel:.4g} > {GEMM_BOUND} over {GEMM_SAMPLES} elements vs "
                f"fp64; worst D[{rows[worst].item()}][{cols[worst].item()}] = "
                f"{got[worst].item():.6g}, expected {want[worst].item():.6g}")
    return None


def gemm_case(runner, case, triton_launch):
    """{"torch": entry, "triton_tma": entry} for one gemm case (never raises for the case's own
    errors; triton_tma only when Triton is usable)."""
    torch = runner.torch
    m, n, k = case["m"], case["n"], case["k"]
    layout = case.get("layout", "rc")
    a_km, b_nk = layout[0] == "c", layout[1] == "c"
    flops = 2.0 * m * n * k
    out = {"torch": empty_entry("torch.mm(a, b, out=d), bf16", gemm=True)}
    if triton_launch is not None:
        out["triton_tma"] = empty_entry("Triton matmul, TensorDescriptor loads and store",
                                        gemm=True)
    set_bytes = 2 * (m * k + k * n + m * n)
    plan, free = runner.plan_sets(set_bytes, 0)
    if plan is None:
        for e in out.values():
            e["failure"] = f"skipped: needs {human(set_bytes)}, {human(free)} free"
        return out
    sets, flush = plan
    dev = runner.device
    a_stores, b_stores, a_views, b_views, ds = [], [], [], [], []
    for _ in range(sets):
        a_store = torch.empty((k, m) if a_km else (m, k), dtype=torch.bfloat16, device=dev)
        b_store = torch.empty((n, k) if b_nk else (k, n), dtype=torch.bfloat16, device=dev)
        runner.fill_random(a_store, signed=True)
        runner.fill_random(b_store, signed=True)
        a_stores.append(a_store)
        b_stores.append(b_store)
        a_views.append(a_store.t() if a_km else a_store)
        b_views.append(b_store.t() if b_nk else b_store)
        ds.append(torch.empty((m, n), dtype=torch.bfloat16, device=dev))
    generator = torch.Generator(device=dev)
    generator.manual_seed(m * 1_000_003 + n * 1009 + k)

    def verify(entry, run):
        ds[0].fill_(float("nan"))
        run(0)
        torch.cuda.synchronize(dev)
        wrong = gemm_check(torch, a_views[0], b_views[0], ds[0], generator)
        if wrong:
            entry["failure"] = f"MISMATCH: {wrong}"
            return False
        entry["verified"] = True
        return True

    def finish(entry, run):
        timing = runner.time_runs(run, sets, flush)
        entry.update(timing)
        entry["gbps"] = case["bytes"] / (timing["median_ms"] * 1e-3) / 1e9
        entry["tflops"] = flops / (timing["median_ms"] * 1e-3) / 1e12
        entry["l2_policy"] = l2_policy(sets, flush)

    torch_run = lambda s: torch.mm(a_views[s], b_views[s], out=ds[s])  # noqa: E731
    try:
        if verify(out["torch"], torch_run):
            finish(out["torch"], torch_run)
    except RuntimeError as e:
        out["torch"]["failure"] = f"error: {e}"

    if triton_launch is not None:
        # Each tile configuration verified and timed briefly; the fastest with the full policy.
        best, best_ms, errors = None, None, []
        for cfg in TRITON_CONFIGS:
            entry = empty_entry("Triton matmul, TensorDescriptor loads and store, tile "
                                f"{cfg[0]}x{cfg[1]}x{cfg[2]}, group {cfg[3]}, warps {cfg[4]}, "
                                f"stages {cfg[5]}", gemm=True)
            run = (lambda s, cfg=cfg: triton_launch(a_stores[s], b_stores[s], ds[s], m, n, k,
                                                    a_km, b_nk, cfg))
            try:
                if not verify(entry, run):
                    errors.append(entry["failure"])
                    out["triton_tma"] = entry  # a wrong result is a failure, whatever else runs
                    best = None
                    break
                ms = runner.time_runs(run, sets, flush, TRIAL_WARMUP, TRIAL_REPS)["median_ms"]
            except Exception as e:  # noqa: BLE001 - a configuration Triton cannot compile or run
                errors.append(f"{cfg}: {type(e).__name__}: {str(e).splitlines()[0]}")
                continue
            if best is None or ms < best_ms:
                best, best_ms = (entry, run), ms
        if best is not None:
            entry, run = best
            entry["detail"] += f" (fastest of {len(TRITON_CONFIGS)} configurations)"
            finish(entry, run)
            out["triton_tma"] = entry
        elif not out["triton_tma"]["failure"]:
            out["triton_tma"]["failure"] = "error: no configuration ran: " + "; ".join(errors)
    return out


# ---- the record --------------------------------------------------------------------------------

def recompute_ratios(case):
    """best_peer / ratio over every verified, timed peer, and ratio_vs_<peer> for ours."""
    impls = case["implementations"]
    ours = next((v for v in impls.values() if v.get("role") == "ours"), None)
    peers = [(k, v) for k, v in impls.items()
             if v.get("role") == "peer" and v.get("verified") and v.get("gbps")]
    best = max(peers, key=lambda kv: kv[1]["gbps"], default=None)
    case["best_peer"] = best[0] if best else None
    ok = ours is not None and ours.get("gbps")
    case["ratio"] = ours["gbps"] / best[1]["gbps"] if ok and best else None
    # Same bytes and flops on both sides: a ratio of GB/s is the ratio of speeds.
    for name, key in (("torch", "ratio_vs_torch"), ("triton_tma", "ratio_vs_triton")):
        if name in impls:
            peer = impls[name].get("gbps") if impls[name].get("verified") else None
            case[key] = ours["gbps"] / peer if ok and peer else None


def case_label(case):
    if case["suite"] == "gemm":
        return f"gemm {case['dtype']} {case['m']}x{case['n']}x{case['k']} ({case['layout']})"
    return f"{case['suite']} {case['dtype']} " + "x".join(str(n) for n in case["shape"])


def summary_line(case, entries):
    """One line per case for logs: each peer's speed and ours against it."""
    gemm = case["suite"] == "gemm"
    unit, key = ("TFLOP/s", "tflops") if gemm else ("GB/s", "gbps")
    ours = case["implementations"].get("tma", {}).get(key)
    parts = []
    for name, e in entries.items():
        if e.get(key):
            vs = f" (tma/{name} {ours / e[key]:.2f})" if ours else ""
            parts.append(f"{name} {e[key]:.1f} {unit}{vs}")
        else:
            parts.append(f"{name} {(e.get('failure') or '-').splitlines()[0]}")
    return f"  {case['name']}: " + ", ".join(parts)


def load_record(path):
    try:
        with open(path) as f:
            record = json.load(f)
        cases, policy, gpu = record["cases"], record["policy"], record["gpu"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"cannot read a tma-bench record from {path}: {e!r}", EXIT_USAGE)
    if record.get("tool") != "tma-bench":
        fail(f"{path} was written by {record.get('tool')!r}, not tma-bench: give the JSON of "
             "`tma-bench <suite> --json FILE`", EXIT_USAGE)
    for c in cases:
        needed = ["suite", "name", "implementations"]
        if c.get("suite") == "gemm":
            needed += ["m", "n", "k", "layout", "bytes"]
        missing = [key for key in needed if key not in c]
        if missing:
            fail(f"{path}: case {c.get('name', '?')!r} lacks {', '.join(missing)}", EXIT_USAGE)
    return record, cases, policy, gpu


def main():
    args = parse_args()
    record, cases, policy, gpu = load_record(args.record)
    try:
        name_filter = re.compile(args.filter)
    except re.error as e:
        fail(f"--filter {args.filter!r} is not a valid regex: {e}", EXIT_USAGE)

    todo = [c for c in cases
            if c["suite"] in PEERS and c.get("status") != "skipped"
            and name_filter.search(c["name"])]
    present = sorted({c["suite"] for c in cases})
    without = [s for s in present if s not in PEERS]
    print(f"torch_peers: suites in the record: {', '.join(present) or 'none'}"
          + (f" (no peers for {', '.join(without)})" if without else "")
          + f"; {len(todo)} case(s) to run")
    if args.dry_run:
        for c in todo:
            peers = [p for p in PEERS[c["suite"]] if not (p == "triton_tma" and args.no_triton)]
            print(f"  {c['name']}: {', '.join(peers)}")
        return 0
    if not todo:
        print("torch_peers: nothing to do")
        return 0

    torch = import_torch()
    device = torch.device("cuda", gpu.get("device", 0) if args.device is None else args.device)
    torch.cuda.set_device(device)
    props = torch.cuda.get_device_properties(device)
    if props.name != gpu.get("name"):
        print(f"torch_peers: note: the record was made on {gpu.get('name')!r}, this is "
              f"{props.name!r}; the ratios compare different GPUs", file=sys.stderr)
    warmup = args.warmup or policy["warmup"]
    reps = args.reps or policy["reps"]
    l2_bytes = getattr(props, "L2_cache_size", 0) or gpu["l2_bytes"]
    runner = Runner(torch, device, l2_bytes, gpu["sm_clock_khz"], warmup, reps,
                    policy.get("flush_l2_forced", False))
    torch.manual_seed(record.get("seed", 0) & 0xFFFFFFFF)

    triton_launch, triton_version, triton_skipped = None, None, None
    if any(c["suite"] == "gemm" for c in todo):
        if args.no_triton:
            triton_skipped = "--no-triton"
        else:
            triton_launch, triton_version, triton_skipped = make_triton_kernel()
        if triton_skipped:
            print(f"torch_peers: no triton_tma: {triton_skipped}", file=sys.stderr)

    tty = sys.stderr.isatty()
    failed = 0
    for i, case in enumerate(todo, 1):
        line = f"[{i}/{len(todo)}] peers of {case_label(case)}"
        print(f"\r\033[K{line} ..." if tty else f"{line} ...", end="" if tty else "\n",
              file=sys.stderr, flush=True)
        try:
            if case["suite"] == "gemm":
                entries = gemm_case(runner, case, triton_launch)
            else:
                entries = {"torch": torch_case(runner, case)}
        except RuntimeError as e:  # CUDA errors and out-of-memory included
            entries = {"torch": {"role": "peer", "verified": False, "failure": f"error: {e}"}}
        torch.cuda.empty_cache()
        case["implementations"].update(entries)
        recompute_ratios(case)
        if tty:
            print("\r\033[K", end="", file=sys.stderr)
        for name, e in entries.items():
            if e.get("failure") and not e["failure"].startswith("skipped"):
                failed += 1
                print(f"torch_peers: {case['name']} [{name}]: {e['failure']}")
        print(summary_line(case, entries), flush=True)

    record["torch"] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton_version,
        "triton_skipped": triton_skipped,
        "device": props.name,
        "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command_line": " ".join(sys.argv),
        "warmup": warmup,
        "reps": reps,
        "cases": len(todo),
        "failed": failed,
    }
    out = args.out or args.record
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, out)
    print(f"torch_peers: {len(todo)} case(s), {failed} failed result(s); wrote {out}")
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main())
