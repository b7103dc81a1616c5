#!/usr/bin/env bash
# Tunes optune's low-precision CPU GEMM on each shape, then times the tuned and default configs
# against oneDNN's matmul of the same precision in one run (bench_gemm_lowp), beside the machine's
# measured float32 FMA peak and each output's error against a float64 product. Usage, from the
# repository root after a build with benchmarks:
#   bash tests/bench/gemm_lowp_vs_onednn.sh DTYPE [TRIALS] [WORKDIR]      (DTYPE: bf16, f16 or i8)
# SHAPES="M,N,K M,N,K" replaces the shape list; TRIALS=0 reuses WORKDIR's database.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dtype=${1:?usage: gemm_lowp_vs_onednn.sh DTYPE [TRIALS] [WORKDIR]}
trials=${2:-64}
work=${3:-$root/build/gemm-lowp-$dtype}
bench_bin=${OPTUNE_BENCH_BIN:-$root/build/tests/bench}
mkdir -p "$work"
shapes=${SHAPES:-"1024,1024,1024 196,256,2304 3136,64,576 49,512,4608"}
for shape in $shapes; do
  [ "$trials" = 0 ] && break
  "${OPTUNE_BIN:-$root/build/bin}/optune" tune --op gemm --shape "$shape" --dtype "$dtype" --trials "$trials" \
    --quiet --db "$work/tuned.db" | grep -E "workload|best|default"
done
candidates=()
compile_emitted() {  # FLAG, then bench_emit_best's arguments
  local flag=$1; shift
  while read -r mnk source; do
    object=${source%.cpp}.so
    c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I"$root/backends/cpu/include" "$source" -o "$object"
    candidates+=("$flag" "$mnk=$object")
  done < <("$bench_bin/bench_emit_best" --db "$work/tuned.db" "$@")
}
compile_emitted --candidate --out "$work/best"
compile_emitted --default --which default --out "$work/default"
"$bench_bin/bench_gemm_lowp" --dtype "$dtype" --shapes "$(echo "$shapes" | tr ' ' ';')" --rounds 3 "${candidates[@]}"
