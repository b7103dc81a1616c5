// out[y][x] = sum over fy < FH, fx < FW of in[y + fy][x + fx] * filter[fy][fx]: a single-channel
// "valid" 2D convolution, the kernel Kernel Tuner's CUDA examples tune. A block of
// block_size_x x block_size_y threads computes a (block_size_x * TILE_X) x (block_size_y * TILE_Y)
// tile of the output, each thread TILE_X x TILE_Y outputs block_size_x and block_size_y apart.
// USE_SHARED stages the block's input tile and its halo in dynamic shared memory first; the
// filter is read through the read-only cache (__ldg).
extern "C" __global__ void conv2d(const float* __restrict__ in, const float* __restrict__ filter,
                                  float* __restrict__ out, int w, int h) {
  constexpr int TW = block_size_x * TILE_X, TH = block_size_y * TILE_Y;  // the block's outputs
  constexpr int IW = TW + FW - 1, IH = TH + FH - 1;                      // its inputs
  const int in_w = w + FW - 1;
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  float sum[TILE_Y][TILE_X] = {};
#if USE_SHARED
  extern __shared__ float tile[];  // IH x IW
  for (int i = threadIdx.y * block_size_x + threadIdx.x; i < IW * IH; i += block_size_x * block_size_y) {
    const int ix = x0 + i % IW, iy = y0 + i / IW;
    tile[i] = (ix < in_w && iy < h + FH - 1) ? in[iy * in_w + ix] : 0.0f;
  }
  __syncthreads();
#define INPUT(y, x) tile[((y) - y0) * IW + (x) - x0]
#else
#define INPUT(y, x) in[(y) * in_w + (x)]
#endif
  for (int fy = 0; fy < FH; ++fy) {
#if UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int fx = 0; fx < FW; ++fx) {
      const float f = __ldg(filter + fy * FW + fx);
#pragma unroll
      for (int ty = 0; ty < TILE_Y; ++ty) {
        const int y = y0 + threadIdx.y + ty * block_size_y;
#pragma unroll
        for (int tx = 0; tx < TILE_X; ++tx) {
          const int x = x0 + threadIdx.x + tx * block_size_x;
          if (x < w && y < h) sum[ty][tx] += INPUT(y + fy, x + fx) * f;
        }
      }
    }
  }
#pragma unroll
  for (int ty = 0; ty < TILE_Y; ++ty)
#pragma unroll
    for (int tx = 0; tx < TILE_X; ++tx) {
      const int x = x0 + threadIdx.x + tx * block_size_x, y = y0 + threadIdx.y + ty * block_size_y;
      if (x < w && y < h) out[y * w + x] = sum[ty][tx];
    }
}

// One thread per output, in double: the check's reference.
extern "C" __global__ void conv2d_reference(const float* in, const float* filter, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  double sum = 0;
  for (int fy = 0; fy < FH; ++fy)
    for (int fx = 0; fx < FW; ++fx) sum += double(in[(y + fy) * (w + FW - 1) + x + fx]) * filter[fy * FW + fx];
  out[y * w + x] = float(sum);
}
