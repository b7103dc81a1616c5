#!/usr/bin/env bash
# GPUs of one host lent one at a time by a tracker (issue 43): a tracker and one RPC server per
# GPU (each seeing only its own through CUDA_VISIBLE_DEVICES), all under one key; the same tune
# through the tracker with one server registered, then with one per GPU. Prints each run's wall
# time, best and the candidates each server measured. On a GPU machine of two or more GPUs, from a
# pack of pack_gpu_cuda.sh (which copies this script):
#   bash PACK/rpc_gpu_lending.sh PACK OUT_DIR [TRIALS]
set -uo pipefail
pack=$(cd "$1" && pwd); out=$2; trials=${3:-128}
mkdir -p "$out"
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
optune="$pack/bin/optune"
gpus=$(nvidia-smi --list-gpus | wc -l)
"$optune" rpc tracker --port 9190 > "$out/tracker.log" 2>&1 &
trap 'kill $(jobs -p) 2>/dev/null' EXIT
sleep 1
serve() {  # GPU
  CUDA_VISIBLE_DEVICES=$1 "$optune" rpc server --port 0 --key gpus --tracker 127.0.0.1:9190 --heartbeat 0.5 \
    > "$out/server-$1.log" 2>&1 &
}
tune() {  # NAME
  local start=$(date +%s.%N)
  "$optune" tune --kernel "$pack/kernels/matmul_cuda.toml" --target cuda --rpc gpus@127.0.0.1:9190 --trials "$trials" \
    --seed 1 --db "$out/$1.db" > "$out/$1.log" 2>&1
  echo "$1: rc $? wall $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
  grep -E "^best|^trials" "$out/$1.log"
}
serve 0; sleep 2
tune one-server
for gpu in $(seq 1 $((gpus - 1))); do serve "$gpu"; done; sleep 2
"$optune" rpc status --tracker 127.0.0.1:9190 | head -20
tune all-servers
for gpu in $(seq 0 $((gpus - 1))); do echo "server on GPU $gpu measured $(grep -c measured "$out/server-$gpu.log")"; done
