#!/usr/bin/env python3
"""Times PyTorch on tma-bench's cases and merges the numbers into the bench's JSON record.

    python3 bench/torch_peers.py RESULTS.json [--out OUT.json] [--filter REGEX]

For every copy and transpose case in RESULTS.json (written by `tma-bench ... --json`), this builds
the same tensors (shape and strides read from the record), then times

    copy:       dst.copy_(src)                           (dst with the bench's dst strides)
    transpose:  x.t().contiguous()                       (2-D)
                x.transpose(-1, -2).contiguous()         (batched)

with the bench's policy: torch.cuda.Event around each run, `warmup` untimed runs, the median of
`reps` runs, buffers rotated so that consecutive runs touch more than 3x the L2 (or the L2 flushed
between runs when that does not fit), runs queued behind a sleep kernel so the events time the GPU
and not Python. Each result is verified first: the copy must equal src, the transpose x.t(),
element for element (the inputs are random and non-zero).

Each case gets an "implementations"."torch" entry shaped like the bench's own, and its
best_peer / ratio are recomputed with torch among the peers. The record is rewritten in place
unless --out is given. Exit codes: 0 done, 1 a torch result did not verify or a case failed,
2 bad arguments or record, 3 PyTorch or CUDA missing.
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
EXIT_NO_TORCH = 3

ROTATION_FACTOR = 3  # as tma-bench (tools/tma_bench/timing.hpp)
FLUSH_FACTOR = 2
MEMORY_MARGIN = 512 << 20  # bytes left free, as tma-bench (runner.cpp)
SPIN_MIN_US, SPIN_MAX_US, SPIN_SAFETY, ENQUEUE_EXTRA_US = 50.0, 500_000.0, 2.0, 5.0

DTYPES = {"u8": "uint8", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


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
    return p.parse_args()


def import_torch():
    try:
        import torch  # noqa: PLC0415 - imported here so the message below can explain its absence
    except ImportError as e:
        fail(f"PyTorch is not installed ({e}); run this where python3 has torch "
             "(the GPU machine's python3)", EXIT_NO_TORCH)
    if not torch.cuda.is_available():
        fail(f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is "
             f"False; built for CUDA {torch.version.cuda}): run this on the GPU machine",
             EXIT_NO_TORCH)
    return torch


def footprint_elements(shape, strides):
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


class Runner:
    """Allocation, input, verification and timing with the bench's policy."""

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

    def fill_random(self, x):
        """Random non-zero values: 1..255 for u8, 0.5 <= x < 1.5 for floats."""
        if x.dtype == self.torch.uint8:
            x.random_(1, 256)
        else:
            x.uniform_(0.5, 1.5)

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

    def time_runs(self, run, sets, flush):
        """Median/min/max ms of `run(set)`, queued behind a sleep kernel (see the module doc)."""
        torch = self.torch
        stream = torch.cuda.current_stream(self.device)
        nxt = 0
        host_us = []
        for _ in range(self.warmup):
            t0 = time.perf_counter()
            run(nxt % sets)
            host_us.append((time.perf_counter() - t0) * 1e6)
            nxt += 1
        torch.cuda.synchronize(self.device)
        host_per_launch = statistics.median(host_us)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.reps)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(self.reps)]
        spin_us = min(max(SPIN_SAFETY * self.reps * (host_per_launch + ENQUEUE_EXTRA_US),
                          SPIN_MIN_US), SPIN_MAX_US)
        for attempt in range(1, 4):
            torch.cuda._sleep(int(spin_us * self.sm_clock_khz * 1e-3))
            t0 = time.perf_counter()
            for r in range(self.reps):
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


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


def torch_case(runner, case):
    """The "torch" implementation entry for one case (never raises for the case's own errors)."""
    torch = runner.torch
    dtype = getattr(torch, DTYPES[case["dtype"]])
    esize = case["element_bytes"]
    shape, src_strides = case["shape"], case["src_strides"]
    dst_shape, dst_strides = case["dst_shape"], case["dst_strides"]
    suite = case["suite"]
    entry = {"role": "peer", "verified": False, "failure": None, "median_ms": None,
             "min_ms": None, "max_ms": None, "reps": None, "gbps": None}

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
    entry["l2_policy"] = (f"flush {FLUSH_FACTOR}x L2 between runs" if flush
                          else f"rotate {sets} sets > {ROTATION_FACTOR}x L2")
    return entry


def recompute_ratios(case):
    """best_peer / ratio / ceiling_fraction over every verified, timed implementation."""
    impls = case["implementations"]
    ours = next((v for v in impls.values() if v.get("role") == "ours"), None)
    peers = [(k, v) for k, v in impls.items()
             if v.get("role") == "peer" and v.get("verified") and v.get("gbps")]
    best = max(peers, key=lambda kv: kv[1]["gbps"], default=None)
    case["best_peer"] = best[0] if best else None
    ok = ours is not None and ours.get("gbps")
    case["ratio"] = ours["gbps"] / best[1]["gbps"] if ok and best else None
    if ok and impls.get("torch", {}).get("gbps"):
        case["ratio_vs_torch"] = ours["gbps"] / impls["torch"]["gbps"]


def main():
    args = parse_args()
    try:
        with open(args.record) as f:
            record = json.load(f)
        cases = record["cases"]
        policy = record["policy"]
        gpu = record["gpu"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read a tma-bench record from {args.record}: {e}", EXIT_USAGE)
    try:
        name_filter = re.compile(args.filter)
    except re.error as e:
        fail(f"--filter {args.filter!r} is not a valid regex: {e}", EXIT_USAGE)

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

    todo = [c for c in cases
            if c["suite"] in ("copy", "transpose") and c.get("status") != "skipped"
            and name_filter.search(c["name"])]
    tty = sys.stderr.isatty()
    failed = 0
    for i, case in enumerate(todo, 1):
        line = f"[{i}/{len(todo)}] torch {case['suite']} {case['dtype']} " + \
            "x".join(str(n) for n in case["shape"])
        print(f"\r\033[K{line} ..." if tty else f"{line} ...", end="" if tty else "\n",
              file=sys.stderr, flush=True)
        try:
            entry = torch_case(runner, case)
        except RuntimeError as e:  # CUDA errors and out-of-memory included
            entry = {"role": "peer", "verified": False, "failure": f"error: {e}"}
        torch.cuda.empty_cache()
        case["implementations"]["torch"] = entry
        recompute_ratios(case)
        if entry["failure"] and not entry["failure"].startswith("skipped"):
            failed += 1
            print(f"\r\033[K" if tty else "", end="", file=sys.stderr)
            print(f"torch_peers: {case['name']}: {entry['failure']}")
        elif entry.get("gbps"):
            ours = case["implementations"].get("tma", {}).get("gbps")
            vs = f"  tma/torch {ours / entry['gbps']:.2f}" if ours else ""
            if not tty:
                print(f"  {case['name']}: torch {entry['gbps']:.1f} GB/s{vs}")
    if tty:
        print("\r\033[K", end="", file=sys.stderr)

    record["torch"] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
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
    print(f"torch_peers: {len(todo)} case(s), {failed} failed; wrote {out}")
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main())
