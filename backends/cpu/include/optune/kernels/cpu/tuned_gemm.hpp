// Build-time consumption of tuned GEMM configs: `optune apply-best` writes a header with a
// constexpr table of TunedGemm rows (one per tuned shape, one per shape the application lists that
// was never tuned, with its nearest tuned shape's config, and one per leaf of a measured dispatch
// of a shape range, holding a box of shapes), the template's default config, and optune::gemm(...),
// which an application calls. It dispatches through gemm_tuned<table, default>(...): the config
// of the first row that holds the shape, instantiated from the same kernel header the tuner
// measured, and the default config for any other shape. The low-precision GEMMs' tables (rows of
// their own config types) dispatch the same way: tuned_gemm_lowp.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "optune/kernels/cpu/gemm.hpp"

namespace optune::kernels::cpu {

template <typename Config>
struct TunedGemmRow {
  std::int64_t m = 0, n = 0, k = 0;
  Config config;
  // A leaf of a measured dispatch (optune dispatch): the row holds every shape from (m, n, k) to
  // (m_upper, n_upper, k_upper). 0: the row holds (m, n, k) alone.
  std::int64_t m_upper = 0, n_upper = 0, k_upper = 0;
};
using TunedGemm = TunedGemmRow<GemmConfig>;

template <typename Config>
constexpr bool holds(const TunedGemmRow<Config>& row, std::int64_t M, std::int64_t N, std::int64_t K) {
  if (row.m_upper == 0) return row.m == M && row.n == N && row.k == K;
  return row.m <= M && M <= row.m_upper && row.n <= N && N <= row.n_upper && row.k <= K && K <= row.k_upper;
}

// The index of the row of Table that runs a shape: the first that holds it; -1 for none (the
// default config runs).
template <const auto& Table>
constexpr int tuned_gemm_row(std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::size_t i = 0; i < Table.size(); ++i)
    if (holds(Table[i], M, N, K)) return static_cast<int>(i);
  return -1;
}

namespace tuned_detail {
// Calls run.template operator()<config>() with the config of the first row of Table that holds the
// shape and returns true, or with Fallback and returns false.
template <const auto& Table, auto Fallback, typename Run>
bool run_tuned_gemm(std::int64_t M, std::int64_t N, std::int64_t K, Run&& run) {
  const bool tuned = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto one = [&]<std::size_t J>() {
      constexpr auto entry = Table[J];
      if (!holds(entry, M, N, K)) return false;
      run.template operator()<entry.config>();
      return true;
    };
    return (one.template operator()<I>() || ...);
  }(std::make_index_sequence<Table.size()>{});
  if (!tuned) run.template operator()<Fallback>();
  return tuned;
}
}  // namespace tuned_detail

// C[M,N] = A[M,K] * B[K,N], row-major. Returns true when a tuned entry ran (the first that holds
// the shape), false when none does and `Fallback` ran.
template <const auto& Table, GemmConfig Fallback>
bool gemm_tuned(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda,
                const float* B, std::int64_t ldb, float* C, std::int64_t ldc) {
  return tuned_detail::run_tuned_gemm<Table, Fallback>(
      M, N, K, [&]<GemmConfig Config>() { gemm<Config>(M, N, K, A, lda, B, ldb, C, ldc); });
}

}  // namespace optune::kernels::cpu
