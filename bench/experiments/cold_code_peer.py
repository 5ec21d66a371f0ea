#!/usr/bin/env python3
"""cold_code_peer: an experiment, not a benchmark of record (session 31). Does a cuBLAS GEMM (via
torch.mm) launched after other kernels take longer than one launched after itself, as tmakit's
does (bench/experiments/gemm_trace's evict = 1)? For each shape, alternating, medians of `reps`:
  warm:  flush L2 (a read of a 3x-L2 buffer), torch.mm of the same shape on other operands (the
         same kernel; the timed operands stay cold), then the timed torch.mm
  evict: flush L2, two other GEMMs (fp32 256^3 and fp16 384 x 384 x 4096: other kernels), then
         the timed torch.mm
Times the bf16 torch.mm (A row-major, B as nn.Linear stores it) with CUDA events around it alone;
each round is queued behind torch.cuda._sleep, so that the host's enqueueing is not timed (the
unqueued first version's readings, session 31 calls 6-7, mixed it in).
    python3 bench/experiments/cold_code_peer.py [reps=30]
"""
import sys

import torch


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    dev = torch.device('cuda')
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.ones(3 * l2 // 4, dtype=torch.float32, device=dev)
    x32 = torch.randn(256, 256, device=dev)
    y16a = torch.randn(384, 4096, device=dev, dtype=torch.float16)
    y16b = torch.randn(4096, 384, device=dev, dtype=torch.float16)
    shapes = [(2048, 2048, 2048), (1024, 4096, 4096), (1024, 2112, 7168), (1024, 7168, 2048),
              (8192, 4096, 4096)]
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    print(torch.cuda.get_device_name(dev), 'torch', torch.__version__, 'reps', reps)
    for m, n, k in shapes:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16).t()
        d = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        a2 = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b2 = torch.randn(n, k, device=dev, dtype=torch.bfloat16).t()
        d2 = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        times = {'warm': [], 'evict': []}
        for r in range(2 * reps + 4):
            mode = 'warm' if r % 2 == 0 else 'evict'
            torch.cuda._sleep(1_000_000)  # ~0.5 ms of GPU time: the host queues the rest meanwhile
            if mode == 'warm':
                torch.mm(a2, b2, out=d2)
                flush.sum()
            else:
                flush.sum()
                torch.mm(x32, x32)
                torch.mm(y16a, y16b)
            e0.record()
            torch.mm(a, b, out=d)
            e1.record()
            e1.synchronize()
            if r >= 4:
                times[mode].append(e0.elapsed_time(e1) * 1000.0)
        med = {k2: sorted(v)[len(v) // 2] for k2, v in times.items()}
        print(f'{m}x{n}x{k}: warm {med["warm"]:.2f} us, evict {med["evict"]:.2f} us, '
              f'evict - warm {med["evict"] - med["warm"]:+.2f} us')


if __name__ == '__main__':
    main()
