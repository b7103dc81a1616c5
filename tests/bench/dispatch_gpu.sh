#!/usr/bin/env bash
# One GPU range of dispatch_bench.sh, then the cuBLAS or cuDNN peer (PyTorch) on its held-out
# shapes in the same call. Runs from a pack (pack_gpu_cuda.sh) on the GPU machine:
#   bash PACK/dispatch_gpu.sh [OP:]RANGE SAMPLES TRIALS WORKDIR    (HELD=4 held-out shapes)
# OP is gemm (default) or conv2d; TARGET (cuda) and DTYPE (bf16; empty: f32) pass to dispatch.
# e.g. bash gpu-pack/cuda/dispatch_gpu.sh M=1..2048,N=4096,K=4096 24 16 /tmp/dg1
#      TARGET=opencl DTYPE= bash gpu-pack/cuda/dispatch_gpu.sh conv2d:N=1..64,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1 12 24 /tmp/dg2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
range=$1; samples=$2; trials=$3; work=$4
op=gemm
case $range in *:*) op=${range%%:*}; range=${range#*:} ;; esac
target=${TARGET:-cuda}
dtype=${DTYPE-bf16}
[ "$target" = opencl ] && source "$here/nvidia_opencl_icd.sh"
TARGET=$target DTYPE=$dtype OPTUNE_PREFIX=$here RANGES="$op:$range" SAMPLES=$samples \
  bash "$here/dispatch_bench.sh" "$work" "$trials" "${HELD:-4}"
json=$(ls -t "$work"/*.json | head -1)
keys=$(python3 -c "import json; print(' '.join(h['workload'] for h in json.load(open('$json'))['held_out']))")
cd "$here"
if [ "$op" = gemm ]; then
  python3 torch_gemm_peers.py "${dtype:-f32}" $(echo "$keys" | python3 -c "import re,sys; print(' '.join(','.join(re.findall(r'[MNK](\d+)', k)) for k in sys.stdin.read().split()))")
else
  python3 torch_peers.py conv-keys $keys
fi
