#!/usr/bin/env bash
# Issue 20's examples (configs/kernels/*.toml, the OpenCL ones) tuned on a GPU with
# `optune tune --kernel`, each at a GPU-sized problem, and the records' survival of a SIGKILL in the
# middle of a run: a transpose run is killed once it has records, then run again to completion.
# Prints per kernel the first valid config's time (the default), the best, its config and the
# speed-up, and the kill check's counts.
#
# Usage: kernel_examples_gpu.sh PREFIX OUT [TRIALS]   (from the repository root)
#   PREFIX  an optune install with lib/ holding the shared libraries the machine lacks
#           (tests/bench/pack_gpu_bench.sh makes it)
#   OUT     where the database and logs go
set -uo pipefail
prefix=$(cd "$1" && pwd); out=$2; trials=${3:-64}
mkdir -p "$out"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$out/cache"
source "$(dirname "$0")/nvidia_opencl_icd.sh"
optune="$prefix/bin/optune"
common=(--target opencl --batch-size 16 --repeat 5 --min-repeat-ms 20 --timeout 20)

nvidia-smi -L
"$optune" devices
kernel() {  # file shape
  echo "== optune tune --kernel $1 --shape $2 --trials $trials"
  local start=$SECONDS
  "$optune" tune --kernel "configs/kernels/$1" --shape "$2" --trials "$trials" "${common[@]}" --db "$out/gpu.db" --quiet
  echo "   wall $((SECONDS - start)) s"
}
kernel transpose.toml N=8192,M=8192
kernel conv2d.toml W=4096,H=4096
kernel reduction.toml N=67108864,PARTS=4096
kernel axpy_f16.toml N=67108864

echo "== SIGKILL in the middle of a run, then the same run again"
sql() { python3 -c 'import sqlite3, sys
try:
    rows = sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall()
except sqlite3.Error:
    rows = [(0,)]
print("\n".join(str(r[0]) for r in rows))' "$out/kill.db" "$1"; }
records() { sql "select count(*) from records"; }
"$optune" tune --kernel configs/kernels/transpose.toml --shape N=4096,M=4096 --trials 48 --batch-size 4 \
  --target opencl --repeat 5 --min-repeat-ms 20 --db "$out/kill.db" --quiet > "$out/kill.log" 2>&1 &
pid=$!
for _ in $(seq 600); do (( $(records) >= 8 )) && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
before=$(records)
configs_before=$(sql "select distinct config from records" | sort)
"$optune" tune --kernel configs/kernels/transpose.toml --shape N=4096,M=4096 --trials 48 --batch-size 4 \
  --target opencl --repeat 5 --min-repeat-ms 20 --db "$out/kill.db" --quiet
after=$(records)
lost=$(comm -23 <(echo "$configs_before") <(sql "select distinct config from records" | sort) | wc -l)
echo "killed with $before records; after the second run $after records; configs lost: $lost"
"$optune" query --db "$out/gpu.db" --format table
