#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): gemm.cuda tuned at each shape in a dtype,
# then cuBLAS (PyTorch) at the same shapes, in the same call. Usage:
#   cuda_gemm_run.sh PACK DTYPE TRIALS M,N,K [M,N,K ...]
set -uo pipefail
pack=$(cd "$1" && pwd); dtype=$2; trials=$3; shift 3
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
export OPTUNE_CACHE_DIR=${OPTUNE_CACHE_DIR:-$(mktemp -d)}
db=${OPTUNE_DB:-$(mktemp -d)/gemm.db}
for shape in "$@"; do
  echo "== gemm.$dtype $shape"
  /usr/bin/time -f "wall %e s" "$pack/bin/optune" tune --op gemm --dtype "$dtype" --shape "$shape" --target cuda \
    --trials "$trials" --db "$db" 2>&1 | tail -n 6
done
echo "errors by kind:"; "$pack/bin/optune" query --db "$db" --history --format csv | cut -d, -f8 | sort | uniq -c
python3 "$pack/torch_gemm_peers.py" "$dtype" "$@"
