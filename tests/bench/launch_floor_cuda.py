#!/usr/bin/env python3
"""The CUDA side of opencl_launch_floor: what one tiny kernel costs through PyTorch on the same GPU.

Per probe: a single launch timed by CUDA events around it (synchronised after each; median of RUNS),
and the per-call time of a CUDA graph of 20 calls replayed (median of 20 replays), which is how the
cuBLAS figures of opencl_gpu_bench.sh's `small` mode are taken. Probes: an in-place add on one
float (one elementwise kernel), and cuBLAS FP32 (TF32 off) on 16 x 16 x 16 and 32 x 768 x 768.

Usage: launch_floor_cuda.py [RUNS]   (default 200)
"""
import statistics
import sys

import torch
from torch_peers import graph_time_ms  # beside this script, in the repository and in the GPU pack

torch.backends.cuda.matmul.allow_tf32 = False


def single_us(fn, runs):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    costs = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        costs.append(start.elapsed_time(end) * 1e3)
    return statistics.median(costs)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    print("torch", torch.__version__, torch.cuda.get_device_name(), f"; {runs} launches; microseconds, medians")
    one = torch.zeros(1, device="cuda")
    probes = [("add one float", lambda: one.add_(1))]
    for m, n, k in ((16, 16, 16), (32, 768, 768)):
        a, b = torch.rand(m, k, device="cuda"), torch.rand(k, n, device="cuda")
        c = torch.empty(m, n, device="cuda")
        probes.append((f"cuBLAS {m}x{n}x{k}", lambda a=a, b=b, c=c: torch.mm(a, b, out=c)))
    print(f"{'probe':<22} {'single (events)':>16} {'graph per call':>15}")
    for name, fn in probes:
        print(f"{name:<22} {single_us(fn, runs):16.2f} {graph_time_ms(fn) * 1e3:15.2f}")


if __name__ == "__main__":
    main()
