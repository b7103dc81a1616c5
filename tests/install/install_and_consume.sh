#!/usr/bin/env bash
# Installs the built optune into a temporary prefix, builds tests/consumer against it with
# find_package(optune), runs it, and tunes one tiny GEMM with the installed command (which must
# find its worker and the installed kernel headers). Usage: install_and_consume.sh BUILD SOURCE
set -euo pipefail
build=$1
source=$2
prefix=$(mktemp -d /tmp/optune-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/optune" && test -x "$prefix/bin/optune-worker"
test -f "$prefix/include/optune/kernels/cpu/gemm.hpp"
cmake -S "$source/tests/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
"$prefix/consumer-build/consumer"
cd "$prefix"
"$prefix/bin/optune" tune --op gemm --shape 16,24,8 --trials 2 --remeasure 0 --quiet --db "$prefix/i.db" \
  --min-repeat-ms 1 --repeat 2
echo "install and consume: ok"
