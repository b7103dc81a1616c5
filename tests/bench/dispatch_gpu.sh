#!/usr/bin/env bash
# One GPU range of dispatch_bench.sh (bf16 GEMM on CUDA), then cuBLAS (PyTorch) bf16 on its
# held-out shapes in the same call. Runs from a pack (pack_gpu_cuda.sh) on the GPU machine:
#   bash PACK/dispatch_gpu.sh RANGE SAMPLES TRIALS WORKDIR      (HELD=4 held-out shapes)
# e.g. bash gpu-pack/cuda/dispatch_gpu.sh M=1..2048,N=4096,K=4096 24 16 /tmp/dg1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
range=$1; samples=$2; trials=$3; work=$4
TARGET=cuda DTYPE=bf16 OPTUNE_PREFIX=$here RANGES="gemm:$range" SAMPLES=$samples bash "$here/dispatch_bench.sh" "$work" "$trials" "${HELD:-4}"
json=$(ls -t "$work"/*.json | head -1)
shapes=$(python3 -c "import json,sys,re; r=json.load(open('$json')); print(' '.join(','.join(re.findall(r'[MNK](\d+)', h['workload'])) for h in r['held_out']))")
cd "$here" && python3 torch_gemm_peers.py bf16 $shapes
