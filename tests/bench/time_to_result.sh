#!/usr/bin/env bash
# Time to a result (issue 42): wall time until a tuning run first holds a config within 5% of the
# best that a long reference run finds, with today's settings ("after": bail-out 2, adaptive
# timing, xgb's run-time variants of built objects, compile-ahead and CUDA's 5 ms repeats where
# they apply, CPU candidates reading their template's precompiled header) against the settings
# before them ("before": --bail-out off --timing full --cheap-share 0 --compile-ahead off
# --min-repeat-ms 40, OPTUNE_PRECOMPILED_HEADERS=0), the median of SEEDS seeds each. Rows:
#   gemm   CPU GEMM 1024 x 1024 x 1024 (gemm.cpu, float32)
#   conv   a ResNet-18 conv layer on the CPU (conv2d.cpu: 1x128x28x28, 128 filters 3x3)
#   pocl   a kernel file on PoCL (configs/kernels/conv2d.toml, OpenCL on this CPU)
# and on the GPU machine (from a pack of tests/bench/pack_gpu_cuda.sh, run there as
# `OPTUNE_BIN=$PACK/bin KERNELS=$PACK/kernels bash $PACK/time_to_result.sh cuda-kernel,cuda-gemm ...`):
#   cuda-kernel  the kernel file matmul_cuda (FP32 FMA, 2048 x 2048)
#   cuda-gemm    gemm.cuda's bf16 GEMM 4096 x 4096 x 4096 (bf16 with f32 accumulate)
#   opencl-gemm  gemm.opencl's float32 GEMM 4096 x 4096 x 4096 on the GPU's OpenCL driver (source
#                $PACK/nvidia_opencl_icd.sh first, so that `--target opencl` is the GPU)
# Usage, from the repository root after a build:
#   bash tests/bench/time_to_result.sh [ROWS] [TRIALS] [SEEDS] [REF_TRIALS] [WORKDIR]
# With BEFORE_BIN set (the bin folder of optune built from eafd8c8, the commit before issue 42:
# `git worktree add /tmp/old eafd8c8 && cmake -S /tmp/old -B /tmp/old/build -DOPTUNE_BUILD_TESTS=OFF
# -DOPTUNE_BUILD_BENCH=OFF -DOPTUNE_BUILD_PYTHON=OFF && cmake --build /tmp/old/build --target optune
# optune-worker`), "before" is that build with its own defaults: optune as it was, templates and
# all, rather than today's build with today's savings turned off.
# defaults: gemm,conv,pocl 64 3 400 build/time-to-result. A row whose reference.db exists keeps it,
# and a run already in WORKDIR (its .json written) is kept: a call with more SEEDS adds seeds.
# Nothing else may run on the machine meanwhile (its candidates' timings are the result).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rows=${1:-gemm,conv,pocl}
trials=${2:-64}
seeds=${3:-3}
ref_trials=${4:-400}
work=${5:-$root/build/time-to-result}
optune=${OPTUNE_BIN:-$root/build/bin}/optune
kernels=${KERNELS:-$root/configs/kernels}
before=(--bail-out off --timing full --cheap-share 0 --compile-ahead off --min-repeat-ms 40)
before_optune=$optune
modes=${MODES:-before,after}  # MODES=after runs today's again beside the "before" runs a WORKDIR holds
if [ -n "${BEFORE_BIN:-}" ]; then
  before_optune=$BEFORE_BIN/optune
  before=()
fi

row_arguments() {
  case $1 in
    gemm) echo "--op gemm --shape 1024,1024,1024 --target cpu" ;;
    conv) echo "--op conv2d --shape N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1 --target cpu" ;;
    pocl) echo "--kernel $kernels/conv2d.toml --target opencl" ;;
    cuda-kernel) echo "--kernel $kernels/matmul_cuda.toml --target cuda" ;;
    cuda-gemm) echo "--op gemm --shape 4096,4096,4096 --dtype bf16 --target cuda" ;;
    opencl-gemm) echo "--op gemm --shape 4096,4096,4096 --target opencl" ;;
    *) echo "unknown row '$1' (gemm, conv, pocl, cuda-kernel, cuda-gemm, opencl-gemm)" >&2; exit 2 ;;
  esac
}

# One run into DB, its start and wall time in DB's .json.
tune() {
  local optune=$1 db=$2; shift 2
  [ -f "${db%.db}.json" ] && return  # done in an earlier call: more seeds add to a WORKDIR
  rm -f "$db" "$db-wal" "$db-shm"
  # Every run compiles from nothing, as a first tune of a kernel does: its own empty program cache
  # (optune's compiled OpenCL programs and cubins), PoCL's kernel cache, and no CUDA JIT cache
  # (NVIDIA's OpenCL); otherwise a run finds what the reference and earlier seeds compiled.
  local cache="${db%.db}.cache"
  rm -rf "$cache"; mkdir -p "$cache/pocl"
  local start end
  start=$(date +%s.%N)
  OPTUNE_CACHE_DIR=$cache POCL_CACHE_DIR=$cache/pocl CUDA_CACHE_DISABLE=1 \
    "$optune" tune "$@" --remeasure 0 --quiet --db "$db" > "${db%.db}.log" 2>&1
  end=$(date +%s.%N)
  rm -rf "$cache"
  awk -v start="$start" -v end="$end" 'BEGIN { printf "{\"start\": %.3f, \"wall\": %.3f}\n", start, end - start }' \
    > "${db%.db}.json"
}

"$optune" devices | head -3
for row in ${rows//,/ }; do
  read -r -a args <<< "$(row_arguments "$row")"
  mkdir -p "$work/$row"
  [ -f "$work/$row/reference.db" ] || tune "$optune" "$work/$row/reference.db" "${args[@]}" --trials "$ref_trials" --seed 100
  for seed in $(seq 1 "$seeds"); do
    if [[ $modes == *before* ]]; then
      OPTUNE_PRECOMPILED_HEADERS=0 tune "$before_optune" "$work/$row/before-$seed.db" "${args[@]}" --trials "$trials" --seed "$seed" ${before[@]+"${before[@]}"}
    fi
    if [[ $modes == *after* ]]; then tune "$optune" "$work/$row/after-$seed.db" "${args[@]}" --trials "$trials" --seed "$seed"; fi
  done
done
python3 "$(dirname "${BASH_SOURCE[0]}")/time_to_result.py" "$work"
