// A 5-point stencil for the cpu backend (stencil_cpu.toml): out[i][j] = center * c + side * (n + s
// + w + e) over the N x M interior of `in`, which has a one-cell halo ((N + 2) x (M + 2)). optune
// compiles this file with BX, BY, UNROLL and THREADS as -D defines into a shared object and calls
// `stencil` with the file's args in order; `stencil_reference` is the check. Any N and M are
// handled: blocks at the grid's edges are cut short, unrolled steps have tails. Every config adds
// in the reference's order, so results agree up to the compiler's contraction into fma.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

inline float point(const float* above, const float* row, const float* below, std::int32_t j, float center, float side) {
  return center * row[j] + side * ((above[j] + below[j]) + (row[j - 1] + row[j + 1]));
}

// Output row i reads input rows i, i + 1 and i + 2; `row` points at input column 1 of row i + 1.
void sweep_block(const float* in, float* out, std::int32_t m, float center, float side, std::int32_t i0,
                 std::int32_t i1, std::int32_t j0, std::int32_t j1) {
  const std::size_t in_m = static_cast<std::size_t>(m) + 2;
  for (std::int32_t i = i0; i < i1; ++i) {
    const float* row = in + (static_cast<std::size_t>(i) + 1) * in_m + 1;
    const float* above = row - in_m;
    const float* below = row + in_m;
    float* out_row = out + static_cast<std::size_t>(i) * m;
    std::int32_t j = j0;
    for (; j + UNROLL <= j1; j += UNROLL)
      for (int u = 0; u < UNROLL; ++u) out_row[j + u] = point(above, row, below, j + u, center, side);  // constant bound: unrolled
    for (; j < j1; ++j) out_row[j] = point(above, row, below, j, center, side);
  }
}

// Rows of blocks first, first + step, ...: the share of one thread.
void sweep(const float* in, float* out, float center, float side, std::int32_t n, std::int32_t m, std::int32_t first,
           std::int32_t step) {
  for (std::int32_t i0 = first * BY; i0 < n; i0 += step * BY) {
    const std::int32_t i1 = std::min<std::int32_t>(i0 + BY, n);
    for (std::int32_t j0 = 0; j0 < m; j0 += BX) sweep_block(in, out, m, center, side, i0, i1, j0, std::min<std::int32_t>(j0 + BX, m));
  }
}

}  // namespace

extern "C" void stencil(const float* in, float* out, float center, float side, std::int32_t n, std::int32_t m) {
  if (THREADS == 1) {
    sweep(in, out, center, side, n, m, 0, 1);
    return;
  }
  std::vector<std::thread> helpers;
  for (int t = 1; t < THREADS; ++t) helpers.emplace_back(sweep, in, out, center, side, n, m, t, THREADS);
  sweep(in, out, center, side, n, m, 0, THREADS);
  for (std::thread& helper : helpers) helper.join();
}

extern "C" void stencil_reference(const float* in, float* out, float center, float side, std::int32_t n, std::int32_t m) {
  const std::size_t in_m = static_cast<std::size_t>(m) + 2;
  for (std::int32_t i = 0; i < n; ++i)
    for (std::int32_t j = 0; j < m; ++j) {
      const float* row = in + (static_cast<std::size_t>(i) + 1) * in_m + 1;
      out[static_cast<std::size_t>(i) * m + j] = point(row - in_m, row, row + in_m, j, center, side);
    }
}
