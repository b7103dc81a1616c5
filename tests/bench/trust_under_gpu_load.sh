#!/usr/bin/env bash
# Numbers to trust on a shared GPU (issue 37's GPU half), on the GPU machine from a pack
# (pack_gpu_cuda.sh): tunes a bf16 GEMM (gemm_wgmma.cuda on Hopper) and a user's CUDA kernel file
# (matmul_cuda) on the GPU as it is ("quiet"), and again while a second process runs bf16 matrix
# products on the same GPU ("gpu busy", PyTorch), then measures each run's reported best against
# the default, interleaved, with no second process ("the truth", bench_interleaved_truth), and
# prints each run's reported speed-up (or "unreliable") against it, with the share of the GPU that
# other processes took as optune's records saw it (NVML).
# Goal: every printed speed-up within 10% of the truth or flagged unreliable, and no config the
# truth finds slower than the default ever reported as faster.
#   trust_under_gpu_load.sh PACK [TRIALS]     (default 24 trials a run; a few minutes on an H100)
set -euo pipefail
pack=$(cd "$1" && pwd)
trials=${2:-24}
export LD_LIBRARY_PATH="$pack/lib:${LD_LIBRARY_PATH:-}"
work=$(mktemp -d /tmp/optune-gpu-trust-XXXXXX)
export OPTUNE_CACHE_DIR="$work/cache" OPTUNE_LOCK_DIR="$work/locks"
hog=""
stop_hog() {
  if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; fi
  hog=""
}
trap 'stop_hog; rm -rf "$work"' EXIT
start_hog() {
  python3 - <<'PY' &
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
while True:
    for _ in range(8):
        b = a @ a
    torch.cuda.synchronize()
PY
  hog=$!
  sleep 5  # CUDA and cuBLAS start before the run does
}

workloads=("gemm 2048,2048,2048,dtype=bf16" "$pack/kernels/matmul_cuda.toml -")
echo "trust_under_gpu_load: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1), $trials trials a run"
printf '%-12s %-9s %-26s %-8s %-12s %-24s %s\n' workload run reported "truth" "interval" "GPU taken by others" verdict
results="$work/results"
: >"$results"
for condition in quiet gpu-busy; do
  for entry in "${workloads[@]}"; do
    read -r op shape <<<"$entry"
    name=$(basename "$op" .toml)
    what=(--op "$op" --shape "$shape")
    [[ "$op" == *.toml ]] && what=(--kernel "$op")
    [ "$condition" = gpu-busy ] && start_hog
    "$pack/bin/optune" tune "${what[@]}" --target cuda --tuner xgb --trials "$trials" --batch-size 4 --seed 1 --quiet \
      --format json --db "$work/$condition-$name.db" >"$work/$condition-$name.json"
    stop_hog
    echo "$condition $op $shape" >>"$results"
  done
done
# The truth, with no second process: each run's best against the default, 11 interleaved rounds.
while read -r condition op shape; do
  name=$(basename "$op" .toml)
  [ "$shape" = - ] && shape=""
  read -r reported best <<<"$(python3 "$pack/trust_verdict.py" reported "$work/$condition-$name.json")"
  taken=$("$pack/bin/optune" query --db "$work/$condition-$name.db" --history --format csv |
          python3 -c 'import csv,statistics as s,sys; r=[float(x["device_load"]) for x in csv.DictReader(sys.stdin) if x["device_load"]]; print("%.0f%% (%.0f-%.0f%%,%d)" % (100*s.median(r),100*min(r),100*max(r),len(r)) if r else "unknown")')
  read -r _ value _ low _ high _ <<<"$("$pack/bin/bench_interleaved_truth" "$pack/bin" "$op" "$shape" "$best" 11 cuda || true)"
  verdict="no truth: a config failed"
  [ -n "${value:-}" ] && verdict=$(python3 "$pack/trust_verdict.py" verdict "$reported" "$value")
  printf '%-12s %-9s %-26s %-8s %-12s %-24s %s\n' "$name" "$condition" "$reported" "${value}x" "$low-$high" "$taken" "$verdict"
done <"$results"
