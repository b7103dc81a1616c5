#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): optune against cuBLAS on GEMM workloads whose
# ratio sits near 1, in PASSES passes that alternate the two sides workload by workload, so each
# ratio is taken in the GPU's state of that moment (a sustained peer reading moved by up to 14%
# between calls). Per pass and workload: `optune measure` of the configs CONFIGS.tsv names for it
# (best_configs.py's lines: OP DTYPE SHAPE CONFIG), 5 interleaved rounds of 40 ms repeats, every
# record checked, its best; then cuBLAS through PyTorch, repeats as long (torch_peers.py).
# Usage: cuda_parity.sh PACK CONFIGS.tsv [PASSES=3]. Prints "pass P gemm.DTYPE SHAPE optune X
# cublas Y ratio R" lines (TFLOP/s).
set -uo pipefail
pack=$(cd "$1" && pwd); tsv=$2; passes=${3:-3}
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}" PEER_MIN_REPEAT_MS=40
export OPTUNE_CACHE_DIR=${OPTUNE_CACHE_DIR:-$(mktemp -d)}
db=${OPTUNE_DB:-$(mktemp -d)/parity.db}
for pass in $(seq 1 "$passes"); do
  while IFS=$'\t' read -r dtype shape; do
    args=()
    while IFS=$'\t' read -r _ d s config; do
      if [ "$d $s" = "$dtype $shape" ]; then args+=(--config "$config"); fi
    done < "$tsv"
    # The fastest given config's GFLOP/s (a row's third field from the end; its config has no spaces).
    best=$("$pack/bin/optune" measure --op gemm --dtype "$dtype" --shape "$shape" --target cuda "${args[@]}" --rounds 5 \
      --min-repeat-ms 40 --db "$db" 2>&1 | awk '$1 ~ /^given/ {print $(NF - 2)}' | sort -g | tail -1)
    peer=$(python3 "$pack/torch_gemm_peers.py" "$dtype" "$shape" | awk '/^cublas/ {print $5}')
    awk -v p="$pass" -v w="gemm.$dtype $shape" -v b="$best" -v c="$peer" \
      'BEGIN {if (b == "" || c == "") {print "pass " p " " w ": no reading"; exit}
              printf "pass %s %s optune %.1f cublas %s ratio %.3f\n", p, w, b / 1000, c, b / 1000 / c}'
  done < <(cut -f2,3 "$tsv" | uniq)
done
