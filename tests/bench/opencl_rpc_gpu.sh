#!/usr/bin/env bash
# OpenCL over RPC on a GPU machine: a tracker and a server on loopback, `optune tune --target
# opencl --rpc` through them (the records must carry the GPU's fingerprint, as the server
# describes it), then bench_rpc_overhead's OpenCL mode (LocalRunner against RpcRunner on the same
# OpenCL artifacts).
#
# Usage: opencl_rpc_gpu.sh PREFIX OUT [TRIALS]
#   PREFIX  an optune install (bin/optune, bin/optune-worker, bin/bench_rpc_overhead,
#           share/optune/opencl) with lib/ holding the shared libraries the machine lacks
#   OUT     where the database and logs go
set -uo pipefail
prefix=$(cd "$1" && pwd); out=$2; trials=${3:-64}
mkdir -p "$out"; out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$out/cache"

source "$(dirname "$0")/nvidia_opencl_icd.sh"

optune="$prefix/bin/optune"
"$optune" devices
"$optune" rpc tracker --port 9190 > "$out/tracker.log" 2>&1 &
tracker=$!
"$optune" rpc server --port 9090 --key gpu --tracker 127.0.0.1:9190 --opencl-cache "$out/server-cache" \
  > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "registered" "$out/server.log" 2>/dev/null && break; sleep 0.2; done
cat "$out/server.log"
"$optune" rpc status --tracker 127.0.0.1:9190

echo "== optune tune --op gemm --shape 2048,2048,2048 --target opencl --rpc gpu@127.0.0.1:9190 --trials $trials"
start=$SECONDS
"$optune" tune --op gemm --shape 2048,2048,2048 --target opencl --rpc gpu@127.0.0.1:9190 --tuner xgb \
  --trials "$trials" --batch-size 16 --repeat 5 --min-repeat-ms 20 --db "$out/gpu.db" --quiet
echo "   wall $((SECONDS - start)) s"
"$optune" query --db "$out/gpu.db" --format json --top 1

echo "== bench_rpc_overhead 16 candidates, gemm 1024, 3 rounds, opencl"
"$prefix/bin/bench_rpc_overhead" "$optune" "$prefix/bin/optune-worker" 16 1024,1024,1024 3 opencl
kill "$server" "$tracker"
