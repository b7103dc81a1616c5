#!/usr/bin/env bash
# Kernel Tuner against optune tuning the same user CUDA kernel file on this GPU, wall clock against
# wall clock (the two open issues: "at most half of Kernel Tuner's wall time to the same quality",
# a small kernel's candidate "at most twice Kernel Tuner's 65 ms a config", and "fewer evaluations
# to Kernel Tuner's best time"). For each kernel file, SEEDS seeds of: Kernel Tuner's tune_kernel
# (cupy backend) with each of KT_STRATEGIES, and `optune tune --kernel FILE --target cuda`, each
# TRIALS evaluations (at most half the valid space), each a fresh process with an empty compile
# cache; then Kernel Tuner's brute force once where the space has at most BRUTE_MAX configs (the
# ground truth of the best). What is compared and how the file maps onto tune_kernel:
# kt_vs_optune.py's header. Prints a markdown report, also written to OUT/report.md.
#
# On the GPU machine, from a pack of tests/bench/pack_gpu_cuda.sh (KT_WHEELS=DIR of
# tests/bench/kt_wheels.sh when it is made):
#   bash $PACK/kt_vs_optune_cuda.sh $PACK OUT [KERNEL_TOML ...]
#   default kernels: $PACK/kernels/matmul_cuda.toml (2048^3 FP32, milliseconds a run) and
#   reduction_cuda.toml (row sums of 128 MiB, tens of microseconds a run: the issue's small kernel)
# Settings (environment): KT_STRATEGIES=adaptive_tabu_greywolf,random_sample TRIALS=60 SEEDS=3
#   BRUTE_MAX=1000 OPTUNE_ARGS="" (extra `optune tune` options) KT_PYTHON=/opt/torch/.venv/bin/python3
#   DEADLINE=0 (seconds after which no further run starts; the report covers the runs done)
#   KT_CHECK=1 (0: Kernel Tuner checks no output) KT_SMEM_OPTIN=1 (0: KT stays below 48 KiB)
#   KT_HIDE_TORCH=1 (0: let Kernel Tuner import torch, as it does where torch is installed)
# Runs already in OUT are kept: the same command again resumes (a cut one: delete its .json).
# Nothing else may run on the GPU meanwhile.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: kt_vs_optune_cuda.sh PACK OUT [KERNEL_TOML ...]" >&2; exit 2; }
pack=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${KT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$python" ] || python=python3
if [ $# -gt 0 ]; then kernels=("$@"); else kernels=("$pack/kernels/matmul_cuda.toml" "$pack/kernels/reduction_cuda.toml"); fi

# Kernel Tuner from the pack's wheels, unpacked beside the runs: no pip, no registry, and the
# interpreter's own numpy and cupy are used.
site=$out/kt-site
if [ ! -f "$site/.unpacked" ]; then
  [ -d "$pack/kt-wheels" ] || { echo "no $pack/kt-wheels: make it with tests/bench/kt_wheels.sh" >&2; exit 2; }
  "$python" - "$pack/kt-wheels" "$site" <<'EOF'
import pathlib, shutil, sys, zipfile
wheels, site = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
site.mkdir(parents=True, exist_ok=True)
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
for data in site.glob("*.data"):  # a wheel's purelib/platlib parts belong in site-packages
    for part in ("purelib", "platlib"):
        for item in (data / part).glob("*") if (data / part).is_dir() else []:
            shutil.move(str(item), str(site / item.name))
(site / ".unpacked").write_text("\n".join(w.name for w in sorted(wheels.glob("*.whl"))) + "\n")
EOF
fi
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
"$python" -c 'import sys, kernel_tuner, cupy, numpy
print("python", sys.version.split()[0], "kernel_tuner", kernel_tuner.__version__, "cupy", cupy.__version__, "numpy", numpy.__version__)'

nvidia-smi -L || true
LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$pack/bin/optune" devices | grep -A1 '^cuda' || true
"$python" "$here/kt_vs_optune.py" run "$out" "${kernels[@]}" --optune "$pack/bin/optune" --optune-lib "$pack/lib" \
  --strategies "${KT_STRATEGIES:-adaptive_tabu_greywolf,random_sample}" --trials "${TRIALS:-60}" --seeds "${SEEDS:-3}" \
  --brute-max "${BRUTE_MAX:-1000}" --optune-args "${OPTUNE_ARGS:-}" --deadline "${DEADLINE:-0}"
"$python" "$here/kt_vs_optune.py" report "$out" | tee "$out/report.md"
