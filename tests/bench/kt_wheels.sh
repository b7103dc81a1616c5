#!/usr/bin/env bash
# Downloads Kernel Tuner and the packages it imports at run time as wheels for CPython 3.12 on
# manylinux x86_64, for a GPU machine with no package registry (kt_vs_optune_cuda.sh unpacks them
# there; pack_gpu_cuda.sh copies DIR into its pack as kt-wheels/). Run where pip reaches an index.
#
#   bash tests/bench/kt_wheels.sh DIR
#   KT_VERSION=1.5.0  KT_WHEELS_SCIPY=1 (also scipy, for dual_annealing, bayes_opt, diff_evo, ...)
#
# Only what `tune_kernel(..., lang="cupy")` with Kernel Tuner's own strategies imports is kept:
# numpy and cupy are on the GPU machine already, and pandas, scikit-learn, pymoo and matplotlib
# (bayes_opt, the multi-objective strategies, plots) would add 50 MB that the benchmark never
# loads. scipy (35 MB) only on request: the default strategies do not import it.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: kt_wheels.sh DIR" >&2; exit 2; }
dir=$1
version=${KT_VERSION:-1.5.0}
platform=(--python-version 3.12 --implementation cp --only-binary=:all:
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
  --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64)
mkdir -p "$dir"
rm -f "$dir"/*.whl
download() { pip download -q --disable-pip-version-check "${platform[@]}" -d "$dir" "$@"; }
download --no-deps "kernel_tuner==$version"
# Kernel Tuner's run-time imports (kernel_tuner/interface.py, searchspace.py, util.py), with their
# own dependencies resolved, so the versions agree with each other.
download jsonschema xmltodict packaging "python-constraint2>=2.5.0"
[ "${KT_WHEELS_SCIPY:-0}" = 1 ] && download --no-deps "scipy>=1.14.1"

bad=0
for wheel in "$dir"/*.whl; do
  case $(basename "$wheel") in
    *-py3-none-any.whl | *-py2.py3-none-any.whl) ;;
    *-cp312-cp312-manylinux*_x86_64.whl | *-cp3*-abi3-manylinux*_x86_64.whl) ;;
    *) echo "not for CPython 3.12 on manylinux x86_64: $(basename "$wheel")" >&2; bad=1 ;;
  esac
done
[ "$bad" = 0 ] || exit 1
find "$dir" -name '*.whl' -printf '%9s  %f\n' | sort -k2
du -sh "$dir"
