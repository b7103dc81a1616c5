#!/usr/bin/env python3
"""cuDNN conv2d through PyTorch in bf16 or f16 on channels-last tensors (float32 accumulation), the
peer of optune's conv2d_tma.cuda in cuda_conv_run.sh. Usage:
  torch_conv_peers.py DTYPE LAYER [LAYER ...]   time cuDNN on each layer (a --shape text, N=..,C=..)
  torch_conv_peers.py --list resnet50 BATCH     the distinct conv layers of ResNet-50 (ImageNet,
                                                224 x 224) whose C is a multiple of 8, one a line
  torch_conv_peers.py --compare OPTUNE PEER     optune's best (best_check_errors.py's lines) over
                                                cuDNN's per layer, and their geometric mean
cuDNN picks its fastest algorithm (benchmark mode). Per layer: the median of CUDA-event-timed
batches of 20 calls replayed from a CUDA graph (PyTorch's own dispatch per call, 10 us and more,
would otherwise be what a small layer's time measures; the eager time is printed beside it),
TFLOP/s (a multiply-add counts 2), and the relative L2 error of the output against a float64
convolution of the same low-precision inputs, as optune's check measures its candidates."""
import math
import re
import sys

DTYPES = ("bf16", "f16")
# ResNet-50 v1.5 (torchvision): (C, H, K, R, stride) of each distinct conv layer but the stem (C = 3).
RESNET50 = [(64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 64, 1, 1),
            (256, 56, 128, 1, 1), (128, 56, 128, 3, 2), (128, 28, 512, 1, 1), (256, 56, 512, 1, 2),
            (512, 28, 128, 1, 1), (128, 28, 128, 3, 1), (512, 28, 256, 1, 1), (256, 28, 256, 3, 2),
            (256, 14, 1024, 1, 1), (512, 28, 1024, 1, 2), (1024, 14, 256, 1, 1), (256, 14, 256, 3, 1),
            (1024, 14, 512, 1, 1), (512, 14, 512, 3, 2), (512, 7, 2048, 1, 1), (1024, 14, 2048, 1, 2),
            (2048, 7, 512, 1, 1), (512, 7, 512, 3, 1)]


def layer_list(batch):
    return [f"N={batch},C={c},H={h},W={h},K={k},R={r},S={r},stride={s},pad={r // 2}" for c, h, k, r, s in RESNET50]


def parse(layer):
    fields = dict(part.split("=") for part in layer.split(","))
    get = lambda name, default=None: int(fields.get(name, default))  # noqa: E731
    return dict(N=get("N", 1), C=get("C"), H=get("H"), W=get("W"), K=get("K"), R=get("R"), S=get("S"),
                stride=get("stride", 1), pad=get("pad", 1), dilation=get("dilation", 1))


def key(dtype, d):
    return (f"conv2d.nhwc.{dtype}.N{d['N']}.C{d['C']}.H{d['H']}.W{d['W']}.K{d['K']}.R{d['R']}.S{d['S']}"
            f".st{d['stride']}.pad{d['pad']}.dil{d['dilation']}.g1")


def peer(dtype, layers):
    import torch
    from torch_peers import graph_time_ms, time_ms  # beside this file, here and in the pack

    torch.backends.cudnn.benchmark = True
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    print("torch", torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version())
    for layer in layers:
        d = parse(layer)
        x = (torch.rand(d["N"], d["C"], d["H"], d["W"], device="cuda") * 2 - 1).to(torch_dtype)
        w = (torch.rand(d["K"], d["C"], d["R"], d["S"], device="cuda") * 2 - 1).to(torch_dtype)
        x, w = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
        conv = torch.nn.functional.conv2d
        args = dict(stride=d["stride"], padding=d["pad"], dilation=d["dilation"])
        run = lambda: conv(x, w, **args)  # noqa: E731
        out = run()
        eager_ms = time_ms(run)
        ms = graph_time_ms(run)
        exact = conv(x.double(), w.double(), **args)
        error = (out.double() - exact).norm() / exact.norm()
        p, q = out.shape[2], out.shape[3]
        flops = 2 * d["N"] * d["K"] * p * q * d["C"] * d["R"] * d["S"]
        print(f"cudnn {key(dtype, d)} {ms:.4f} ms {flops / ms / 1e9:.1f} TFLOP/s rel_l2 {error:.2e} "
              f"(eager {eager_ms:.4f} ms)")


def compare(optune_file, peer_file):
    best = {m.group(1): float(m.group(2)) for m in re.finditer(r"^optune (\S+) best ([\d.]+) TFLOP/s",
                                                                 open(optune_file).read(), re.M)}
    ratios = []
    for m in re.finditer(r"^cudnn (\S+) ([\d.]+) ms ([\d.]+) TFLOP/s", open(peer_file).read(), re.M):
        workload, tflops = m.group(1), float(m.group(3))
        if workload not in best:
            print(f"{workload}: no optune record")
            continue
        ratios.append(best[workload] / tflops)
        print(f"{workload}: optune {best[workload]:.1f} cuDNN {tflops:.1f} TFLOP/s ratio {ratios[-1]:.2f}x")
    if ratios:
        print(f"geomean over {len(ratios)} layers: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x cuDNN")


def main(argv):
    if argv[0] == "--list":
        print("\n".join(layer_list(int(argv[2]))))
    elif argv[0] == "--compare":
        compare(argv[1], argv[2])
    elif argv[0] in DTYPES:
        peer(argv[0], argv[1:])
    else:
        sys.exit(f"torch_conv_peers.py: unknown dtype or mode '{argv[0]}' (expected {', '.join(DTYPES)}, --list, --compare)")


if __name__ == "__main__":
    main(sys.argv[1:])
