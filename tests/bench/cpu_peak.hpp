// The machine's float32 FMA peak, measured: what every CPU benchmark reports its figures against
// (the CPU changes between machines, so no figure is carried over).
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdio>

#include "optune/kernels/cpu/simd.hpp"

namespace optune::bench {

// Independent FMA chains in registers on every core: what the cores can do at most. Twelve named
// accumulators (more than FMA latency x pipes, 4 x 2 on Zen3); an array would be kept in memory.
inline double fma_peak_gflops(int threads) {
  using S = optune::kernels::cpu::Simd<optune::kernels::cpu::kMaxLanes>;
  constexpr int kChains = 12;
  constexpr long kIterations = 50'000'000;
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const float seed = 1e-3f * static_cast<float>(omp_get_thread_num() + 1);
    const float xs = 0.999999f, ys = 1e-7f;
    const S::Vector x = S::broadcast(&xs), y = S::broadcast(&ys);
    S::Vector a0 = S::broadcast(&seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
              a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
#define OPTUNE_EACH_CHAIN(F) \
  F(a0) F(a1) F(a2) F(a3) F(a4) F(a5) F(a6) F(a7) F(a8) F(a9) F(a10) F(a11)
#define OPTUNE_OPAQUE(a) S::keep_in_register(a);  // no common subexpressions between chains
#define OPTUNE_STEP(a) a = S::fma(a, x, y);
    OPTUNE_EACH_CHAIN(OPTUNE_OPAQUE)
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < kIterations; ++i) {
      OPTUNE_EACH_CHAIN(OPTUNE_STEP)
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    S::Vector sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    if (sum[0] == 42.0f) std::puts("");  // keeps the chains alive
#undef OPTUNE_STEP
#undef OPTUNE_OPAQUE
#undef OPTUNE_EACH_CHAIN
    total += 2.0 * kIterations * kChains * optune::kernels::cpu::kMaxLanes / seconds / 1e9;
  }
  return total;
}

}  // namespace optune::bench
