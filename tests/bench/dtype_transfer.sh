#!/usr/bin/env bash
# Does tuning one dtype start better from another dtype's records of the same template (issue 36:
# "records of one dtype warm-start another dtype of the same template: measure whether it helps")?
# A run of TRIALS trials in the source dtype fills a database; then, per seed, a run in the target
# dtype on a copy of it (xgb starts from those records: transfer) and one on an empty database
# (cold). Prints each run's best and the trial at which it first came within 5% of the best of all
# runs. Usage, from the repository root after a build (nothing else may run meanwhile):
#   bash tests/bench/dtype_transfer.sh [OP SHAPE TEMPLATE FROM TO SOURCE_TRIALS TRIALS SEEDS WORKDIR]
# defaults: gemm 512,512,512 gemm.cpu f32 bf16 48 24 3 build/dtype-transfer
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
op=${1:-gemm}; shape=${2:-512,512,512}; template=${3:-gemm.cpu}; from=${4:-f32}; to=${5:-bf16}
source_trials=${6:-48}; trials=${7:-24}; seeds=${8:-3}; work=${9:-$root/build/dtype-transfer}
optune=${OPTUNE_BIN:-$root/build/bin}/optune
mkdir -p "$work"; rm -f "$work"/*.db*
common=(--op "$op" --shape "$shape" --template "$template" --target cpu --remeasure 0 --quiet)
"$optune" tune "${common[@]}" --dtype "$from" --trials "$source_trials" --seed 100 --db "$work/source.db" > /dev/null
for seed in $(seq 1 "$seeds"); do
  cp "$work/source.db" "$work/transfer-$seed.db"
  "$optune" tune "${common[@]}" --dtype "$to" --trials "$trials" --seed "$seed" --db "$work/transfer-$seed.db" > /dev/null
  "$optune" tune "${common[@]}" --dtype "$to" --trials "$trials" --seed "$seed" --db "$work/cold-$seed.db" > /dev/null
done
python3 - "$work" "$to" "$seeds" <<'PY'
import glob, json, sqlite3, statistics, sys
work, dtype, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def runs(mode):
    out = []
    for seed in range(1, seeds + 1):
        db = sqlite3.connect(f"{work}/{mode}-{seed}.db")
        rows = db.execute("select gflops from records where workload_key like ? and error_kind = 'ok' "
                          "and tuner not in ('remeasure', 'final') order by id", (f"%.{dtype}.%",)).fetchall()
        out.append([r[0] for r in rows])
    return out
modes = {m: runs(m) for m in ("transfer", "cold")}
best = max(max(r) for rs in modes.values() for r in rs if r)
print(f"best of all runs: {best:.1f} GFLOP/s")
for mode, rs in modes.items():
    firsts = [next((i + 1 for i, g in enumerate(r) if g >= 0.95 * best), None) for r in rs]
    bests = [max(r) for r in rs]
    shown = ", ".join(str(f) if f else ">%d" % len(r) for f, r in zip(firsts, rs))
    print(f"{mode:8s} best (median) {statistics.median(bests):.1f} GFLOP/s ({', '.join('%.1f' % b for b in bests)}); "
          f"record reaching 5% of the best: {shown}")
PY
