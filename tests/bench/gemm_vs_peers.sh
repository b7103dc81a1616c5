#!/usr/bin/env bash
# Tunes the CPU GEMM on each benchmark shape with optune, then times the tuned kernels against
# oneDNN, OpenBLAS and optune's default config in one run (bench_gemm). Usage, from the repository
# root after a build with benchmarks (the default):
#   bash tests/bench/gemm_vs_peers.sh [TRIALS] [WORKDIR]
# SHAPES="M,N,K M,N,K" replaces the shape list; TRIALS=0 skips tuning (WORKDIR's database
# already holds the shapes' records).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
trials=${1:-150}
work=${2:-$root/build/gemm-vs-peers}
mkdir -p "$work"
shapes=${SHAPES:-"256,256,256 512,512,512 1024,1024,1024 2048,2048,2048 196,256,2304 3136,64,576 49,512,4608"}
for shape in $shapes; do
  [ "$trials" = 0 ] && break
  "${OPTUNE_BIN:-$root/build/bin}/optune" tune --op gemm --shape "$shape" --tuner xgb --trials "$trials" --quiet \
    --db "$work/tuned.db" | grep -E "workload|best|default"
done
candidates=()
while read -r mnk source; do
  object=${source%.cpp}.so
  c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I"$root/backends/cpu/include" "$source" -o "$object"
  candidates+=(--candidate "$mnk=$object")
done < <("${OPTUNE_BENCH_BIN:-$root/build/tests/bench}/bench_emit_best" --db "$work/tuned.db" --out "$work/best")
# The template's own default for each shape, the config an untuned user runs.
while read -r mnk source; do
  object=${source%.cpp}.so
  c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I"$root/backends/cpu/include" "$source" -o "$object"
  candidates+=(--default "$mnk=$object")
done < <("${OPTUNE_BENCH_BIN:-$root/build/tests/bench}/bench_emit_best" --db "$work/tuned.db" --which default --out "$work/default")
shape_list=$(echo "$shapes" | tr ' ' ';')
"${OPTUNE_BENCH_BIN:-$root/build/tests/bench}/bench_gemm" --shapes "$shape_list" --rounds 3 "${candidates[@]}"
