#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): an A/B of two versions of one CUDA kernel
# source file, in one call. Each round copies one variant over the pack's share/optune/cuda/FILE and
# re-measures the TSV's configs (cuda_remeasure.sh, each variant with an empty cubin cache, the
# peers after it); the variants alternate, ROUNDS times each; the pack keeps variant B at the end.
# Usage: cuda_kernel_ab.sh PACK FILE A_COPY B_COPY TSV [ROUNDS]
#   e.g. cuda_kernel_ab.sh gpu-pack wgmma.cuh gpu-pack/wgmma_old.cuh gpu-pack/wgmma_new.cuh configs.tsv 2
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: cuda_kernel_ab.sh PACK FILE A_COPY B_COPY TSV [ROUNDS]" >&2; exit 2; }
pack=$(cd "$1" && pwd); file=$2; a=$3; b=$4; tsv=$5; rounds=${6:-2}
target="$pack/share/optune/cuda/$file"
[ -f "$target" ] || { echo "cuda_kernel_ab.sh: no $target in the pack" >&2; exit 2; }
[ -f "$a" ] && [ -f "$b" ] && [ -f "$tsv" ] || { echo "cuda_kernel_ab.sh: $a, $b or $tsv missing" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for round in $(seq "$rounds"); do
  for variant in A B; do
    if [ "$variant" = A ]; then cp "$a" "$target"; else cp "$b" "$target"; fi
    echo "#### round $round: $variant"
    OPTUNE_CACHE_DIR=$(mktemp -d) bash "$pack/cuda_remeasure.sh" "$pack" "$tsv" 2>&1
  done
done
