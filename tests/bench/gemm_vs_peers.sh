#!/usr/bin/env bash
# Tunes the CPU GEMM on each benchmark shape with optune, then times the tuned kernels against
# oneDNN, OpenBLAS and optune's default config in one run (bench_gemm). Usage, from the repository
# root after a build with benchmarks (the default):
#   bash tests/bench/gemm_vs_peers.sh [TRIALS] [WORKDIR]
# SHAPES="M,N,K M,N,K" replaces the shape list; TRIALS=0 skips tuning (WORKDIR's database
# already holds the shapes' records).
# AVX2 code on an AVX-512 machine: OPTUNE_MAX_CPU_ISA=avx2 tunes and compiles optune's candidates
# without AVX-512 and caps oneDNN (ONEDNN_MAX_CPU_ISA) and OpenBLAS (OPENBLAS_CORETYPE) alike;
# OPTUNE_BENCH_GEMM names a bench_gemm built the same way, whose FMA peak is then AVX2's:
#   cmake -S . -B build-avx2 -DCMAKE_BUILD_TYPE=Release -DOPTUNE_BUILD_BENCH=ON \
#     -DOPTUNE_BENCH_ARCH_FLAGS="-march=native;-mno-avx512f"
#   cmake --build build-avx2 --target bench_gemm
#   OPTUNE_MAX_CPU_ISA=avx2 OPTUNE_BENCH_GEMM=build-avx2/tests/bench/bench_gemm bash tests/bench/gemm_vs_peers.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
trials=${1:-150}
work=${2:-$root/build/gemm-vs-peers}
bench_bin=${OPTUNE_BENCH_BIN:-$root/build/tests/bench}
mkdir -p "$work"
source "$root/tests/bench/emitted_gemm.sh"
if [ -n "${OPTUNE_MAX_CPU_ISA:-}" ] && [ -z "${OPTUNE_BENCH_GEMM:-}" ]; then
  echo "gemm_vs_peers.sh: OPTUNE_MAX_CPU_ISA=avx2 needs OPTUNE_BENCH_GEMM (a bench_gemm built without AVX-512)" >&2; exit 2
fi
shapes=${SHAPES:-"256,256,256 512,512,512 1024,1024,1024 2048,2048,2048 196,256,2304 3136,64,576 49,512,4608"}
for shape in $shapes; do
  [ "$trials" = 0 ] && break
  "${OPTUNE_BIN:-$root/build/bin}/optune" tune --op gemm --shape "$shape" --tuner xgb --trials "$trials" --quiet \
    --db "$work/tuned.db" | grep -E "workload|best|default"
done
compile_emitted --candidate --out "$work/best"
# The template's own default for each shape, the config an untuned user runs.
compile_emitted --default --which default --out "$work/default"
shape_list=$(echo "$shapes" | tr ' ' ';')
"${OPTUNE_BENCH_GEMM:-$bench_bin/bench_gemm}" --shapes "$shape_list" --rounds 3 "${candidates[@]}"
