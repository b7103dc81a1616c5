// Build-time consumption of tuned low-precision GEMM configs (tuned_gemm.hpp's tables, rows of
// each kernel's own config type): `optune apply-best` writes a table of the records of each dtype
// the application tuned, with the entry point optune::gemm(...) overloaded on the element types.
//   int8 (gemm_int8.cpu): u8 or s8 activations by s8 weights, int32 out;
//   bf16 where the CPU has AVX-512 BF16 (gemm_bf16.cpu): vdpbf16ps, float32 sums;
//   f16, and bf16 elsewhere (gemm.cpu): the float32 kernel on widened operands.
#pragma once

#include <cstdint>

#include "optune/kernels/cpu/gemm_bf16.hpp"
#include "optune/kernels/cpu/gemm_int8.hpp"
#include "optune/kernels/cpu/gemm_widening.hpp"
#include "optune/kernels/cpu/tuned_gemm.hpp"

namespace optune::kernels::cpu {

using TunedGemmInt8 = TunedGemmRow<GemmInt8Config>;
using TunedGemmBf16 = TunedGemmRow<GemmBf16Config>;

template <const auto& Table, GemmInt8Config Fallback, typename TA>
bool gemm_int8_tuned(std::int64_t M, std::int64_t N, std::int64_t K, const TA* A, std::int64_t lda,
                     const std::int8_t* B, std::int64_t ldb, std::int32_t* C, std::int64_t ldc) {
  return tuned_detail::run_tuned_gemm<Table, Fallback>(
      M, N, K, [&]<GemmInt8Config Config>() { gemm_int8<Config>(M, N, K, A, lda, B, ldb, C, ldc); });
}

template <const auto& Table, GemmBf16Config Fallback>
bool gemm_bf16_tuned(std::int64_t M, std::int64_t N, std::int64_t K, const bfloat16* A, std::int64_t lda,
                     const bfloat16* B, std::int64_t ldb, bfloat16* C, std::int64_t ldc) {
  return tuned_detail::run_tuned_gemm<Table, Fallback>(
      M, N, K, [&]<GemmBf16Config Config>() { gemm_bf16<Config>(M, N, K, A, lda, B, ldb, C, ldc); });
}

// T: bfloat16 or float16.
template <const auto& Table, GemmConfig Fallback, typename T>
bool gemm_widening_tuned(std::int64_t M, std::int64_t N, std::int64_t K, const T* A, std::int64_t lda, const T* B,
                         std::int64_t ldb, T* C, std::int64_t ldc) {
  return tuned_detail::run_tuned_gemm<Table, Fallback>(
      M, N, K, [&]<GemmConfig Config>() { gemm_widening<Config>(M, N, K, A, lda, B, ldb, C, ldc); });
}

}  // namespace optune::kernels::cpu
