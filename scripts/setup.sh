#!/usr/bin/env bash
# Installs optune's build dependencies (Debian 12 packages, as root) when any is missing,
# then configures ./build (tests, benchmarks and the Python module included) and builds the
# targets named as arguments (scripts/optune: only the command and its worker), or everything.
# Called by the quick-start scripts; safe to rerun.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libpq-dev postgresql libxgboost-dev libeigen3-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libasio-dev libssl-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libmuparser-dev libfmt-dev
  libgtest-dev libdnnl-dev libopenblas-dev zlib1g-dev pybind11-dev python3-dev python3-venv ccache
  g++-aarch64-linux-gnu qemu-user iproute2 clang
  libclang-rt-14-dev libomp-14-dev  # tests/fuzz: clang's libFuzzer and sanitizers, OpenMP for clang
)
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
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DOPTUNE_BUILD_TESTS=ON -DOPTUNE_BUILD_BENCH=ON \
  -DOPTUNE_BUILD_PYTHON=ON >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
