// C = A * B for row-major float matrices (A: M x K, B: K x N), tiled through shared memory: a block
// of block_size_x * block_size_y threads computes a TILE_M x TILE_N tile of C (each thread
// WPT_Y x WPT_X of its elements), stepping over K in TILE_K slices that it stages in dynamic
// shared memory. The entry is a template over the thread tile, so each config is an instance of it
// (matmul<WPT_X, WPT_Y>; the knobs are macros too, so the parameters have names of their own).
template <int THREAD_N, int THREAD_M>
__global__ void matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                       int N, int K) {
  constexpr int TILE_N = block_size_x * THREAD_N;
  constexpr int TILE_M = block_size_y * THREAD_M;
  extern __shared__ float shared[];
  float* As = shared;                    // TILE_M x TILE_K
  float* Bs = shared + TILE_M * TILE_K;  // TILE_K x TILE_N
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int threads = block_size_x * block_size_y, thread = ty * block_size_x + tx;
  const int row0 = blockIdx.y * TILE_M, col0 = blockIdx.x * TILE_N;
  float acc[THREAD_M][THREAD_N] = {};
  for (int k0 = 0; k0 < K; k0 += TILE_K) {
    for (int i = thread; i < TILE_M * TILE_K; i += threads) {
      const int r = i / TILE_K, c = i % TILE_K;
      As[i] = (row0 + r < M && k0 + c < K) ? A[(row0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = thread; i < TILE_K * TILE_N; i += threads) {
      const int r = i / TILE_N, c = i % TILE_N;
      Bs[i] = (k0 + r < K && col0 + c < N) ? B[(k0 + r) * N + col0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE_K; ++k) {
      float b[THREAD_N];
#pragma unroll
      for (int x = 0; x < THREAD_N; ++x) b[x] = Bs[k * TILE_N + tx + x * block_size_x];
#pragma unroll
      for (int y = 0; y < THREAD_M; ++y) {
        const float a = As[(ty + y * block_size_y) * TILE_K + k];
#pragma unroll
        for (int x = 0; x < THREAD_N; ++x) acc[y][x] += a * b[x];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int y = 0; y < THREAD_M; ++y) {
    const int row = row0 + ty + y * block_size_y;
#pragma unroll
    for (int x = 0; x < THREAD_N; ++x) {
      const int col = col0 + tx + x * block_size_x;
      if (row < M && col < N) C[row * N + col] = acc[y][x];
    }
  }
}

// One thread per element of C, straight from global memory: the check's reference.
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
  C[row * N + col] = sum;
}
