#!/usr/bin/env bash
# Packs what cuda_examples_run.sh, cuda_gemm_run.sh, cuda_conv_run.sh, cuda_remeasure.sh, cuda_parity.sh, trust_under_gpu_load.sh, time_to_result.sh, dispatch_bench.sh, multi_gpu_tune.sh and kt_vs_optune_cuda.sh need on a GPU machine with no package registry: the installed optune
# (optune, optune-worker, optune-nvrtc), the shared libraries they link that such a machine may
# lack, the example CUDA kernel files, and Kernel Tuner's wheels where KT_WHEELS (default
# BUILD_DIR/kt-wheels) holds them (tests/bench/kt_wheels.sh DIR downloads them).
# Usage: pack_gpu_cuda.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1; mkdir -p "$2"; prefix=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$prefix"; mkdir -p "$prefix/lib" "$prefix/kernels"
cmake --install "$build" --prefix "$prefix" >/dev/null
rm -rf "$prefix/include" "$prefix/lib/cmake" "$prefix/lib"/*.a
# The trust benchmark's quiet truth (cmake --build BUILD_DIR --target bench_interleaved_truth).
cp "$build/tests/bench/bench_interleaved_truth" "$prefix/bin/"
for binary in "$prefix/bin/optune" "$prefix/bin/optune-worker" "$prefix/bin/optune-nvrtc" "$prefix/bin/bench_interleaved_truth"; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' | while read -r lib; do
  case "$lib" in "$prefix"/*) ;; *) cp -L "$lib" "$prefix/lib/" ;; esac
done
cp "$root"/configs/kernels/*_cuda.* "$prefix/kernels/"
cp "$here/cuda_examples_run.sh" "$here/cuda_gemm_run.sh" "$here/torch_gemm_peers.py" "$here/torch_peers.py" \
  "$here/trust_under_gpu_load.sh" "$here/trust_verdict.py" "$here/time_to_result.sh" "$here/time_to_result.py" \
  "$here/dispatch_bench.sh" "$here/dispatch_gpu.sh" "$here/nvidia_opencl_icd.sh" "$here/multi_gpu_tune.sh" \
  "$here/multi_gpu_tune.py" "$here/kt_vs_optune_cuda.sh" "$here/kt_vs_optune.py" "$here/best_check_errors.py" \
  "$here/profile_gemm_bf16_ncu.sh" "$here/rpc_gpu_lending.sh" "$here/cuda_conv_run.sh" "$here/torch_conv_peers.py" \
  "$here/cuda_remeasure.sh" "$here/cuda_kernel_ab.sh" "$here/cuda_parity.sh" "$here/best_configs.py" "$here/opencl_extensions.py" \
  "$prefix/"
wheels=${KT_WHEELS:-$build/kt-wheels}
if [ -d "$wheels" ]; then cp -r "$wheels" "$prefix/kt-wheels"; fi
du -sh "$prefix"
