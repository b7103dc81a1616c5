// The kernels optune-cuda-probe compiles, loads and launches on a GPU machine, kept apart so that
// the NVRTC tests compile the very same source on machines without a GPU.
#pragma once

#include <string>
#include <vector>

namespace optune::backends::cuda {

// matmul stages `stage_tiles` K-tiles of A and B per step in dynamic shared memory
// (2 * TILE * TILE * stage_tiles * sizeof(T) bytes), so that one instantiation with a deep stage
// needs more than the 48 KiB a kernel gets without opting in.
inline constexpr const char* kProbeSource = R"(
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// C = A * B, n x n, row-major; n a multiple of TILE * stage_tiles; blocks of TILE x TILE threads.
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE) matmul(const T* a, const T* b, T* c, int n, int stage_tiles) {
  extern __shared__ __align__(16) unsigned char shared[];
  const int depth = TILE * stage_tiles;
  T* tile_a = reinterpret_cast<T*>(shared);  // [TILE][depth]
  T* tile_b = tile_a + TILE * depth;         // [depth][TILE]
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  T sum = 0;
  for (int k0 = 0; k0 < n; k0 += depth) {
    for (int s = 0; s < stage_tiles; ++s) {
      tile_a[threadIdx.y * depth + s * TILE + threadIdx.x] = a[row * n + k0 + s * TILE + threadIdx.x];
      tile_b[(s * TILE + threadIdx.y) * TILE + threadIdx.x] = b[(k0 + s * TILE + threadIdx.y) * n + col];
    }
    __syncthreads();
    for (int k = 0; k < depth; ++k) sum += tile_a[threadIdx.y * depth + k] * tile_b[k * TILE + threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__global__ void write_through(int* pointer) { *pointer = 42; }
)";

inline const std::vector<std::string> kProbeNameExpressions = {
    "&vector_add", "&matmul<float, 16>", "&matmul<float, 32>", "&matmul<double, 16>", "&write_through"};

}  // namespace optune::backends::cuda
