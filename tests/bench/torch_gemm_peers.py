#!/usr/bin/env python3
"""cuBLAS GEMM through PyTorch in bf16 and f16 (float32 accumulation, as optune's gemm.cuda), in
f32 with TF32 off (FP32 FMA: the peer of optune's 3xTF32 gemm_3xtf32.cuda), and
fp8 (e4m3 in, bf16 out, per-tensor float32 scales: torch._scaled_mm, B column-major, as optune's
gemm.e4m3) both with its default accumulation (use_fast_accum=False: float32 promotion, as
optune's promote_every 1) and with use_fast_accum=True (as promote_every 0), and int8 (s8 in, int32
out: torch._int_mm, M > 16, N and K multiples of 8): the peers of cuda_gemm_run.sh. Usage:
torch_gemm_peers.py DTYPE M,N,K [M,N,K ...] with DTYPE bf16, f16, f32, e4m3 or i8. Prints per shape the
median of CUDA-event-timed batches, TFLOP/s, and the relative L2 error of C against a float64
reference of the same low-precision inputs (as optune's check measures its candidates)."""
import sys

import torch

from torch_peers import time_ms  # beside this file, here and in the pack

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
torch.backends.cuda.matmul.allow_tf32 = False  # f32: cuBLAS's FP32 FMA, the peer of optune's 3xTF32


def scaled_mm_peer(m, n, k):
    """torch._scaled_mm at one shape, with float32 promotion and with fast accumulation."""
    a = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
    b = (torch.rand(n, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn).t()  # K x N, column-major
    scale_a = torch.rand((), device="cuda") * 2 - 1
    scale_b = torch.rand((), device="cuda") * 2 - 1
    exact = torch.mm(a.double(), b.double()) * (scale_a.double() * scale_b.double())
    for fast in (False, True):
        def run():
            return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                                    use_fast_accum=fast)
        ms = time_ms(run)
        error = (run().double() - exact).norm() / exact.norm()
        print(f"scaled_mm{'_fast' if fast else ''} gemm.e4m3.M{m}.N{n}.K{k} {ms:.4f} ms "
              f"{2 * m * n * k / ms / 1e9:.1f} TFLOP/s rel_l2 {error:.2e}")


def int_mm_peer(m, n, k):
    """torch._int_mm at one shape: s8 x s8, int32 sums and output (exact)."""
    if m <= 16 or n % 8 or k % 8:
        print(f"cublas gemm.i8.M{m}.N{n}.K{k}: torch._int_mm takes M > 16 and N, K multiples of 8 only")
        return
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device="cuda")
    ms = time_ms(lambda: torch._int_mm(a, b))
    exact = torch.mm(a.double(), b.double())
    error = (torch._int_mm(a, b).double() - exact).norm() / exact.norm()
    print(f"cublas gemm.i8.M{m}.N{n}.K{k} {ms:.4f} ms {2 * m * n * k / ms / 1e9:.1f} TOP/s rel_l2 {error:.2e}")


def main():
    print("torch", torch.__version__, torch.cuda.get_device_name())
    for shape in sys.argv[2:]:
        m, n, k = (int(x) for x in shape.split(","))
        if sys.argv[1] == "e4m3":
            scaled_mm_peer(m, n, k)
            continue
        if sys.argv[1] == "i8":
            int_mm_peer(m, n, k)
            continue
        dtype = DTYPES[sys.argv[1]]
        a = (torch.rand(m, k, device="cuda") * 2 - 1).to(dtype)
        b = (torch.rand(k, n, device="cuda") * 2 - 1).to(dtype)
        ms = time_ms(lambda: torch.mm(a, b))
        exact = torch.mm(a.double(), b.double())
        error = (torch.mm(a, b).double() - exact).norm() / exact.norm()
        print(f"cublas gemm.{sys.argv[1]}.M{m}.N{n}.K{k} {ms:.4f} ms {2 * m * n * k / ms / 1e9:.1f} TFLOP/s "
              f"rel_l2 {error:.2e}")


if __name__ == "__main__":
    main()
