#!/usr/bin/env bash
# revalidate after a toolchain change (issue 38): tunes a small CPU suite (BERT-base's three GEMMs
# and two ResNet-18 convolutions, as configs/workloads/ has them) under g++ and times it; then
# revalidates that database under clang++, and under g++ with -O2 for -O3 (other flags), and times
# each: the counts of holds, regressed and broken entries, how many were tuned again, and its time
# against tuning the suite again under that toolchain (goal: under a tenth; clang++'s tuning is
# timed too, the flags change's is taken as g++'s); then once more with the toolchain unchanged
# (g++ again), where every entry is current.
#   tests/bench/revalidate_bench.sh [BUILD=build] [WORK=a new temporary folder] [TRIALS=64] [RETUNE_TRIALS=revalidate's default]
# MEASURE (environment) is passed to every tune and revalidate ("--repeat 2 --min-repeat-ms 1" for
# a quick check that the script runs). Builds nothing: needs BUILD/bin/optune and optune-worker,
# and clang++ and g++ on the PATH. With the defaults, about 13 minutes on 2 cores.
set -euo pipefail
source=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
work=${2:-$(mktemp -d /tmp/optune-revalidate-XXXXXX)}
trials=${3:-64}
retune_trials=${4:-}
read -r -a measure <<<"${MEASURE:-}"
mkdir -p "$work"
optune="$build/bin/optune"
export OPTUNE_LOCK_DIR="$work/locks"  # its own runs only: nothing else waits on them

suite="$work/suite.toml"
# Workloads of configs/workloads/bert_base_gemm.toml and resnet18.toml.
cat >"$suite" <<'EOF'
name = "revalidate_bench"
[[workload]]
name = "bert.attention.projection"
op = "gemm"
shape = "M=128,N=768,K=768"
[[workload]]
name = "bert.ffn.up"
op = "gemm"
shape = "M=128,N=3072,K=768"
[[workload]]
name = "bert.ffn.down"
op = "gemm"
shape = "M=128,N=768,K=3072"
[[workload]]
name = "resnet18.layer3.conv3x3"
op = "conv2d"
shape = "N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1"
[[workload]]
name = "resnet18.layer4.0.downsample"
op = "conv2d"
shape = "N=1,C=256,H=14,W=14,K=512,R=1,S=1,stride=2,pad=0"
EOF

now() { date +%s.%N; }
seconds_since() { awk -v start="$1" -v end="$(now)" 'BEGIN { printf "%.2f", end - start }'; }
# "holds regressed broken current untuned retuned failing" of a revalidate's JSON.
counts() {
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["counts"]; print(" ".join(str(c[k]) for k in
    ("holds", "regressed", "broken", "current", "untuned", "retuned", "failing")))' "$1"
}

echo "revalidate_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
     "$trials trials a task, re-tunes of ${retune_trials:-the default number of} trials at most; g++: $(g++ --version | head -1); clang++: $(clang++ --version | head -1)"
# The suite tuned from scratch under COMPILER into DATABASE; prints the seconds it took.
tune_suite() {  # COMPILER DATABASE
  rm -f "$2"*
  local started
  started=$(now)
  "$optune" tune --suite "$suite" --trials-per-task "$trials" --tuner xgb --seed 1 --compiler "$1" --quiet \
    "${measure[@]}" --db "$2" >>"$work/tune.txt"
  seconds_since "$started"
}
tuned="$work/tuned.db"
: >"$work/tune.txt"
tune_seconds=$(tune_suite g++ "$tuned")
echo "tune under g++: $tune_seconds s"

# revalidate writes its records: each run on its own copy of the tuned database.
run_revalidate() {  # NAME COMPILER
  local database="$work/$1.db"
  cp "$tuned" "$database"
  local started status=0
  started=$(now)
  "$optune" revalidate --suite "$suite" --compiler "$2" ${retune_trials:+--trials "$retune_trials"} --tuner xgb --seed 1 --quiet \
    "${measure[@]}" --format json --junit "$work/$1.xml" --db "$database" >"$work/$1.json" || status=$?
  local took
  took=$(seconds_since "$started")
  read -r holds regressed broken current untuned retuned failing <<<"$(counts "$work/$1.json")"
  local again=${3:-$tune_seconds}
  echo "revalidate under $2: $took s (exit $status), $(awk -v a="$took" -v b="$again" \
    'BEGIN { printf "%.3f", a / b }') of tuning again ($again s); $holds holds, $regressed regressed, $broken broken," \
    "$current current, $untuned untuned; $retuned re-tuned, $failing still regressed or broken"
}
# Tuning the suite again under clang++, what revalidate saves: the baseline of its clang++ run.
clang_seconds=$(tune_suite clang++ "$work/clang-tuned.db")
echo "tune under clang++: $clang_seconds s"
# Other flags: g++ with -O2 after the builder's -O3, a compiler of its own name (its --version).
flags="$work/g++-O2"
cat >"$flags" <<'EOF2'
#!/bin/sh
if [ "$1" = --version ]; then echo "g++ -O2 (wraps $(g++ --version | head -1))"; exit 0; fi
exec g++ "$@" -O2
EOF2
chmod +x "$flags"
run_revalidate clang clang++ "$clang_seconds"
run_revalidate flags "$flags"
run_revalidate unchanged g++
echo "(outputs in $work: tune.txt, clang.json, flags.json, unchanged.json and their .xml)"
