#!/usr/bin/env bash
# optune's tuners against Kernel Tuner's strategies on the field's exhaustive landscapes
# (../shared/landscapes or the files given), on the same files, budgets and seeds, replayed:
# nothing is measured. Installs kernel_tuner from PyPI into a venv (KT_VENV, default
# build/kt-venv), runs its strategies in simulation mode (tests/bench/kernel_tuner_replay.py),
# runs `optune replay` with optune's tuners, and prints both side by side, with the check of the
# search goal (issue 21) per landscape.
#
#   bash tests/bench/search_vs_kernel_tuner.sh [FILE...]
#   SEEDS=20 BUDGETS=25,50,100,200,400 OPTUNE_TUNERS=xgb,ga,random KT_STRATEGIES=... JOBS=2
# KT_RESULTS=FILE reuses Kernel Tuner's JSON lines from an earlier run instead of rerunning them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SEEDS=${SEEDS:-20}
BUDGETS=${BUDGETS:-25,50,100,200,400}
OPTUNE_TUNERS=${OPTUNE_TUNERS:-xgb,ga,random}
KT_STRATEGIES=${KT_STRATEGIES:-random_sample,genetic_algorithm,bayes_opt,pso,simulated_annealing,dual_annealing,adaptive_tabu_greywolf,hybrid_vndx}
KT_VENV=${KT_VENV:-build/kt-venv}
OPTUNE=${OPTUNE:-build/bin/optune}
OUT=${OUT:-build/search_vs_kernel_tuner}
mkdir -p "$OUT"
if [ $# -gt 0 ]; then files=("$@"); else files=(../shared/landscapes/*.json.gz); fi
[ -x "$OPTUNE" ] || { echo "build optune first (cmake --build build --target optune)" >&2; exit 2; }

if [ -z "${KT_RESULTS:-}" ]; then
  if [ ! -x "$KT_VENV/bin/python" ]; then
    python3 -m venv "$KT_VENV"
    "$KT_VENV/bin/pip" install -q kernel_tuner
  fi
  echo "kernel_tuner $("$KT_VENV/bin/python" -c 'import kernel_tuner; print(kernel_tuner.__version__)' 2>/dev/null || echo '?')" >&2
  KT_RESULTS="$OUT/kernel_tuner.jsonl"
  nice "$KT_VENV/bin/python" tests/bench/kernel_tuner_replay.py --seeds "$SEEDS" --budgets "$BUDGETS" \
    --strategies "$KT_STRATEGIES" "${files[@]}" > "$KT_RESULTS"
fi

OPTUNE_RESULTS="$OUT/optune.jsonl"
: > "$OPTUNE_RESULTS"
for file in "${files[@]}"; do
  nice "$OPTUNE" replay --landscape "$file" --tuner "$OPTUNE_TUNERS" --seeds "$SEEDS" --budgets "$BUDGETS" \
    --format json >> "$OPTUNE_RESULTS"
done

python3 - "$OPTUNE_RESULTS" "$KT_RESULTS" "${OPTUNE_TUNERS%%,*}" <<'PY'
import json, sys
optune = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kt = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
default = sys.argv[3]
landscapes = list(dict.fromkeys(r["landscape"] for r in optune))
def fmt(v): return "-" if v is None else str(v)
for name in landscapes:
    rows = [r for r in optune if r["landscape"] == name] + [r for r in kt if r["landscape"] == name]
    budgets = rows[0]["budgets"]
    print(f"\n{name}")
    print("| tuner | " + " | ".join(f"@{b}" for b in budgets) + " | to 95% | to 99% | score |")
    print("|---|" + "---|" * (len(budgets) + 3))
    for r in rows:
        print(f"| {r['tuner']} | " + " | ".join(f"{f:.3f}" for f in r["fraction"]) +
              f" | {fmt(r['evals_to']['0.95'])} | {fmt(r['evals_to']['0.99'])} | {r['score']:.3f} |")
    ours = next(r for r in rows if r["tuner"] == default)
    theirs = [r for r in rows if r["tuner"].startswith("kt:")]
    if not theirs:
        continue
    verdict = []
    for b in (50, 100, 200):
        if b not in budgets: continue
        i = budgets.index(b)
        best = max(theirs, key=lambda r: r["fraction"][i])
        ok = ours["fraction"][i] >= best["fraction"][i] - 0.01
        verdict.append(f"@{b} {ours['fraction'][i]:.3f} vs {best['fraction'][i]:.3f} ({best['tuner']}) {'ok' if ok else 'LOSS'}")
    if 25 in budgets:
        i = budgets.index(25)
        rnd = next((r for r in theirs if r["tuner"] == "kt:random_sample"), None)
        if rnd: verdict.append(f"@25 {ours['fraction'][i]:.3f} vs random {rnd['fraction'][i]:.3f} {'ok' if ours['fraction'][i] >= rnd['fraction'][i] - 0.01 else 'LOSS'}")
    inf = float("inf")
    e = lambda r: r["evals_to"]["0.95"] if r["evals_to"]["0.95"] is not None else inf
    best95 = min(theirs, key=e)
    verdict.append(f"to 95% {fmt(ours['evals_to']['0.95'])} vs {fmt(best95['evals_to']['0.95'])} ({best95['tuner']}) {'ok' if e(ours) < e(best95) else 'LOSS'}")
    print(f"goal ({default}): " + "; ".join(verdict))
PY
