#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): the devices optune sees, then each example
# CUDA kernel file tuned end to end (NVRTC compiles, CUDA events time, the reference checks), with
# the best record of each. Usage: cuda_examples_run.sh PACK TRIALS
set -uo pipefail
pack=$(cd "$1" && pwd); trials=${2:-64}
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
export OPTUNE_CACHE_DIR=$(mktemp -d)
db=$(mktemp -d)/cuda.db
"$pack/bin/optune" devices --format json
for file in "$pack"/kernels/*_cuda.toml; do
  echo "== $(basename "$file")"
  /usr/bin/time -f "wall %e s" "$pack/bin/optune" tune --kernel "$file" --target cuda --trials "$trials" --db "$db" 2>&1 | tail -n 8
done
"$pack/bin/optune" query --db "$db" --top 1 --format json
"$pack/bin/optune" query --db "$db" --history --format csv | cut -d, -f1,6,7,8 | sort | uniq -c | sort -rn | head -n 5
echo "errors by kind:"; "$pack/bin/optune" query --db "$db" --history --format csv | tail -n +2 | cut -d, -f8 | sort | uniq -c
