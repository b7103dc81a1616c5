#!/usr/bin/env bash
# Numbers to trust on a busy machine (issue 37): tunes a small GEMM, a conv2d and a user's kernel
# file (the 5-point stencil, whose default config, its knobs' first values, leaves room to tune) on
# this machine as it is, and again with a CPU hog beside them (a busy loop per core, started and stopped here), then
# measures each run's reported best against the default, interleaved, with no hog ("the truth",
# bench_interleaved_truth), and prints each run's reported speed-up (or "unreliable") against it.
# Goal: every printed speed-up within 10% of the truth or flagged unreliable, and no config the
# truth finds slower than the default ever reported as faster.
#   tests/bench/trust_under_load.sh [BUILD_DIR] [TRIALS]     (defaults: build, 12)
# Builds nothing: needs BUILD_DIR/bin/optune, optune-worker and
# BUILD_DIR/tests/bench/bench_interleaved_truth (cmake --build BUILD_DIR --target optune
# optune-worker bench_interleaved_truth). Takes a few minutes on 2 cores.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
trials=${2:-12}
optune="$build/bin/optune"
truth="$build/tests/bench/bench_interleaved_truth"
work=$(mktemp -d /tmp/optune-trust-XXXXXX)
hogs=()
stop_hog() {
  if [ ${#hogs[@]} -gt 0 ]; then
    kill "${hogs[@]}" 2>/dev/null || true
    wait "${hogs[@]}" 2>/dev/null || true
  fi
  hogs=()
}
trap 'stop_hog; rm -rf "$work"' EXIT
start_hog() {
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    hogs+=($!)
  done
}
export OPTUNE_LOCK_DIR="$work/locks"  # its own runs only: nothing else waits on them

source=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
workloads=("gemm 256,256,256" "conv2d N=1,C=32,H=28,W=28,K=32,R=3,S=3,stride=1,pad=1"
           "$source/configs/kernels/stencil_cpu.toml N=1024,M=1024")
echo "trust_under_load: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $trials trials a run, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-6s %-44s %-10s %-28s %s\n' workload run reported "truth" "truth interval (load)" verdict
results="$work/results"
: >"$results"
for condition in quiet busy; do
  for entry in "${workloads[@]}"; do
    read -r op shape <<<"$entry"
    name=$(basename "$op" .toml)
    what=(--op "$op")
    [[ "$op" == *.toml ]] && what=(--kernel "$op" --target cpu)
    [ "$condition" = busy ] && start_hog
    "$optune" tune "${what[@]}" --shape "$shape" --tuner xgb --trials "$trials" --batch-size 4 --seed 1 --quiet \
      --format json --db "$work/$condition-$name.db" >"$work/$condition-$name.json"
    stop_hog
    echo "$condition $op $shape" >>"$results"
  done
done
# The truth, with no hog: each run's best against the default, 11 interleaved rounds.
while read -r condition op shape; do
  name=$(basename "$op" .toml)
  read -r reported best <<<"$(python3 "$source/tests/bench/trust_verdict.py" reported "$work/$condition-$name.json")"
  read -r _ value _ low _ high _ load _ <<<"$("$truth" "$build/bin" "$op" "$shape" "$best" 11)"
  verdict=$(python3 "$source/tests/bench/trust_verdict.py" verdict "$reported" "$value")
  printf '%-8s %-6s %-44s %-10s %-28s %s\n' "$name" "$condition" "$reported" "${value}x" "$low-$high ($load)" "$verdict"
done <"$results"
