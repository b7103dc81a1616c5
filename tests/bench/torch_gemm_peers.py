#!/usr/bin/env python3
"""cuBLAS GEMM through PyTorch in bf16 and f16 (float32 accumulation, as optune's gemm.cuda): the
peers of cuda_gemm_run.sh. Usage: torch_gemm_peers.py DTYPE M,N,K [M,N,K ...]. Prints per shape the
median of CUDA-event-timed batches, TFLOP/s, and the relative L2 error of C against a float64
reference of the same bf16/f16 inputs (as optune's check measures its candidates)."""
import sys

import torch

from torch_peers import time_ms  # beside this file, here and in the pack

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def main():
    dtype = DTYPES[sys.argv[1]]
    print("torch", torch.__version__, torch.cuda.get_device_name())
    for shape in sys.argv[2:]:
        m, n, k = (int(x) for x in shape.split(","))
        a = (torch.rand(m, k, device="cuda") * 2 - 1).to(dtype)
        b = (torch.rand(k, n, device="cuda") * 2 - 1).to(dtype)
        ms = time_ms(lambda: torch.mm(a, b))
        exact = torch.mm(a.double(), b.double())
        error = (torch.mm(a, b).double() - exact).norm() / exact.norm()
        print(f"cublas gemm.{sys.argv[1]}.M{m}.N{n}.K{k} {ms:.4f} ms {2 * m * n * k / ms / 1e9:.1f} TFLOP/s "
              f"rel_l2 {error:.2e}")


if __name__ == "__main__":
    main()
