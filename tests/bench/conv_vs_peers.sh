#!/usr/bin/env bash
# Tunes the conv layers of ResNet-18 and MobileNet v1 with optune (`tune --suite`, the gradient
# task scheduler, one budget per network), then times the best candidates against oneDNN,
# OpenBLAS im2col + sgemm and optune's default configs in one run (bench_conv). Usage, from the
# repository root after a build with benchmarks (-DOPTUNE_BUILD_BENCH=ON):
#   bash tests/bench/conv_vs_peers.sh [BUDGET] [WORKDIR] [more tune options, e.g. --batch-size 6]
# BUDGET is tune's --budget per network: trials (600) or time (45m). Resumable: a second run
# continues tuning in the same database; BUDGET 0 skips tuning and benchmarks what it holds;
# BUDGET defaults needs no database: it times optune's default configs only (no tuned row).
# BENCH_ARGS (environment) goes to bench_conv, e.g. BENCH_ARGS="--rounds 3 --layers conv1,pw7".
# LAYOUT=nchw8c (environment): the networks keep that layout between conv layers (tune, emit and
# bench with --layout): optune's candidates and oneDNN's user memory are in it, nothing is
# timed with a layout transform (the stems read the NCHW image, as the suites pin them).
# DTYPE=f32|bf16|f16|i8|u7 (environment, default f32): the precision of every layer, tuned, emitted
# and benchmarked (bench_conv --dtype); WORKDIR defaults to build/conv-vs-peers-DTYPE for other
# dtypes than f32. Arithmetic of the rows:
#   f32:  float32 throughout; every row, OpenBLAS's included.
#   bf16: bf16 input, filter and output, float32 accumulation (optune: conv2d_bf16.cpu where the
#         CPU has avx512_bf16, else the float32 templates widened; oneDNN: bf16 src/weights/dst).
#   f16:  f16 input, filter and output, float32 accumulation (optune: the float32 templates
#         widened; oneDNN: f16 where its build implements it on this CPU, else "unavailable").
#   i8:   u8 x s8 with int32 accumulation and int32 output (optune: conv2d_int8.cpu, NCHW only,
#         so no LAYOUT, and depthwise_conv2d.cpu widened; oneDNN: u8 src, s8 weights, s32 dst).
#   u7:   i8 with activations in 0..127 (7-bit, PyTorch's reduce_range; AVX2 code multiplies
#         them by vpmaddubsw, exactly), the 3x3 and 1x1 layers only (depthwise takes no u7).
# No OpenBLAS rows for other dtypes than f32; their rows add the relative L2 error against a
# float64 reference of the same inputs (0 for int8) and the machine's float32 FMA peak. The
# goal "int8 and bf16 conv2d at or above oneDNN's geomean on ResNet-18's 3x3 layers" reads off
# the tuned row's geometric mean with e.g.
#   DTYPE=i8 BENCH_ARGS="--layers layer1.conv3x3,layer2.conv3x3,layer3.conv3x3,layer4.conv3x3" ...
# `optune tune --suite` takes no --dtype (it goes with --shape only), so the suites are tuned and
# emitted from copies in WORKDIR that carry a suite-level `dtype = "..."` key.
# AVX2 code on an AVX-512 machine: OPTUNE_MAX_CPU_ISA=avx2 tunes and compiles optune's candidates
# without AVX-512 and caps oneDNN alike (isa_cap.sh); OPTUNE_BENCH_CONV names a bench_conv built
# without AVX-512 (cmake -DOPTUNE_BENCH_ARCH_FLAGS="-march=native;-mno-avx512f", as
# gemm_lowp_vs_onednn.sh says).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
budget=${1:-600}
dtype=${DTYPE:-f32}
work_default=$root/build/conv-vs-peers
[ "$dtype" = f32 ] || work_default+=-$dtype
work=${2:-$work_default}
shift $(($# < 2 ? $# : 2))
bin=${OPTUNE_BIN:-$root/build/bin}
bench=${OPTUNE_BENCH_BIN:-$root/build/tests/bench}
# SUITES="a.toml b.toml" (environment) replaces the two networks, e.g. tests/bench/suites/resnet18_3x3.toml
# (ResNet-18's 3x3 layers, which the low-precision goal names).
read -r -a suites <<<"${SUITES:-$root/configs/workloads/resnet18.toml $root/configs/workloads/mobilenet_v1.toml}"
layout=()
[ -n "${LAYOUT:-}" ] && layout=(--layout "$LAYOUT")
mkdir -p "$work"
source "$root/tests/bench/isa_cap.sh"
if [ -n "${OPTUNE_MAX_CPU_ISA:-}" ] && [ -z "${OPTUNE_BENCH_CONV:-}" ]; then
  echo "conv_vs_peers.sh: OPTUNE_MAX_CPU_ISA=avx2 needs OPTUNE_BENCH_CONV (a bench_conv built without AVX-512)" >&2; exit 2
fi
if [ "$dtype" != f32 ]; then  # the suites with a suite-level dtype key (tune --suite has no --dtype)
  typed=()
  for suite in "${suites[@]}"; do
    typed+=("$work/$(basename "$suite" .toml).$dtype.toml")
    { echo "dtype = \"$dtype\""; cat "$suite"; } >"${typed[-1]}"
  done
  suites=("${typed[@]}")
fi
for suite in "${suites[@]}"; do
  [ "$budget" = 0 ] || [ "$budget" = defaults ] && break
  "$bin/optune" tune --suite "$suite" "${layout[@]}" --budget "$budget" --quiet --db "$work/tuned.db" "$@"
done
args=()
sources=()
emit_defaults() {  # KEY FILE lines of the default configs, from the database or the suites
  if [ "$budget" = defaults ]; then
    for suite in "${suites[@]}"; do "$bench/bench_emit_best" --suite "$suite" "${layout[@]}" --out "$work/default"; done
  else
    "$bench/bench_emit_best" --db "$work/tuned.db" --out "$work/default" --which default
  fi
}
for which in best default; do
  [ "$which" = best ] && [ "$budget" = defaults ] && continue
  while read -r key source; do
    case "$key" in conv2d.* | depthwise_conv2d.*) ;; *) continue ;; esac
    sources+=("$source")
    flag=--candidate
    [ "$which" = default ] && flag=--default
    args+=("$flag" "$key=${source%.cpp}.so")
  done < <(if [ "$which" = default ]; then emit_defaults; else
             "$bench/bench_emit_best" --db "$work/tuned.db" --out "$work/best" --which best; fi)
done
# The flags the local builder uses for the native CPU target; two compiles at a time.
printf '%s\n' "${sources[@]}" | xargs -P 2 -I{} sh -c \
  'src="$1"; c++ -std=c++20 -O3 $3 -fopenmp -fPIC -shared -I"$2/backends/cpu/include" "$src" -o "${src%.cpp}.so"' \
  _ {} "$root" "${arch_flags[*]}"
suite_args=()
for suite in "${suites[@]}"; do suite_args+=(--suite "$suite"); done
"${OPTUNE_BENCH_CONV:-$bench/bench_conv}" "${suite_args[@]}" "${layout[@]}" --dtype "$dtype" --rounds 2 ${BENCH_ARGS:-} "${args[@]}"
