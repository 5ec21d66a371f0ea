"""torch_loop: an experiment, not a benchmark of record. torch.mm (cuBLAS) on one bf16 shape (A
row-major, B column-major, as tma-bench's "rc" layout) back to back for a number of seconds;
prints the sustained TFLOP/s (the peer of bench/experiments/gemm_loop).
    python3 torch_loop.py [m=8192] [n=7168] [k=2048] [seconds=3]"""
import sys
import time

import torch

m, n, k = (int(x) for x in (sys.argv[1:4] + ["8192", "7168", "2048"][len(sys.argv[1:4]):]))
seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0


def fill(count, seed):
    """experiment.cuh's fill: bf16 bit patterns 0x3C00 | (hash of the index and seed) & 0x3FF."""
    i = torch.arange(count, dtype=torch.int64, device="cuda")
    x = ((i * 2654435761) & 0xFFFFFFFF) ^ seed
    x = x ^ (x >> 13)
    return (0x3C00 | (x & 0x3FF)).to(torch.int16).view(torch.bfloat16)


a = fill(m * k, 1).view(m, k)
b = fill(n * k, 2).view(n, k).t()  # k x n, column-major: gemm_loop's B
d = torch.mm(a, b)
torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
runs, t0 = 0, time.time()
e0.record()
while True:
    for _ in range(20):
        torch.mm(a, b, out=d)
        runs += 1
    e1.record()
    e1.synchronize()
    if time.time() - t0 >= seconds:
        break
ms = e0.elapsed_time(e1)
print(f"torch.mm {m}x{n}x{k}: {runs} runs, {1e3 * ms / runs:.1f} us each, "
      f"{2.0 * m * n * k * runs / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
