// How the dot-product GEMMs (gemm_int8.hpp, gemm_bf16.hpp) share a call between threads: each
// thread owns a slice of N in whole NR-column micro-panels, so that no two write one C tile and
// each packs only its own B.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace optune::kernels::cpu {

// Calls slice(first, count) once per thread of Threads with its columns [first, first + count)
// of [0, N), skipping threads left without a panel.
template <int Threads, typename Slice>
void for_each_column_slice(std::int64_t N, std::int64_t nr, Slice&& slice) {
  const std::int64_t panels = (N + nr - 1) / nr;
  auto run_thread = [&](int id, int size) {
    const std::int64_t first = panels * id / size * nr, last = std::min<std::int64_t>(N, panels * (id + 1) / size * nr);
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

}  // namespace optune::kernels::cpu
