#!/usr/bin/env bash
# One tune on one GPU against the same tune on every GPU of the host at once (--target cuda:all):
# same trials and seed, each run with a compile cache of its own, one after the other in one call.
# Prints each run's wall time, trials, best and what each device measured, then the ratio
# (multi_gpu_tune.py). On a GPU machine, from a pack of tests/bench/pack_gpu_cuda.sh:
#   OPTUNE_BIN=$PACK/bin KERNELS=$PACK/kernels bash $PACK/multi_gpu_tune.sh [ROWS] [TRIALS] [WORKDIR]
# TARGETS="cuda:0 cuda:0,1 cuda:all" runs those targets in turn (the first is the baseline; default
# "cuda:0 cuda:all").
# Rows:
#   cuda-gemm    gemm.cuda's bf16 GEMM 4096 x 4096 x 4096 (bf16 in, f32 accumulate)
#   cuda-kernel  the kernel file matmul_cuda (FP32 FMA, its default 2048 x 2048)
#   cuda-conv    the kernel file conv2d_cuda (FP32 FMA, its default problem)
set -euo pipefail
rows=${1:-cuda-gemm,cuda-kernel}
trials=${2:-256}
work=${3:-/tmp/optune-multi-gpu}
optune=${OPTUNE_BIN:-build/bin}/optune
kernels=${KERNELS:-configs/kernels}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"

row_arguments() {
  case $1 in
    cuda-gemm) echo "--op gemm --shape 4096,4096,4096 --dtype bf16" ;;
    cuda-kernel) echo "--kernel $kernels/matmul_cuda.toml" ;;
    cuda-conv) echo "--kernel $kernels/conv2d_cuda.toml" ;;
    *) echo "unknown row '$1' (cuda-gemm, cuda-kernel, cuda-conv)" >&2; exit 2 ;;
  esac
}

"$optune" devices | grep -i cuda || true
for row in ${rows//,/ }; do
  read -r -a args <<< "$(row_arguments "$row")"
  for target in ${TARGETS:-cuda:0 cuda:all}; do
    run="$work/$row-${target//[:,]/-}"
    rm -rf "$run.db" "$run.db-wal" "$run.db-shm" "$run.cache"
    start=$(date +%s.%N)
    OPTUNE_CACHE_DIR="$run.cache" "$optune" tune "${args[@]}" --target "$target" --trials "$trials" --seed 1 \
      --format json --db "$run.db" > "$run.json" 2> "$run.log"
    end=$(date +%s.%N)
    awk -v start="$start" -v end="$end" 'BEGIN { printf "%.3f\n", end - start }' > "$run.wall"
  done
done
python3 "$here/multi_gpu_tune.py" "$work" ${rows//,/ }
