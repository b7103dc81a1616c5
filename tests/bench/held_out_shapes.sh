#!/usr/bin/env bash
# Held-out shapes (issue 22 item 4), CPU: tunes the range M=1..512 of BERT-base's 768 x 768 GEMM
# (a dynamic sequence length) with one `optune tune --shape M=1..512,N=768,K=768` (8 representative
# shapes: M = 1, 2, 6, 14, 35, 86, 210, 512), tunes each of 11 held-out shapes inside the range on
# its own with the same trials per shape, then measures, per held-out shape, the config
# `optune pick` gives it from the range's database (nearest) against its own tuned best, the
# default and the closest tuned shape's best, interleaved in the same rounds. Needs a build with -DOPTUNE_BUILD_BENCH=ON (bench_held_out_shapes).
# Usage, from the repository root:
#   bash tests/bench/held_out_shapes.sh [WORKDIR] [TRIALS_PER_SHAPE] [ROUNDS]
# On a GPU machine, from a pack (pack_gpu_bench.sh): TARGET=opencl OPTUNE_PREFIX=PACK bash PACK/bench/held_out_shapes.sh ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/held-out-shapes}
trials=${2:-24}
rounds=${3:-5}
target=${TARGET:-cpu}
if [ -n "${OPTUNE_PREFIX:-}" ]; then
  optune=$OPTUNE_PREFIX/bin/optune
  bench=$OPTUNE_PREFIX/bin/bench_held_out_shapes
  bin_dir=$OPTUNE_PREFIX/bin
  export LD_LIBRARY_PATH="$OPTUNE_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  optune=$root/build/bin/optune
  bench=$root/build/tests/bench/bench_held_out_shapes
  bin_dir=$root/build/bin
fi
mkdir -p "$work"
if [ "$target" != cpu ]; then
  export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$work/cache}
  [ -f "$(dirname "${BASH_SOURCE[0]}")/nvidia_opencl_icd.sh" ] && source "$(dirname "${BASH_SOURCE[0]}")/nvidia_opencl_icd.sh"
fi
held_out=(3 7 20 32 64 100 200 256 300 384 450)  # none of them a representative shape
common=(--target "$target" --batch-size 8 --repeat 3 --min-repeat-ms 20 --remeasure 2 --seed 1 --quiet)

if [ ! -f "$work/range.done" ]; then
  rm -f "$work"/range.db*
  "$optune" tune --op gemm --shape M=1..512,N=768,K=768 --trials $((8 * trials)) "${common[@]}" \
    --db "$work/range.db" | grep -E '^(range|workload|best)' || true
  touch "$work/range.done"
fi
shapes=()
for m in "${held_out[@]}"; do
  shapes+=("$m,768,768")
  if [ ! -f "$work/own-$m.done" ]; then
    "$optune" tune --op gemm --shape "$m,768,768" --trials "$trials" "${common[@]}" --db "$work/own.db" |
      grep -E '^(workload|best)' || true
    touch "$work/own-$m.done"
  fi
done
echo
OPTUNE_BENCH_TARGET=$target "$bench" "$bin_dir" "$work/range.db" "$work/own.db" "$rounds" "${shapes[@]}"
