// A tiled transpose through local memory: `in` has m rows of n floats, `out` n rows of m floats.
// Tuned by optune from transpose.toml; TILE, WPT and PAD come as -D defines. Work-group (gx, gy)
// moves the tile of columns gx*TILE.. and rows gy*TILE.. of `in`; work-item (lx, ly) reads row ly
// of the tile at columns lx, lx + TILE/WPT, ... (consecutive work-items, consecutive addresses),
// and writes row ly of the transposed tile the same way, so both global accesses coalesce.
// Needs n and m multiples of TILE (the file's rules).

#define STEP (TILE / WPT)

__kernel void transpose(__global const float* in, __global float* out, const int n, const int m) {
  __local float tile[TILE][TILE + PAD];
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int column0 = get_group_id(0) * TILE;  // of `in`; a row of `out`
  const int row0 = get_group_id(1) * TILE;     // of `in`; a column of `out`
  for (int w = 0; w < WPT; ++w) {
    const int x = lx + w * STEP;
    tile[ly][x] = in[(size_t)(row0 + ly) * n + column0 + x];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = 0; w < WPT; ++w) {
    const int y = lx + w * STEP;
    out[(size_t)(column0 + ly) * m + row0 + y] = tile[y][ly];
  }
}

// The reference: one work-item per element, over an NDRange of n x m.
__kernel void transpose_naive(__global const float* in, __global float* out, const int n, const int m) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x < n && y < m) out[(size_t)x * m + y] = in[(size_t)y * n + x];
}
