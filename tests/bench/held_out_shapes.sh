#!/usr/bin/env bash
# Held-out shapes (issue 22 item 4), CPU: tunes the range M=1..512 of BERT-base's 768 x 768 GEMM
# (a dynamic sequence length) with one `optune tune --shape M=1..512,N=768,K=768` (8 representative
# shapes: M = 1, 2, 6, 14, 35, 86, 210, 512), tunes each of 11 held-out shapes inside the range on
# its own with the same trials per shape, then measures, per held-out shape, the config
# `optune pick` gives it from the range's database (nearest) against its own tuned best, the
# default and the closest tuned shape's best, interleaved in the same rounds. Needs a build with -DOPTUNE_BUILD_BENCH=ON (bench_held_out_shapes).
# Usage, from the repository root:
#   bash tests/bench/held_out_shapes.sh [WORKDIR] [TRIALS_PER_SHAPE] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/held-out-shapes}
trials=${2:-24}
rounds=${3:-5}
optune=$root/build/bin/optune
bench=$root/build/tests/bench/bench_held_out_shapes
mkdir -p "$work"
held_out=(3 7 20 32 64 100 200 256 300 384 450)  # none of them a representative shape
common=(--target cpu --batch-size 8 --repeat 3 --min-repeat-ms 20 --remeasure 2 --seed 1 --quiet)

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
"$bench" "$root/build/bin" "$work/range.db" "$work/own.db" "$rounds" "${shapes[@]}"
