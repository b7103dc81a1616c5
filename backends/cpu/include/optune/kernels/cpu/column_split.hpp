// How the dot-product GEMMs (gemm_int8.hpp, gemm_bf16.hpp) share a call between threads: each
// thread owns a slice of N in whole NR-column micro-panels, so that no two write one C tile and
// each packs only its own B; or, where N is too narrow to share (a conv2d's 7x7 layer is a GEMM of
// 49 columns), a slice of M in whole MR-row panels, each thread packing all of B.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace optune::kernels::cpu {

// Calls slice(first, count) once per thread of Threads with its share [first, first + count) of
// [0, extent) in whole panels of `panel` (NR columns or MR rows), skipping threads left without one.
template <int Threads, typename Slice>
void for_each_slice(std::int64_t extent, std::int64_t panel, Slice&& slice) {
  const std::int64_t panels = (extent + panel - 1) / panel;
  auto run_thread = [&](int id, int size) {
    const std::int64_t first = panels * id / size * panel,
                       last = std::min<std::int64_t>(extent, panels * (id + 1) / size * panel);
    if (first < last) slice(first, last - first);
  };
  if constexpr (Threads == 1) {
    run_thread(0, 1);
  } else {
#if defined(_OPENMP)
#pragma omp parallel num_threads(Threads)
    run_thread(omp_get_thread_num(), omp_get_num_threads());
#else
    run_thread(0, 1);
#endif
  }
}

// Calls share(i0, m, j0, n) once per thread of Threads with its block of C, rows [i0, i0 + m) x
// columns [j0, j0 + n): with SplitRows a share of M in MR-row panels and every column, else a
// share of N in NR-column panels and every row.
template <int Threads, bool SplitRows, typename Share>
void for_each_share(std::int64_t M, std::int64_t N, std::int64_t mr, std::int64_t nr, Share&& share) {
  if constexpr (SplitRows) {
    for_each_slice<Threads>(M, mr, [&](std::int64_t first, std::int64_t count) { share(first, count, 0, N); });
  } else {
    for_each_slice<Threads>(N, nr, [&](std::int64_t first, std::int64_t count) { share(0, M, first, count); });
  }
}

}  // namespace optune::kernels::cpu
