#!/usr/bin/env bash
# optune's OpenCL templates tuned on a GPU against the vendor's libraries, all in one run:
# SGEMM at 2048 and 4096 (gemm mode) or ResNet-18's 3x3 conv layers at batch 1 (conv mode),
# tuned with `optune tune --target opencl`, then cuBLAS / cuDNN FP32 through PyTorch (TF32 off)
# and CLBlast's SGEMM measured on the same GPU in the same run.
#
# Usage: opencl_gpu_bench.sh PREFIX OUT MODE [TRIALS]
#   PREFIX  an optune install (bin/optune, bin/optune-worker, share/optune/opencl) with lib/ holding
#           the shared libraries the target machine lacks, bin/clblast_sgemm and bench/torch_peers.py
#           (tests/bench/pack_gpu_bench.sh makes it)
#   OUT     where the database and logs go
#   MODE    probe | gemm | conv | sweep (hand-picked gemm.cl configs, opencl_gemm_sweep_configs.txt,
#           at 2048 and 4096, then the gemm mode) | small (issue 22's shapes, SHAPES: each tuned
#           with TRIALS trials, then small_gemm_peers.py: cuBLAS FP32 and the errors on the same inputs)
#           | defaults (SHAPES again on OUT's database of an earlier small run: each shape's default
#           and its best records measured again in one call, `optune tune --trials 1 --remeasure 3`)
#   SHAPES  small and defaults modes: M,N,K shapes (default: BERT-base's at M = 32, 128, 512, 1000³,
#           1023x769x2049)
set -uo pipefail
prefix=$(cd "$1" && pwd); out=$2; mode=$3; trials=${4:-100}; shift $(( $# < 4 ? $# : 4 ))
shapes=("$@")
mkdir -p "$out"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$out/cache"

source "$(dirname "$0")/nvidia_opencl_icd.sh"

optune=("$prefix/bin/optune")
tune() {  # op shape trials
  echo "== optune tune --op $1 --shape $2 --trials $3"
  local start=$SECONDS
  "${optune[@]}" tune --op "$1" --shape "$2" --target opencl --trials "$3" \
    --batch-size 16 --repeat 5 --min-repeat-ms 20 --db "$out/gpu.db" --quiet
  echo "   wall $((SECONDS - start)) s"
}

nvidia-smi -L
"${optune[@]}" devices
case "$mode" in
  probe)
    tune gemm 2048,2048,2048 "$trials"
    "$prefix/bin/clblast_sgemm" 2048
    env -u LD_LIBRARY_PATH python3 "$prefix/bench/torch_peers.py" gemm
    ;;
  sweep|gemm)
    if [[ $mode == sweep ]]; then
      for n in 4096 2048; do
        echo "== opencl_gemm_sweep $n (MWG NWG KWG MDIMC NDIMC VWM VWN SA SB STRM STRN KWI DB WLAY GSW)"
        OPTUNE_SWEEP_VERBOSE=1 "$prefix/bin/opencl_gemm_sweep" "$prefix/share/optune/opencl/gemm.cl" $n $n $n \
          < "$prefix/bench/opencl_gemm_sweep_configs.txt"
      done
    fi
    tune gemm 2048,2048,2048 "$trials"
    tune gemm 4096,4096,4096 $((trials / 2))
    "$prefix/bin/clblast_sgemm" 2048 4096
    env -u LD_LIBRARY_PATH python3 "$prefix/bench/torch_peers.py" gemm
    ;;
  small)
    if (( ${#shapes[@]} == 0 )); then
      for m in 32 128 512; do shapes+=("$m,768,768" "$m,3072,768" "$m,768,3072"); done
      shapes+=(1000,1000,1000 1023,769,2049)
    fi
    for shape in "${shapes[@]}"; do tune gemm "$shape" "$trials"; done
    env -u LD_LIBRARY_PATH python3 "$prefix/bench/small_gemm_peers.py" "$prefix/bin/optune" "$out/gpu.db" \
      "$prefix/bin/opencl_gemm_sweep" "$prefix/share/optune/opencl/gemm.cl" "${shapes[@]}"
    ;;
  defaults)
    (( ${#shapes[@]} > 0 )) || { echo "defaults mode: name the shapes" >&2; exit 2; }
    for shape in "${shapes[@]}"; do
      echo "== $shape"
      "${optune[@]}" tune --op gemm --shape "$shape" --target opencl --trials 1 --remeasure 3 --repeat 5 \
        --min-repeat-ms 20 --db "$out/gpu.db" --quiet | grep -E "default|best|config"
    done
    ;;
  conv)
    for layer in C=64,H=56,W=56,K=64,stride=1 C=128,H=28,W=28,K=128,stride=1 C=256,H=14,W=14,K=256,stride=1 \
                 C=512,H=7,W=7,K=512,stride=1 C=64,H=56,W=56,K=128,stride=2; do
      tune conv2d "N=1,$layer,R=3,S=3,pad=1" "$trials"
    done
    env -u LD_LIBRARY_PATH python3 "$prefix/bench/torch_peers.py" conv
    ;;
esac
echo "== best per workload"
"${optune[@]}" query --db "$out/gpu.db" --target opencl --top 1
