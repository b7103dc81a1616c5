#!/usr/bin/env bash
# Installs the built optune into a temporary prefix; tunes one small GEMM with the installed
# command (which must find its worker and the installed kernel headers); then builds
# tests/consumer against the install with find_package(optune) and optune_apply_best(), and runs
# it: the tuned shape must run its tuned config, another shape the default, both correctly, and
# the build must note the workload without a tuned config. Usage: install_and_consume.sh BUILD SOURCE
set -euo pipefail
build=$1
source=$2
prefix=$(mktemp -d /tmp/optune-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/optune" && test -x "$prefix/bin/optune-worker"
test -f "$prefix/include/optune/kernels/cpu/gemm.hpp"
cd "$prefix"
"$prefix/bin/optune" tune --op gemm --shape 16,24,8 --trials 3 --remeasure 0 --quiet --db "$prefix/tuned.db" \
  --min-repeat-ms 1 --repeat 2 >/dev/null
cmake -S "$source/tests/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DOPTUNE_CONSUMER_DB="$prefix/tuned.db" >/dev/null
cmake --build "$prefix/consumer-build" > "$prefix/build.log" 2>&1 || { cat "$prefix/build.log"; exit 1; }
grep -q "no tuned config for gemm.f32.M67.N45.K129" "$prefix/build.log" || {
  echo "the build did not note the untuned workload"; cat "$prefix/build.log"; exit 1; }
grep -q "{16, 24, 8, " "$prefix/consumer-build/optune_tuned/consumer/optune_tuned.hpp"
"$prefix/consumer-build/consumer"
echo "install and consume: ok"
