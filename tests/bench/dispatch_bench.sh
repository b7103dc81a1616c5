#!/usr/bin/env bash
# Measured dispatch of shape ranges (issue 38): `optune dispatch` on GEMM's M = 1..2048 at two N, K
# pairs and on a conv2d layer's batch 1..64, each with held-out shapes drawn from the range (tuned
# for their own best with the same trials as a sampled shape). Prints, per range, the configs the
# cover kept, the rule's leaves and, per held-out shape, the rule's config and today's nearest-shape
# config (pick's answer without the rule) against the shape's own tuned best, all three measured
# together in interleaved rounds; then whether every held-out shape is within 5% of its best.
# Usage, from the repository root (a Release build in build/):
#   bash tests/bench/dispatch_bench.sh [WORKDIR] [TRIALS_PER_SHAPE] [HELD_OUT]   (SAMPLES=16: shapes sampled)
# On a GPU machine, from a pack (pack_gpu_cuda.sh): TARGET=cuda DTYPE=bf16 OPTUNE_PREFIX=PACK \
#   RANGES="gemm:M=1..2048,N=4096,K=4096" bash PACK/bench/dispatch_bench.sh ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/dispatch-bench}
trials=${2:-24}
held_out=${3:-4}
target=${TARGET:-cpu}
optune=${OPTUNE_PREFIX:+$OPTUNE_PREFIX/bin/optune}
optune=${optune:-$root/build/bin/optune}
[ -n "${OPTUNE_PREFIX:-}" ] && export LD_LIBRARY_PATH="$OPTUNE_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ranges=${RANGES:-"gemm:M=1..2048,N=768,K=768 gemm:M=1..2048,N=256,K=1024 conv2d:N=1..64,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1"}
mkdir -p "$work"
"$optune" devices 2>/dev/null | head -3 || true
echo "target $target, $trials trials per shape, $held_out held-out shapes per range, $(date -u +%F)"

for item in $ranges; do
  op=${item%%:*}
  range=${item#*:}
  name=$(echo "$op-$range" | tr -c 'A-Za-z0-9\n' '_')
  db="$work/$name.db"
  if [ ! -f "$work/$name.json" ]; then
    rm -f "$db"*
    start=$(date +%s)
    "$optune" dispatch --op "$op" --shape "$range" ${DTYPE:+--dtype "$DTYPE"} --target "$target" \
      --trials "$trials" --samples "${SAMPLES:-16}" --held-out-count "$held_out" --finalists 3 --rounds 5 --repeat 3 --min-repeat-ms 20 \
      --seed 1 --quiet --format json --db "$db" > "$work/$name.json.part"
    echo "$(( $(date +%s) - start ))" > "$work/$name.seconds"
    mv "$work/$name.json.part" "$work/$name.json"
  fi
  python3 - "$work/$name.json" "$(cat "$work/$name.seconds")" <<'EOF'
import json, sys
rule = json.load(open(sys.argv[1]))
print(f"\n{rule['range']} ({rule['template']} on {rule['target']}): {len(rule['shapes'])} sampled shapes x "
      f"{len(rule['finalists'])} finalists, {len(rule['configs'])} configs kept (greedy cover within "
      f"{100 * rule['within']:.0f}%), {len(rule['leaves'])} leaves, {sys.argv[2]} s")
for leaf in rule["leaves"]:
    print(f"  leaf {leaf['name']:<24} config {leaf['config']} (tuned for {rule['configs'][leaf['config']]['from']})")
def ratio(check, key):
    """A check's time over its own best; None where either did not run."""
    return check[key] / check["own_best"] if check[key] and check["own_best"] else None
def text(x):
    return "-" if x is None else f"{x:.3f}"
for r, refinement in enumerate(rule.get("refinements", []), 1):
    print(f"  check {r}: " + ", ".join(f"{c['workload']} {text(ratio(c, 'rule'))}" for c in refinement["held_out"]))
    print(f"  refinement {r}: sampled too, the rule fitted again: {' '.join(refinement['promoted'])}")
print(f"  {'held-out shape':<48} {'rule':>7} {'nearest':>8}   (time over its own tuned best)")
worst_rule = worst_nearest = 0.0
for check in rule["held_out"]:
    r, n = ratio(check, "rule"), ratio(check, "nearest")
    worst_rule = max(worst_rule, r or float("inf"))
    worst_nearest = max(worst_nearest, n or float("inf"))
    print(f"  {check['workload']:<48} {text(r):>7} {text(n):>8}")
print(f"  worst: rule {worst_rule:.3f}, nearest {worst_nearest:.3f}; every held-out shape within 5% with the rule: "
      f"{'yes' if worst_rule <= 1.05 else 'no'}")
EOF
done
