// The CPU GEMM in 16-bit floats on the float32 kernel: C[M,N] = A[M,K] * B[K,N] with A, B and C
// in bf16 or IEEE half (element_types.hpp), accumulated in float32, the path for CPUs without
// 16-bit dot-product instructions (AVX2, AVX-512 without BF16, Armv8.0). A is widened into its
// packed micro-panels once per call (gemm_prepack_a), B into its packed blocks as the blocking
// loops pack them (WideningB, so pack_b must be on), and the products accumulate in float32 in
// gemm()'s own micro-kernels, into a float32 copy of C that is rounded to T at the end. The
// schedule is the same GemmConfig, tuned per dtype.
//
//   optune::kernels::cpu::gemm_widening<GemmConfig{...}>(M, N, K, A, lda, B, ldb, C, ldc);
#pragma once

#include "optune/kernels/cpu/gemm.hpp"

namespace optune::kernels::cpu {
namespace gemm_detail {

// A row-major B of 16-bit floats, widened into float32 panels as it is packed.
template <typename T>
struct WideningB {
  static constexpr bool kInPlace = false;  // the micro-kernels read float32: always packed
  const T* b;
  Index ldb;
  WideningB columns_from(Index j) const { return {b + j, ldb}; }
  template <int NR>
  void pack(Index pc, Index kc, Index jc, Index nc, Index panel_begin, Index panel_end, float* dst) const {
    pack_b_block<NR, T>(kc, nc, b + pc * ldb + jc, ldb, dst, panel_begin, panel_end);
  }
};

}  // namespace gemm_detail

template <GemmConfig Cfg, typename T>
void gemm_widening(std::int64_t M, std::int64_t N, std::int64_t K, const T* A, std::int64_t lda, const T* B,
                   std::int64_t ldb, T* C, std::int64_t ldc) {
  using namespace gemm_detail;
  static_assert(gemm_config_error(Cfg) == nullptr, "invalid GemmConfig (see gemm_config_error)");
  static_assert(is_supported_lanes(Cfg.lanes),
                "GemmConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  static_assert(Cfg.pack_b, "gemm_widening widens B as it packs it: pack_b = true");
  if (M <= 0 || N <= 0) return;
  thread_local AlignedBuffer packed_a, wide_c;
  const Index padded_rows = ceil_div(M, Cfg.mr) * Cfg.mr;
  float* a = packed_a.reserve(static_cast<std::size_t>(padded_rows * std::max<Index>(K, 1)));
  float* c = wide_c.reserve(static_cast<std::size_t>(M * N));
  const Index KC = kc_block<Cfg>();
  const int threads = thread_count<Cfg>();
  const Index depth_blocks = ceil_div(K, KC);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) if (threads > 1)
#endif
  for (Index block = 0; block < depth_blocks; ++block) {
    const Index pc = block * KC, kc = std::min<Index>(KC, K - pc);
    pack_a_block<Cfg.mr, T>(M, kc, A + pc, lda, a + pc * padded_rows, 0, padded_rows / Cfg.mr);
  }
  run_operands<Cfg>(M, N, K, PrepackedA{a, padded_rows}, WideningB<T>{B, ldb}, c, N);
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) if (threads > 1)
#endif
  for (Index i = 0; i < M; ++i)
    for (Index j = 0; j < N; ++j) C[i * ldc + j] = narrow<T>(c[i * N + j]);
}

}  // namespace optune::kernels::cpu
