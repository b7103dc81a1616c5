#!/usr/bin/env bash
# Tunes the conv layers of ResNet-18 and MobileNet v1 with optune (`tune --suite`, the gradient
# task scheduler, one budget per network), then times the best candidates against oneDNN,
# OpenBLAS im2col + sgemm and optune's default configs in one run (bench_conv). Usage, from the
# repository root after a build with benchmarks (-DOPTUNE_BUILD_BENCH=ON):
#   bash tests/bench/conv_vs_peers.sh [BUDGET] [WORKDIR]
# BUDGET is tune's --budget per network: trials (600) or time (45m). Resumable: a second run
# continues tuning in the same database.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
budget=${1:-600}
work=${2:-$root/build/conv-vs-peers}
bin=${OPTUNE_BIN:-$root/build/bin}
bench=${OPTUNE_BENCH_BIN:-$root/build/tests/bench}
suites=("$root/configs/workloads/resnet18.toml" "$root/configs/workloads/mobilenet_v1.toml")
mkdir -p "$work"
for suite in "${suites[@]}"; do
  "$bin/optune" tune --suite "$suite" --budget "$budget" --quiet --db "$work/tuned.db"
done
args=()
sources=()
for which in best default; do
  while read -r key source; do
    case "$key" in conv2d.* | depthwise_conv2d.*) ;; *) continue ;; esac
    sources+=("$source")
    flag=--candidate
    [ "$which" = default ] && flag=--default
    args+=("$flag" "$key=${source%.cpp}.so")
  done < <("$bench/bench_emit_best" --db "$work/tuned.db" --out "$work/$which" --which "$which")
done
# The flags the local builder uses for the native CPU target; two compiles at a time.
printf '%s\n' "${sources[@]}" | xargs -P 2 -I{} sh -c \
  'src="$1"; c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I"$2/kernels/include" "$src" -o "${src%.cpp}.so"' \
  _ {} "$root"
suite_args=()
for suite in "${suites[@]}"; do suite_args+=(--suite "$suite"); done
"$bench/bench_conv" "${suite_args[@]}" --rounds 2 "${args[@]}"
