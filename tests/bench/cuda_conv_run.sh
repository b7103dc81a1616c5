#!/usr/bin/env bash
# On the GPU machine, from a pack (pack_gpu_cuda.sh): conv2d_tma.cuda tuned on each layer in a
# dtype (channels-last, layout nhwc), then cuDNN (PyTorch, channels_last) on the same layers in the
# same call, and the check errors of optune's records beside the peer's. Usage:
#   cuda_conv_run.sh PACK DTYPE TRIALS LAYER [LAYER ...]
# LAYER is a --shape text without the layout, e.g. N=32,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1;
# LAYERS=resnet50 (environment, no LAYER arguments) takes the distinct layers of ResNet-50 at batch
# BATCH (default 32) from torch_conv_peers.py. Both sides' repeats last MIN_REPEAT_MS (default 40)
# or more (cuda_gemm_run.sh says why).
set -uo pipefail
pack=$(cd "$1" && pwd); dtype=$2; trials=$3; shift 3
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
export PEER_MIN_REPEAT_MS=${MIN_REPEAT_MS:-40}
export OPTUNE_CACHE_DIR=${OPTUNE_CACHE_DIR:-$(mktemp -d)}
db=${OPTUNE_DB:-$(mktemp -d)/conv.db}
layers=("$@")
if [ ${#layers[@]} -eq 0 ]; then
  mapfile -t layers < <(python3 "$pack/torch_conv_peers.py" --list "${LAYERS:-resnet50}" "${BATCH:-32}")
fi
for layer in "${layers[@]}"; do
  echo "== conv2d.$dtype $layer"
  /usr/bin/time -f "wall %e s" "$pack/bin/optune" tune --op conv2d --dtype "$dtype" --shape "$layer,layout=nhwc" \
    --target cuda --trials "$trials" --min-repeat-ms "${MIN_REPEAT_MS:-40}" --db "$db" 2>&1 | tail -n 6
done
echo "errors by kind:"; "$pack/bin/optune" query --db "$db" --history --format csv | tail -n +2 | cut -d, -f8 | sort | uniq -c
python3 "$pack/best_check_errors.py" "$pack/bin/optune" "$db" | tee "$db.optune.txt"
python3 "$pack/torch_conv_peers.py" "$dtype" "${layers[@]}" | tee "$db.peer.txt"
python3 "$pack/torch_conv_peers.py" --compare "$db.optune.txt" "$db.peer.txt"
