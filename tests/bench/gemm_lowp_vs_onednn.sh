#!/usr/bin/env bash
# Tunes optune's low-precision CPU GEMM on each shape, then times the tuned and default configs
# against oneDNN's matmul of the same precision in one run (bench_gemm_lowp), beside the machine's
# measured float32 FMA peak and each output's error against a float64 product. Usage, from the
# repository root after a build with benchmarks:
#   bash tests/bench/gemm_lowp_vs_onednn.sh DTYPE [TRIALS] [WORKDIR]      (DTYPE: bf16, f16, i8 or u7)
# SHAPES="M,N,K M,N,K" replaces the shape list; TRIALS=0 reuses WORKDIR's database.
# AVX2 code on an AVX-512 machine: OPTUNE_MAX_CPU_ISA=avx2 tunes and compiles optune's candidates
# without AVX-512 and caps oneDNN (ONEDNN_MAX_CPU_ISA=AVX2); OPTUNE_BENCH_GEMM_LOWP names a
# bench_gemm_lowp built the same way, whose FMA peak is then AVX2's:
#   cmake -S . -B build-avx2 -DCMAKE_BUILD_TYPE=Release -DOPTUNE_BUILD_BENCH=ON \
#     -DOPTUNE_BENCH_ARCH_FLAGS="-march=native;-mno-avx512f"
#   cmake --build build-avx2 --target bench_gemm_lowp bench_emit_best
#   OPTUNE_MAX_CPU_ISA=avx2 OPTUNE_BENCH_GEMM_LOWP=build-avx2/tests/bench/bench_gemm_lowp \
#     bash tests/bench/gemm_lowp_vs_onednn.sh i8 32 build/gemm-lowp-i8-avx2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dtype=${1:?usage: gemm_lowp_vs_onednn.sh DTYPE [TRIALS] [WORKDIR]}
trials=${2:-64}
work=${3:-$root/build/gemm-lowp-$dtype}
bench_bin=${OPTUNE_BENCH_BIN:-$root/build/tests/bench}
mkdir -p "$work"
source "$root/tests/bench/emitted_gemm.sh"
if [ -n "${OPTUNE_MAX_CPU_ISA:-}" ] && [ -z "${OPTUNE_BENCH_GEMM_LOWP:-}" ]; then
  echo "gemm_lowp_vs_onednn.sh: OPTUNE_MAX_CPU_ISA=avx2 needs OPTUNE_BENCH_GEMM_LOWP (a bench_gemm_lowp built without AVX-512)" >&2
  exit 2
fi
shapes=${SHAPES:-"1024,1024,1024 196,256,2304 3136,64,576 49,512,4608"}
for shape in $shapes; do
  [ "$trials" = 0 ] && break
  "${OPTUNE_BIN:-$root/build/bin}/optune" tune --op gemm --shape "$shape" --dtype "$dtype" --trials "$trials" \
    --quiet --db "$work/tuned.db" | grep -E "workload|best|default"
done
compile_emitted --candidate --out "$work/best"
compile_emitted --default --which default --out "$work/default"
"${OPTUNE_BENCH_GEMM_LOWP:-$bench_bin/bench_gemm_lowp}" --dtype "$dtype" --shapes "$(echo "$shapes" | tr ' ' ';')" --rounds 3 "${candidates[@]}"
