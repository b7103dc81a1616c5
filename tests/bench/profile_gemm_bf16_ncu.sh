#!/usr/bin/env bash
# Nsight Compute of optune's default bf16 4096^3 kernel (gemm_tma.cuda) and of cuBLAS's through
# PyTorch, one launch each, on the GPU machine from a pack of pack_gpu_cuda.sh (which copies this
# script): bash PACK/profile_gemm_bf16_ncu.sh PACK OUT_DIR. ncu locks the clocks, so compare cycles.
pack=$(cd "$1" && pwd); out=$2
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
ncu --target-processes all -k regex:gemm_tma -c 1 $sections "$pack/bin/optune" tune --op gemm --dtype bf16 \
  --shape 4096,4096,4096 --target cuda --trials 1 --remeasure 0 --db /tmp/p.db > "$out/ncu_optune.txt" 2>&1
echo "optune rc=$?"
ncu -k regex:'nvjet|gemm|sm90|cutlass' --launch-skip 2 -c 1 $sections python3 -c "
import torch
a=(torch.rand(4096,4096,device='cuda')*2-1).bfloat16(); b=(torch.rand(4096,4096,device='cuda')*2-1).bfloat16()
for _ in range(5): torch.mm(a,b)
torch.cuda.synchronize()" > "$out/ncu_cublas.txt" 2>&1
echo "cublas rc=$?"
