#!/usr/bin/env bash
# Installs optune's build dependencies (Debian 12 packages, as root) when any is missing, configures
# ./build and builds. With targets as arguments (scripts/optune: the command and its worker) only
# what they need is installed, and a first configure leaves out the tests, benchmarks and Python
# module; without, everything: tests, benchmarks and the Python module included (scripts/test).
# Called by the quick-start scripts; safe to rerun.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What the command and its worker need (the quick start, scripts/optune: setup.sh TARGET...) ...
command_packages=(
  build-essential cmake pkg-config
  libsqlite3-dev libpq-dev libxgboost-dev libeigen3-dev
  libasio-dev libssl-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libmuparser-dev libfmt-dev zlib1g-dev
)
# ... the OpenCL backend's, where the machine has an OpenCL driver (an ICD) ...
opencl_here=OFF
if compgen -G "/etc/OpenCL/vendors/*.icd" >/dev/null; then
  opencl_here=ON
  command_packages+=(ocl-icd-opencl-dev opencl-headers)
fi
# ... and the CUDA backend where it has an NVIDIA driver (it needs no package: it loads libcuda at run time).
cuda_here=OFF
if ldconfig -p 2>/dev/null | grep -q "libcuda.so.1"; then cuda_here=ON; fi
# ... and what the tests, benchmarks, Python module and fuzz targets need besides (scripts/test).
suite_packages=(
  git sqlite3 postgresql ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libgtest-dev libdnnl-dev libopenblas-dev pybind11-dev python3-dev python3-venv ccache
  g++-aarch64-linux-gnu qemu-user iproute2 clang
  libclang-rt-14-dev libomp-14-dev  # tests/fuzz: clang's libFuzzer and sanitizers, OpenMP for clang
)
packages=("${command_packages[@]}")
[ $# -eq 0 ] && packages+=("${suite_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "optune setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_type=${OPTUNE_BUILD_TYPE:-Release}
if [ $# -eq 0 ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DOPTUNE_BUILD_TESTS=ON -DOPTUNE_BUILD_BENCH=ON \
    -DOPTUNE_BUILD_PYTHON=ON -DOPTUNE_OPENCL=ON -DOPTUNE_CUDA=ON >/dev/null
elif [ ! -f build/CMakeCache.txt ]; then
  # A first build for the command alone: no tests, benchmarks or Python module to configure, and
  # the GPU backends only where the machine has their driver (scripts/test builds them all).
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DOPTUNE_BUILD_TESTS=OFF -DOPTUNE_BUILD_BENCH=OFF \
    -DOPTUNE_BUILD_PYTHON=OFF -DOPTUNE_OPENCL="$opencl_here" -DOPTUNE_CUDA="$cuda_here" >/dev/null
fi
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
