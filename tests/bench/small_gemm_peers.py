#!/usr/bin/env python3
"""optune's tuned OpenCL SGEMM against cuBLAS FP32 (TF32 off) on the same GPU, shape by shape, for
opencl_gpu_bench.sh's `small` mode (issue 22: BERT's small-M GEMMs and odd shapes).

For each shape M,N,K: cuBLAS's time (a CUDA graph of 20 calls replayed, median over 20 replays:
no per-call CPU dispatch, as optune's profiling events time its own kernels); optune's default and
tuned times from the database the tuning wrote (medians of the worker's repeats, every pass of a
call included); and the relative L2 error of both against a
float64 product of the same inputs (uniform in [-1, 1], drawn here; optune's tuned config runs on
them through opencl_gemm_sweep, which also times it again).

Usage: small_gemm_peers.py OPTUNE DB SWEEP GEMM_CL SHAPE...
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch_peers import graph_time_ms  # beside this script, in the repository and in the GPU pack

torch.backends.cuda.matmul.allow_tf32 = False

MMA_KNOBS = ["mwg", "nwg", "kwg", "wm", "wn", "stages", "ldsm", "gsw", "splitk"]
FMA_KNOBS = ["mwg", "nwg", "kwg", "mdimc", "ndimc", "vwm", "vwn", "sa", "sb", "strm", "strn", "kwi", "db",
             "wlay", "gsw", "splitk"]


def records(optune, db, shape, history):
    args = [optune, "query", "--db", db, "--op", "gemm", "--shape", shape, "--target", "opencl", "--format", "json"]
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(optune))), "lib")
    out = subprocess.run(args + (["--history"] if history else ["--top", "1"]), capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=lib))
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else []


def sweep_line(config):
    if "math" in config:
        return "mma " + " ".join(config.get(k, "1") for k in MMA_KNOBS)
    return " ".join(config.get(k, "1") for k in FMA_KNOBS)


def relative_error(c, ref):
    return float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))


def main():
    optune, db, sweep, gemm_cl, shapes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    print("torch", torch.__version__, torch.cuda.get_device_name())
    rows = []
    for shape in shapes:
        m, n, k = (int(x) for x in shape.split(","))
        gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 11 + k)
        a = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
        b = torch.rand(k, n, device="cuda", generator=gen) * 2 - 1
        ref = a.double() @ b.double()
        cublas_ms = graph_time_ms(lambda: torch.mm(a, b))
        cublas_err = relative_error(torch.mm(a, b), ref)

        best = records(optune, db, shape, history=False)
        history = records(optune, db, shape, history=True)
        defaults = [r["median_seconds"] for r in history if r.get("is_default") and r["error_kind"] == "ok"]
        default_ms = 1e3 * min(defaults) if defaults else float("nan")
        tuned_ms, tuned_err, sweep_ms, config, arithmetic = float("nan"), float("nan"), float("nan"), {}, "?"
        if best:
            config = best[0]["config"]
            tuned_ms = 1e3 * best[0]["median_seconds"]
            arithmetic = "3xTF32" if config.get("math") == "tf32x3" else "FP32 FMA"
            with tempfile.TemporaryDirectory() as io:
                a.cpu().numpy().astype(np.float32).tofile(os.path.join(io, "a.bin"))
                b.cpu().numpy().astype(np.float32).tofile(os.path.join(io, "b.bin"))
                out = subprocess.run([sweep, gemm_cl, str(m), str(n), str(k)], input=sweep_line(config) + "\n",
                                     capture_output=True, text=True, env=dict(os.environ, OPTUNE_SWEEP_IO=io))
                print("   sweep:", out.stdout.strip(), out.stderr.strip()[-300:])
                path = os.path.join(io, "c_1.bin")
                if os.path.exists(path):
                    c = torch.from_numpy(np.fromfile(path, dtype=np.float32).reshape(m, n)).cuda()
                    tuned_err = relative_error(c, ref)
                fields = out.stdout.split()
                if "ms" in fields:
                    sweep_ms = float(fields[fields.index("ms") - 1])
        ratio = cublas_ms / tuned_ms
        rows.append((shape, default_ms, tuned_ms, sweep_ms, cublas_ms, ratio, arithmetic, tuned_err, cublas_err, config))
        print(f"{shape}: default {default_ms:.4f} ms, tuned {tuned_ms:.4f} ms (sweep {sweep_ms:.4f}), "
              f"cuBLAS {cublas_ms:.4f} ms, {ratio:.2f}x, {arithmetic}, err {tuned_err:.1e} vs cuBLAS {cublas_err:.1e}, "
              f"config {json.dumps(config, sort_keys=True)}", flush=True)

    print("\n| shape (M x N x K) | default (ms) | tuned (ms) | cuBLAS FP32 (ms) | cuBLAS / tuned | arithmetic "
          "| error tuned | error cuBLAS |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for shape, default_ms, tuned_ms, _, cublas_ms, ratio, arithmetic, tuned_err, cublas_err, _ in rows:
        print(f"| {shape.replace(',', ' x ')} | {default_ms:.4f} | {tuned_ms:.4f} | {cublas_ms:.4f} | {ratio:.2f}x "
              f"| {arithmetic} | {tuned_err:.1e} | {cublas_err:.1e} |")


if __name__ == "__main__":
    main()
