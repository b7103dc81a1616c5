#!/usr/bin/env bash
# Installs the built optune into a temporary prefix; tunes one small GEMM with the installed
# command (which must find its worker and the installed kernel headers); then builds
# tests/consumer against the install with find_package(optune) and optune_apply_best(), and runs
# it: the tuned shape must run its tuned config, another shape the default, both correctly, and
# the build must note the workload without a tuned config. The same on OpenCL (consumer_opencl,
# tuned on PoCL), whose programs come from the on-disk cache on a second run.
# Usage: install_and_consume.sh BUILD SOURCE [OPENCL]  (OPENCL: ON, or OFF for a CPU-only build)
set -euo pipefail
build=$(cd "$1" && pwd)    # absolute: the script changes into the prefix below
source=$(cd "$2" && pwd)
opencl=${3:-ON}
prefix=$(mktemp -d /tmp/optune-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/optune" && test -x "$prefix/bin/optune-worker"
test -f "$prefix/include/optune/kernels/cpu/gemm.hpp"
cd "$prefix"
# Run locks of its own: tests beside it (ctest -j) measure on this machine's CPU too.
export OPTUNE_LOCK_DIR="$prefix/locks"
"$prefix/bin/optune" tune --op gemm --shape 16,24,8 --trials 3 --remeasure 0 --quiet --db "$prefix/tuned.db" \
  --min-repeat-ms 1 --repeat 2 >/dev/null
# The CPU consumer is configured as on a machine without OpenCL: it must not need it.
cmake -S "$source/tests/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DOPTUNE_CONSUMER_DB="$prefix/tuned.db" -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=ON >/dev/null
cmake --build "$prefix/consumer-build" > "$prefix/build.log" 2>&1 || { cat "$prefix/build.log"; exit 1; }
grep -q "no tuned config for gemm.f32.M67.N45.K129" "$prefix/build.log" || {
  echo "the build did not note the untuned workload"; cat "$prefix/build.log"; exit 1; }
grep -q "{16, 24, 8, " "$prefix/consumer-build/optune_tuned/consumer/optune_tuned.hpp"
"$prefix/consumer-build/consumer"

if [ "$opencl" = OFF ]; then
  test ! -e "$prefix/share/optune/opencl" || { echo "a CPU-only install carries OpenCL kernels"; exit 1; }
  echo "install and consume (CPU only): ok"
  exit 0
fi

# OpenCL (PoCL here): tune on the first OpenCL device, build consumer_opencl against its table,
# run it twice: the second run's programs must come from the on-disk cache, not the compiler.
# f32, bf16 and i8: the header gets a table and an entry point of each (gemm, gemm_bf16, gemm_i8).
for dtype in f32 bf16 i8; do
  "$prefix/bin/optune" tune --op gemm --shape 16,24,8 --dtype "$dtype" --target opencl --trials 3 --remeasure 0 \
    --quiet --db "$prefix/opencl.db" --min-repeat-ms 1 --repeat 2 >/dev/null
done
cmake -S "$source/tests/consumer" -B "$prefix/opencl-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DOPTUNE_CONSUMER_OPENCL_DB="$prefix/opencl.db" >/dev/null
cmake --build "$prefix/opencl-build" > "$prefix/opencl-build.log" 2>&1 || { cat "$prefix/opencl-build.log"; exit 1; }
grep -q "no tuned config for gemm.f32.M33.N20.K17" "$prefix/opencl-build.log" || {
  echo "the OpenCL build did not note the untuned workload"; cat "$prefix/opencl-build.log"; exit 1; }
for dtype in f32 bf16 i8; do
  grep -q "{\"gemm.$dtype.M16.N24.K8\", \"gemm.cl\", \"optune_gemm\"," \
    "$prefix/opencl-build/optune_tuned/consumer_opencl/optune_tuned.hpp"
done
# optune's program cache is what this checks; PoCL gets it only with PoCL's own cache off
# (program_cache.hpp), as an application on another OpenCL implementation always does.
export POCL_KERNEL_CACHE=0
"$prefix/opencl-build/consumer_opencl" "$prefix/program-cache" | tee "$prefix/first.out"
ls "$prefix/program-cache"/*.bin >/dev/null
"$prefix/opencl-build/consumer_opencl" "$prefix/program-cache" | tee "$prefix/second.out"
test "$(grep -c 'program from disk cache' "$prefix/second.out")" -eq 6 || {
  echo "the second run compiled its programs again"; exit 1; }
echo "install and consume: ok"
