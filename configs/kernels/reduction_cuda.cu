// y[r] = sum of row r of x (R rows of N floats): rows_per_block rows per block, each reduced by
// block_size_x threads that stride over it (VEC floats per load, the template's vector width), then by warp shuffles and one
// pass through shared memory.
template <int WIDTH> struct VectorOf;
template <> struct VectorOf<1> { using type = float; };
template <> struct VectorOf<2> { using type = float2; };
template <> struct VectorOf<4> { using type = float4; };

__device__ float sum_of(float v) { return v; }
__device__ float sum_of(float2 v) { return v.x + v.y; }
__device__ float sum_of(float4 v) { return (v.x + v.y) + (v.z + v.w); }

template <int WIDTH>
__global__ void row_sums(const float* __restrict__ x, float* __restrict__ y, int R, int N) {
  using Vector = typename VectorOf<WIDTH>::type;
  __shared__ float partial[rows_per_block][block_size_x / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int row = blockIdx.x * rows_per_block + threadIdx.y;
  float sum = 0.0f;
  if (row < R) {
    const Vector* v = reinterpret_cast<const Vector*>(x + static_cast<long>(row) * N);
    for (int i = threadIdx.x; i < N / WIDTH; i += block_size_x) sum += sum_of(v[i]);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) partial[threadIdx.y][warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0 && row < R) {
    float total = 0.0f;
    for (int w = 0; w < block_size_x / 32; ++w) total += partial[threadIdx.y][w];
    y[row] = total;
  }
}

extern "C" __global__ void row_sums_naive(const float* x, float* y, int R, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= R) return;
  double sum = 0.0;
  for (int i = 0; i < N; ++i) sum += x[static_cast<long>(row) * N + i];
  y[row] = static_cast<float>(sum);
}
