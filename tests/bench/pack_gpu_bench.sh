#!/usr/bin/env bash
# Packs what opencl_gpu_bench.sh needs on a machine with no package registry: the installed
# optune, the shared libraries it links that such a machine may lack, CLBlast (Debian's
# libclblast1, downloaded with apt-get) with a small SGEMM driver, the hand-picked gemm.cl sweep
# (opencl_gemm_sweep), the launch-floor probes (opencl_launch_floor, launch_floor_cuda.py), the
# PyTorch peer script, and bench_rpc_overhead with opencl_rpc_gpu.sh
# (OpenCL over RPC on the GPU machine).
# Usage: pack_gpu_bench.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1; mkdir -p "$2"; prefix=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$prefix"; mkdir -p "$prefix/lib" "$prefix/bench" "$prefix/bin"
cmake --install "$build" --prefix "$prefix" >/dev/null
rm -rf "$prefix/include" "$prefix/lib/cmake" "$prefix/lib"/*.a
clblast=$(mktemp -d)
(cd "$clblast" && apt-get download libclblast1 libclblast-dev >/dev/null 2>&1 && for f in *.deb; do dpkg -x "$f" root; done)
c++ -O2 "$here/clblast_sgemm.cpp" -I"$clblast/root/usr/include" "$clblast/root/usr/lib/x86_64-linux-gnu/libclblast.so.1" \
  -lOpenCL -Wl,-rpath,'$ORIGIN/../lib' -o "$prefix/bin/clblast_sgemm"
cp -L "$clblast/root/usr/lib/x86_64-linux-gnu/libclblast.so.1" "$prefix/lib/"
c++ -O2 -std=c++17 "$here/opencl_gemm_sweep.cpp" -lOpenCL -Wl,-rpath,'$ORIGIN/../lib' -o "$prefix/bin/opencl_gemm_sweep"
c++ -O2 -std=c++17 "$here/opencl_launch_floor.cpp" -lOpenCL -o "$prefix/bin/opencl_launch_floor"
rm -rf "$clblast"
cp "$build/tests/bench/bench_rpc_overhead" "$build/tests/bench/bench_held_out_shapes" "$prefix/bin/"
for binary in "$prefix/bin/optune" "$prefix/bin/optune-worker" "$prefix/bin/clblast_sgemm" "$prefix/bin/bench_rpc_overhead" "$prefix/bin/bench_held_out_shapes"; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' | while read -r lib; do
  case "$lib" in "$prefix"/*) ;; *) cp -L "$lib" "$prefix/lib/" ;; esac
done
cp "$here/torch_peers.py" "$here/small_gemm_peers.py" "$here/opencl_gpu_bench.sh" "$here/opencl_rpc_gpu.sh" "$here/nvidia_opencl_icd.sh" "$here/opencl_gemm_sweep_configs.txt" \
  "$here/held_out_shapes.sh" "$here/launch_floor_cuda.py" \
  "$prefix/bench/"
du -sh "$prefix"
