#!/usr/bin/env python3
"""cuBLAS FP32 SGEMM and cuDNN FP32 conv2d through PyTorch, TF32 off: the peers of optune's tuned
OpenCL kernels in tests/bench/opencl_gpu_bench.sh; `conv-keys KEY...` times cuDNN on conv2d workload keys
(dispatch_gpu.sh's held-out shapes). Prints one line per workload: median time over
repeats of CUDA-event-timed batches, and TFLOP/s (multiply-adds count as 2)."""
import math
import os
import re
import statistics
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm, as a tuned peer should


# The peers are timed as optune times its candidates (measure::Backend's repeats; the benchmark
# scripts export MIN_REPEAT_MS, the value they give optune, as PEER_MIN_REPEAT_MS): 5 repeats of
# batches lasting PEER_MIN_REPEAT_MS or more each, the median per call, after as long a warm-up of
# back-to-back batches. A GPU at full tensor-core load draws its power limit within a fraction of
# a second and lowers its clock (an H200 from 1,980 to about 1,450 MHz), so a peer timed in short
# batches from an idle GPU ran at the boost clock while optune's 40 ms repeats ran at the sustained
# one: cuBLAS bf16 4096^3 read 787 TFLOP/s so and 675-688 sustained, optune's kernel 787 and 672-675
# (docs/performance/cuda-gemm.md). 0 restores the old short batches (20 of 20 calls).
MIN_REPEAT_MS = float(os.environ.get("PEER_MIN_REPEAT_MS", "40"))
REPEATS = 5


def median_per_call_ms(batch, calls, repeat):
    """Median over `repeat` CUDA-event-timed runs of `batch` (which makes `calls` calls) per call."""
    costs = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        batch()
        end.record()
        torch.cuda.synchronize()
        costs.append(start.elapsed_time(end) / calls)
    return statistics.median(costs)


def sustained_ms(run_batch, calls_per_batch):
    """The protocol above for a batch of `calls_per_batch` calls: as many batches a repeat as last
    MIN_REPEAT_MS (from one timed batch), a warm-up of REPEATS such repeats, then REPEATS timed."""
    per_batch = median_per_call_ms(run_batch, calls_per_batch, 1) * calls_per_batch
    batches = max(1, math.ceil(MIN_REPEAT_MS / max(per_batch, 1e-6)))

    def repeat():
        for _ in range(batches):
            run_batch()

    median_per_call_ms(repeat, 1, REPEATS)  # warm-up: the GPU at its sustained clock
    return median_per_call_ms(repeat, batches * calls_per_batch, REPEATS)


def time_ms(fn, repeat=20, number=20):
    """fn's time per call, launched from Python in batches of `number` calls."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()

    def batch():
        for _ in range(number):
            fn()

    if MIN_REPEAT_MS > 0:
        return sustained_ms(batch, number)
    return median_per_call_ms(batch, number, repeat)


def graph_time_ms(fn, repeat=20, number=20):
    """Like time_ms, but the batch is replayed from a CUDA graph: no per-call CPU dispatch, so a
    small kernel (a batch-1 conv runs 20-100 us) is timed as the GPU runs it, as optune's
    profiling events time its own kernels."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(number):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    if MIN_REPEAT_MS > 0:
        return sustained_ms(graph.replay, number)
    return median_per_call_ms(graph.replay, number, repeat)


def gemm(n):
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    ms = time_ms(lambda: torch.mm(a, b))
    print(f"cublas  gemm.f32.M{n}.N{n}.K{n}  {ms:.4f} ms  {2 * n**3 / ms / 1e9:.2f} TFLOP/s")


def conv(c, h, k, stride):
    x = torch.rand(1, c, h, h, device="cuda") * 2 - 1
    w = torch.rand(k, c, 3, 3, device="cuda") * 2 - 1
    p = (h + 2 - 3) // stride + 1
    flops = 2 * k * p * p * c * 9
    run = lambda: torch.nn.functional.conv2d(x, w, stride=stride, padding=1)  # noqa: E731
    for how, ms in (("cudnn  ", time_ms(run)), ("cudnn-graph", graph_time_ms(run))):
        print(f"{how} conv2d.nchw.f32.N1.C{c}.H{h}.W{h}.K{k}.R3.S3.st{stride}.pad1  {ms:.4f} ms  "
              f"{flops / ms / 1e9:.2f} TFLOP/s")


def conv_key(key):
    """cuDNN FP32 on a conv2d workload key (conv2d.nchw.f32.N8.C64.H14.W14.K64.R3.S3.st1.pad1)."""
    fields = dict(re.findall(r"\.(N|C|H|W|K|R|S|st|pad)(\d+)", key))
    n, c, h, w, k, r, s, stride, pad = (int(fields[f]) for f in ("N", "C", "H", "W", "K", "R", "S", "st", "pad"))
    x = torch.rand(n, c, h, w, device="cuda") * 2 - 1
    weight = torch.rand(k, c, r, s, device="cuda") * 2 - 1
    p, q = (h + 2 * pad - r) // stride + 1, (w + 2 * pad - s) // stride + 1
    flops = 2 * n * k * p * q * c * r * s
    run = lambda: torch.nn.functional.conv2d(x, weight, stride=stride, padding=pad)  # noqa: E731
    ms = graph_time_ms(run)
    print(f"cudnn-graph {key}  {ms:.4f} ms  {flops / ms / 1e9:.2f} TFLOP/s")


if __name__ == "__main__":
    print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version())
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what == "conv-keys":  # cuDNN on the given conv2d workload keys
        for key in sys.argv[2:]:
            conv_key(key)
    if what in ("all", "gemm"):
        for n in (2048, 4096):
            gemm(n)
    if what in ("all", "conv"):
        for c, h, k, stride in ((64, 56, 64, 1), (128, 28, 128, 1), (256, 14, 256, 1), (512, 7, 512, 1),
                                (64, 56, 128, 2)):
            conv(c, h, k, stride)
