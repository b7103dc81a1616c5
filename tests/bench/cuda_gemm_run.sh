#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): gemm.cuda tuned at each shape in a dtype,
# then cuBLAS (PyTorch) at the same shapes, in the same call, and the check errors of optune's
# records beside the peer's. Usage:
#   [TARGET=opencl] cuda_gemm_run.sh PACK DTYPE TRIALS M,N,K [M,N,K ...]
# TARGET=opencl tunes gemm.opencl through NVIDIA's OpenCL driver instead (nvidia_opencl_icd.sh).
# Both sides are timed alike: repeats of MIN_REPEAT_MS (default 40) or more, the peer's too
# (torch_peers.py, PEER_MIN_REPEAT_MS). A GPU at full tensor-core load lowers its clock within a
# fraction of a second, so repeats of different lengths time the two sides at different clocks
# (docs/performance/cuda-gemm.md).
set -uo pipefail
pack=$(cd "$1" && pwd); dtype=$2; trials=$3; shift 3
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
target=${TARGET:-cuda}
# shellcheck source=nvidia_opencl_icd.sh
if [ "$target" = opencl ]; then source "$pack/nvidia_opencl_icd.sh"; fi
export PEER_MIN_REPEAT_MS=${MIN_REPEAT_MS:-40}
export OPTUNE_CACHE_DIR=${OPTUNE_CACHE_DIR:-$(mktemp -d)}
db=${OPTUNE_DB:-$(mktemp -d)/gemm.db}
for shape in "$@"; do
  echo "== gemm.$dtype $shape"
  /usr/bin/time -f "wall %e s" "$pack/bin/optune" tune --op gemm --dtype "$dtype" --shape "$shape" --target "$target" \
    --trials "$trials" --min-repeat-ms "${MIN_REPEAT_MS:-40}" --db "$db" 2>&1 | tail -n 6
done
echo "errors by kind:"; "$pack/bin/optune" query --db "$db" --history --format csv | tail -n +2 | cut -d, -f8 | sort | uniq -c
python3 "$pack/best_check_errors.py" "$pack/bin/optune" "$db"
python3 "$pack/torch_gemm_peers.py" "$dtype" "$@"
