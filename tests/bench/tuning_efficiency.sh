#!/usr/bin/env bash
# Tuning efficiency on the CPU GEMM space: records a landscape live (random configs measured per
# shape, kept in a database), replays xgb, ga and random over it with several seeds, then confirms
# with live runs of xgb and random. Usage, from the repository root after a build:
#   bash tests/bench/tuning_efficiency.sh [WORKDIR] [LANDSCAPE_TRIALS] [LIVE_TRIALS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/tuning-efficiency}
landscape_trials=${2:-600}
live_trials=${3:-100}
optune=$root/build/bin/optune
mkdir -p "$work"
shapes=(512,512,512 196,256,2304 1024,1024,64)

if [ ! -f "$work/landscape.db" ]; then
  for shape in "${shapes[@]}"; do
    "$optune" tune --op gemm --shape "$shape" --target cpu --tuner random --trials "$landscape_trials" \
      --batch-size 16 --repeat 3 --min-repeat-ms 20 --remeasure 0 --seed 1 --quiet --db "$work/landscape.db"
  done
fi
"$root/build/tests/bench/bench_tuning_efficiency" --landscape "$work/landscape.db" --seeds 21 --budget 300

echo
echo "LIVE confirmation on gemm 512x512x512: best GFLOP/s after N trials (median over seeds)"
for tuner in xgb random; do
  for seed in 1 2 3; do
    db="$work/live-$tuner-$seed.db"
    rm -f "$db"*
    "$optune" tune --op gemm --shape 512,512,512 --tuner "$tuner" --trials "$live_trials" --batch-size 8 \
      --seed "$seed" --remeasure 0 --quiet --db "$db" > /dev/null
    # best so far over the tuner's own trials, in measurement order
    "$optune" query --history --format csv --db "$db" |
      awk -F, -v tuner="$tuner" 'NR > 1 && $9 == tuner { n++; if ($7 > best) best = $7;
        if (n == 10 || n == 25 || n == 50 || n == 100) printf "%s ", best } END { print "" }' |
      sed "s/^/$tuner seed $seed: best@10,25,50,100 = /"
  done
done
