#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): the best configs per workload of a records
# log (best_configs.py; docs/performance/logs/*.csv) and the template's default, re-measured with
# this build, interleaved (5 rounds of repeats of MIN_REPEAT_MS, default 40, every record checked),
# then the peers of the same workloads in the same call (cuBLAS, torch._scaled_mm, cuDNN through
# PyTorch, graph-timed, their repeats as long: torch_peers.py)
# and, for conv2d, the per-layer ratios and their geometric mean. What changes is the build (its
# kernels, its timing), not the search. Usage: cuda_remeasure.sh PACK CSV [PER_WORKLOAD]; a .tsv
# instead of the CSV names the configs itself, in best_configs.py's lines (OP DTYPE SHAPE CONFIG).
set -uo pipefail
pack=$(cd "$1" && pwd); csv=$2; per=${3:-3}
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
min_repeat_ms=${MIN_REPEAT_MS:-40}
export PEER_MIN_REPEAT_MS=$min_repeat_ms  # the peers' repeats as long as optune's
export OPTUNE_CACHE_DIR=${OPTUNE_CACHE_DIR:-$(mktemp -d)}
db=${OPTUNE_DB:-$(mktemp -d)/remeasure.db}
if [[ $csv == *.tsv ]]; then lines=$(cat "$csv") || exit 2
else lines=$(python3 "$pack/best_configs.py" "$csv" "$per") || exit 2; fi
while IFS=$'\t' read -r op dtype shape; do
  args=()
  while IFS=$'\t' read -r o d s config; do
    if [ "$o $d $s" = "$op $dtype $shape" ]; then args+=(--config "$config"); fi
  done <<<"$lines"
  echo "== $op.$dtype $shape"
  "$pack/bin/optune" measure --op "$op" --dtype "$dtype" --shape "$shape" --target cuda --default "${args[@]}" \
    --rounds 5 --min-repeat-ms "$min_repeat_ms" --db "$db" 2>&1 | grep -v '^measured '
done < <(cut -f1-3 <<<"$lines" | uniq)
echo "errors by kind:"; "$pack/bin/optune" query --db "$db" --history --format csv | tail -n +2 | cut -d, -f8 | sort | uniq -c
python3 "$pack/best_check_errors.py" "$pack/bin/optune" "$db" | tee "$db.optune.txt"
for dtype in $(awk -F'\t' '$1 == "gemm" {print $2}' <<<"$lines" | sort -u); do
  python3 "$pack/torch_gemm_peers.py" "$dtype" $(awk -F'\t' -v d="$dtype" '$1 == "gemm" && $2 == d {print $3}' <<<"$lines" | uniq)
done
for dtype in $(awk -F'\t' '$1 == "conv2d" {print $2}' <<<"$lines" | sort -u); do
  mapfile -t layers < <(awk -F'\t' -v d="$dtype" '$1 == "conv2d" && $2 == d {sub(/,layout=nhwc$/, "", $3); print $3}' <<<"$lines" | uniq)
  python3 "$pack/torch_conv_peers.py" "$dtype" "${layers[@]}" | tee "$db.peer.$dtype.txt"
  python3 "$pack/torch_conv_peers.py" --compare "$db.optune.txt" "$db.peer.$dtype.txt"
done
