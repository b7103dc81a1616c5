// Build-time consumption of tuned GEMM configs: `optune apply-best` writes a header with a
// constexpr table of TunedGemm rows (one per tuned shape, and one per shape the application lists
// that was never tuned, with its nearest tuned shape's config), the template's default config, and
// optune::gemm(...), which an application calls. It dispatches through gemm_tuned<table,
// default>(...): the tuned config of the matching shape, instantiated from the same kernel header
// the tuner measured, and the default config for any other shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "optune/kernels/cpu/gemm.hpp"

namespace optune::kernels::cpu {

struct TunedGemm {
  std::int64_t m = 0, n = 0, k = 0;
  GemmConfig config;
};

// C[M,N] = A[M,K] * B[K,N], row-major. Returns true when a tuned entry ran, false when the shape
// has none and `Fallback` ran.
template <const auto& Table, GemmConfig Fallback>
bool gemm_tuned(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda,
                const float* B, std::int64_t ldb, float* C, std::int64_t ldc) {
  bool tuned = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto run = [&]<std::size_t J>() {
      constexpr TunedGemm entry = Table[J];
      if (entry.m != M || entry.n != N || entry.k != K) return false;
      gemm<entry.config>(M, N, K, A, lda, B, ldb, C, ldc);
      return true;
    };
    return (run.template operator()<I>() || ...);
  }(std::make_index_sequence<Table.size()>{});
  if (!tuned) gemm<Fallback>(M, N, K, A, lda, B, ldb, C, ldc);
  return tuned;
}

}  // namespace optune::kernels::cpu
