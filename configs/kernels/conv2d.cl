// A 17 x 17 valid-mode 2D convolution (conv2d.toml): out is w x h, in (w + 16) x (h + 16), both
// row-major. Tuned by optune; BLOCK_X, BLOCK_Y, TILE_X, TILE_Y, USE_LOCAL and UNROLL come as -D
// defines. Work-group (gx, gy) computes the output tile of BLOCK_X * TILE_X columns from
// gx * BLOCK_X * TILE_X and BLOCK_Y * TILE_Y rows from gy * BLOCK_Y * TILE_Y; work-item (lx, ly)
// computes the outputs (lx + i * BLOCK_X, ly + j * BLOCK_Y) of it for i < TILE_X, j < TILE_Y, so
// at every step neighbouring work-items read neighbouring addresses. Outputs past w or h (the
// last tiles of an extent the tile does not divide) are neither computed nor written.

#ifndef FILTER_W
#define FILTER_W 17
#endif
#ifndef FILTER_H
#define FILTER_H 17
#endif

#define OUT_TILE_W (BLOCK_X * TILE_X)
#define OUT_TILE_H (BLOCK_Y * TILE_Y)
#define IN_TILE_W (OUT_TILE_W + FILTER_W - 1)  // with the halo the filter reaches
#define IN_TILE_H (OUT_TILE_H + FILTER_H - 1)

#if UNROLL
#define FILTER_COLUMN_LOOP _Pragma("unroll")
#else
#define FILTER_COLUMN_LOOP _Pragma("unroll 1")
#endif

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void conv2d(__global const float* restrict in, __global const float* restrict filter,
            __global float* restrict out, const int w, const int h) {
  const int in_w = w + FILTER_W - 1;
  const int in_h = h + FILTER_H - 1;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x0 = get_group_id(0) * OUT_TILE_W;  // the tile's first output column (and input column)
  const int y0 = get_group_id(1) * OUT_TILE_H;

#if USE_LOCAL
  __local float tile[IN_TILE_H][IN_TILE_W];
  for (int y = ly; y < IN_TILE_H; y += BLOCK_Y)
    for (int x = lx; x < IN_TILE_W; x += BLOCK_X) {
      const int gy = y0 + y, gx = x0 + x;
      tile[y][x] = (gy < in_h && gx < in_w) ? in[(size_t)gy * in_w + gx] : 0.0f;  // past the edge: unused
    }
  barrier(CLK_LOCAL_MEM_FENCE);
#define INPUT(y, x) tile[y][x]
#else
#define INPUT(y, x) in[(size_t)(y0 + (y)) * in_w + x0 + (x)]
#endif

  // An output past the edge reads the input of the last column or row instead (always in
  // bounds, so no read needs a test) and is not written.
  int ys[TILE_Y], xs[TILE_X];  // tile-relative coordinates of this work-item's outputs
  for (int j = 0; j < TILE_Y; ++j) ys[j] = min(ly + j * BLOCK_Y, h - 1 - y0);
  for (int i = 0; i < TILE_X; ++i) xs[i] = min(lx + i * BLOCK_X, w - 1 - x0);

  float sum[TILE_Y][TILE_X];
  for (int j = 0; j < TILE_Y; ++j)
    for (int i = 0; i < TILE_X; ++i) sum[j][i] = 0.0f;

  for (int fy = 0; fy < FILTER_H; ++fy) {
    FILTER_COLUMN_LOOP
    for (int fx = 0; fx < FILTER_W; ++fx) {
      const float weight = filter[fy * FILTER_W + fx];
      for (int j = 0; j < TILE_Y; ++j)
        for (int i = 0; i < TILE_X; ++i) sum[j][i] += INPUT(ys[j] + fy, xs[i] + fx) * weight;
    }
  }

  for (int j = 0; j < TILE_Y; ++j)
    for (int i = 0; i < TILE_X; ++i) {
      const int y = y0 + ly + j * BLOCK_Y, x = x0 + lx + i * BLOCK_X;
      if (y < h && x < w) out[(size_t)y * w + x] = sum[j][i];
    }
}

// The reference: one work-item per output, over an NDRange of w x h, in the same summation order.
__kernel void conv2d_naive(__global const float* restrict in, __global const float* restrict filter,
                           __global float* restrict out, const int w, const int h) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= w || y >= h) return;
  const int in_w = w + FILTER_W - 1;
  float sum = 0.0f;
  for (int fy = 0; fy < FILTER_H; ++fy)
    for (int fx = 0; fx < FILTER_W; ++fx) sum += in[(size_t)(y + fy) * in_w + x + fx] * filter[fy * FILTER_W + fx];
  out[(size_t)y * w + x] = sum;
}
