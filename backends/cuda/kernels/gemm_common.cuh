// What the CUDA GEMM kernels share (gemm_mma.cu, gemm_wgmma.cu, gemm_tma.cu): the element types the workload's
// dtype names (the inputs' `element`, C's `out_element`), cp.async's copies, and the banded walk of C's tiles.
// Defines read: OPTUNE_F16 for f16, OPTUNE_E4M3 for fp8 (e4m3 in, bf16 out; gemm_tma.cu only), OPTUNE_F32 for
// float32 (gemm_3xtf32.cu, which defines it), else bf16; GEMM_M, GEMM_N.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(OPTUNE_E4M3)
typedef unsigned char element;  // fp8 E4M3's bits: only the tensor cores read them
#define MMA_TYPE "e4m3"
#elif defined(OPTUNE_F32)
typedef float element;  // split into TF32 parts for the tensor cores
typedef float2 element2;
#define MMA_TYPE "tf32"
__device__ inline element2 to_element2(float a, float b) { return make_float2(a, b); }
#elif defined(OPTUNE_F16)
typedef __half element;
typedef __half2 element2;
#define MMA_TYPE "f16"
__device__ inline element2 to_element2(float a, float b) { return __floats2half2_rn(a, b); }
#else
typedef __nv_bfloat16 element;
typedef __nv_bfloat162 element2;
#define MMA_TYPE "bf16"
__device__ inline element2 to_element2(float a, float b) { return __floats2bfloat162_rn(a, b); }
#endif

// C's elements: the inputs' type, but bf16 for fp8.
#if defined(OPTUNE_E4M3)
typedef __nv_bfloat16 out_element;
typedef __nv_bfloat162 out_element2;
__device__ inline out_element2 to_out_element2(float a, float b) { return __floats2bfloat162_rn(a, b); }
#else
typedef element out_element;
typedef element2 out_element2;
__device__ inline out_element2 to_out_element2(float a, float b) { return to_element2(a, b); }
#endif

__device__ inline unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// 16 bytes global -> shared (a shared-space address), or 16 zero bytes where `valid` is false.
__device__ inline void copy16(unsigned shared, const void* global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global), "r"(valid ? 16 : 0));
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ inline void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// The cp.async ring over a block's `Slices` K slices, `Stages` buffers deep (gemm_mma.cu,
// gemm_ffma.cu): `load(buffer, slice)` issues the copies of a slice into a buffer, `compute(buffer)`
// runs the math on one once its copies have landed; Stages - 1 slices are in flight ahead of it.
template <int Stages, int Slices, typename Load, typename Compute>
__device__ inline void pipelined_slices(Load load, Compute compute) {
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < Slices) load(s, s);
    commit();
  }
  for (int kt = 0; kt < Slices; ++kt) {
    wait_copies<Stages - 2>();
    __syncthreads();
    const int next = kt + Stages - 1;
    if (next < Slices) load(next % Stages, next);
    commit();
    compute(kt % Stages);
  }
  wait_copies<0>();
}

// The first row and column of tile `tile` of C: tiles are walked in bands of group_m row tiles,
// column by column, so the B tiles a band reads stay in L2. group_m is the kernel's last argument,
// not a define: configs that differ only in it run one compiled module.
template <int TILE_M, int TILE_N>
__device__ inline void tile_origin(int tile, int group_m, int& row0, int& col0) {
  constexpr int TILES_M = (GEMM_M + TILE_M - 1) / TILE_M, TILES_N = (GEMM_N + TILE_N - 1) / TILE_N;
  const int first_m = tile / (group_m * TILES_N) * group_m;
  const int band_rows = min(TILES_M - first_m, group_m);
  row0 = (first_m + (tile % (group_m * TILES_N)) % band_rows) * TILE_M;
  col0 = (tile % (group_m * TILES_N)) / band_rows * TILE_N;
}

// This block's tile of C, one tile per block.
template <int TILE_M, int TILE_N>
__device__ inline void block_origin(int group_m, int& row0, int& col0) {
  tile_origin<TILE_M, TILE_N>(blockIdx.x, group_m, row0, col0);
}
