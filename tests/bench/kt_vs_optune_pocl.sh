#!/usr/bin/env bash
# Kernel Tuner against optune tuning the same user OpenCL kernel file on PoCL (OpenCL on this
# machine's CPU), wall clock against wall clock (issue 42: "the same kernel file tuned by Kernel
# Tuner (its OpenCL backend runs on PoCL here) with its best strategy, wall clock against wall
# clock to the same quality"; the report adds the checks kt_vs_optune_cuda.sh makes on a GPU).
# For each kernel file, SEEDS seeds of: Kernel Tuner's tune_kernel (OpenCL backend, pyopencl) with
# each of KT_STRATEGIES, and `optune tune --kernel FILE --target opencl`, each TRIALS evaluations
# (at most half the valid space), each a fresh process with empty compile caches (PoCL's and
# optune's); then Kernel Tuner's brute force once where the space has at most BRUTE_MAX configs
# (the ground truth of the best). What is compared and how the file maps onto tune_kernel:
# kt_vs_optune.py's header. Prints a markdown report, also written to OUT/report.md.
#
# After a build (build/bin/optune) and `pip install kernel_tuner pyopencl` (PoCL's ICD in
# /etc/OpenCL/vendors), from anywhere:
#   bash tests/bench/kt_vs_optune_pocl.sh OUT [KERNEL_TOML ...]
#   default kernel: configs/kernels/conv2d.toml (a 17 x 17 convolution of 1024 x 1024 pixels)
# Settings (environment): KT_STRATEGIES=adaptive_tabu_greywolf,random_sample TRIALS=60 SEEDS=3
#   BRUTE_MAX=1000 OPTUNE_ARGS="" (extra `optune tune` options) OPTUNE=build/bin/optune
#   KT_PYTHON=python3 DEADLINE=0 (seconds after which no further run starts; the report covers
#   the runs done) RUN_TIMEOUT=1800 (seconds a single run may take: Kernel Tuner takes about 1.5 s
#   an evaluation of conv2d here, 7 runs of 80 to 270 ms, so its brute force of 416 configs about
#   10 minutes) KT_CHECK=1 (0: Kernel Tuner checks no output) KT_HIDE_TORCH=1 (0: let Kernel Tuner
#   import torch, as it does where torch is installed) TRUTH=grid (before the runs, optune times
#   every valid config of each kernel file in full, a grid run with no bail-out and empty caches,
#   its front (within 20% of its best) again in 5 interleaved rounds, into OUT/NAME/truth.json as a
#   Kernel Tuner cache: the yardstick the report judges every run of both tools by, besides each
#   tool's own times; a few minutes for conv2d.toml) or TRUTH=FILE (a Kernel Tuner cache of the
#   whole space, for a single kernel file; unset: none)
# Runs already in OUT are kept: the same command again resumes (a cut one: delete its .json).
# Nothing else may run on the machine meanwhile: both tools time their candidates on its cores.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: kt_vs_optune_pocl.sh OUT [KERNEL_TOML ...]" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
optune=${OPTUNE:-$root/build/bin/optune}
python=${KT_PYTHON:-python3}
if [ $# -gt 0 ]; then kernels=("$@"); else kernels=("$root/configs/kernels/conv2d.toml"); fi
[ -x "$optune" ] || { echo "no $optune: build optune first (cmake --build build)" >&2; exit 2; }
"$python" -c 'import kernel_tuner, pyopencl' 2>/dev/null || { echo "pip install kernel_tuner pyopencl first" >&2; exit 2; }

"$python" - <<'EOF'
import sys, kernel_tuner, numpy, pyopencl
device = pyopencl.get_platforms()[0].get_devices()[0]
print("python", sys.version.split()[0], "kernel_tuner", kernel_tuner.__version__, "pyopencl", pyopencl.VERSION_TEXT,
      "numpy", numpy.__version__)
print("Kernel Tuner's device (platform 0, device 0):", device.platform.name, "/", device.name)
EOF
"$optune" devices | grep -A1 '^opencl' || true
export RUN_TIMEOUT=${RUN_TIMEOUT:-1800}
for kernel in "${kernels[@]}"; do
  truth_file="$out/$(basename "$kernel" .toml)/truth.json"
  [ -n "${TRUTH:-}" ] && [ ! -f "$truth_file" ] || continue
  mkdir -p "$(dirname "$truth_file")"
  if [ "$TRUTH" != grid ]; then cp "$TRUTH" "$truth_file"; continue; fi
  scratch=$(mktemp -d)
  mkdir -p "$scratch/pocl"
  echo "== $(basename "$kernel"): the truth, every valid config timed in full (grid)"
  OPTUNE_CACHE_DIR=$scratch POCL_CACHE_DIR=$scratch/pocl "$optune" tune --kernel "$kernel" --target opencl --tuner grid \
    --trials 100000 --bail-out off --timing full --remeasure 0 --db "$scratch/truth.db" --quiet | grep -E '^(trials|time|best) '
  "$optune" export --kernel-tuner --kernel "$kernel" --target opencl --ok-only --db "$scratch/truth.db" --out "$truth_file"
  # A grid times each config once: its front (within 20% of its best) again, 5 interleaved rounds.
  front=()
  while read -r config; do front+=(--config "$config"); done < <("$python" "$here/kt_vs_optune.py" truth-front "$truth_file")
  OPTUNE_CACHE_DIR=$scratch POCL_CACHE_DIR=$scratch/pocl "$optune" measure --kernel "$kernel" --target opencl "${front[@]}" \
    --rounds 5 --bail-out off --timing full --db "$scratch/truth.db" --format json > "$scratch/front.json"
  "$python" "$here/kt_vs_optune.py" refine-truth "$truth_file" "$scratch/front.json"
  rm -rf "$scratch"
done
"$python" "$here/kt_vs_optune.py" run "$out" "${kernels[@]}" --optune "$optune" \
  --strategies "${KT_STRATEGIES:-adaptive_tabu_greywolf,random_sample}" --trials "${TRIALS:-60}" --seeds "${SEEDS:-3}" \
  --brute-max "${BRUTE_MAX:-1000}" --optune-args "${OPTUNE_ARGS:-}" --deadline "${DEADLINE:-0}"
"$python" "$here/kt_vs_optune.py" report "$out" | tee "$out/report.md"
