// The CPU GEMM in 8-bit integers: C[M,N] (int32) = A[M,K] (u8 or s8) * B[K,N] (s8), accumulated
// exactly in int32, as oneDNN's u8s8s32 matmul and PyTorch's _int_mm compute it. GotoBLAS
// structure as gemm.hpp: each thread owns a slice of N (in whole micro-panels), and loops over NC
// column blocks, KC depth blocks (B's block packed into micro-panels) and MC row blocks (A's block
// packed into micro-panels), then over NR-column and MR-row micro-tiles.
//
// Products are summed in pairs along K: operands are widened to int16 as they are packed (A's two
// values of a pair in one 32-bit word, broadcast; B's as pairs of adjacent K per column), and
// AVX2's vpmaddwd multiplies 16 pairs and adds each pair into 8 int32 lanes, exact for any 8-bit
// inputs (vpmaddubsw, 2x the products per instruction, would saturate its int16 sums at u8 x s8).
// Where AVX2 is missing the same packed layout runs in plain C++.
//
//   optune::kernels::cpu::gemm_int8<GemmInt8Config{...}>(M, N, K, A, lda, B, ldb, C, ldc);
// Compile with -O3 -march=<target> -fopenmp (without -fopenmp it runs on one thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "optune/kernels/cpu/aligned_buffer.hpp"

namespace optune::kernels::cpu {

struct GemmInt8Config {
  int mc = 96;     // rows of A per block (multiple of mr)
  int nc = 512;    // columns of B per block (multiple of nr)
  int kc = 512;    // depth per block (even: products are summed in pairs)
  int mr = 4;      // micro-tile rows
  int nr = 16;     // micro-tile columns, a multiple of 8 (one int32 vector of AVX2)
  int threads = 1;

  friend constexpr bool operator==(const GemmInt8Config&, const GemmInt8Config&) = default;
};

constexpr const char* gemm_int8_config_error(const GemmInt8Config& c) {
  if (c.mr < 1 || c.mr > 12) return "mr must be in 1..12";
  if (c.nr < 8 || c.nr > 32 || c.nr % 8 != 0) return "nr must be 8, 16, 24 or 32";
  if (c.mc < c.mr || c.mc % c.mr != 0) return "mc must be a positive multiple of mr";
  if (c.nc < c.nr || c.nc % c.nr != 0) return "nc must be a positive multiple of nr";
  if (c.kc < 2 || c.kc % 2 != 0) return "kc must be a positive even number";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  return nullptr;
}

namespace gemm_int8_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// Rows [0, m) x depth [0, k) of A into one MR-row panel of pair words: word (p2, r) holds
// A[r][2 p2] in its low and A[r][2 p2 + 1] in its high 16 bits; rows past m and a last odd
// depth are zeros.
template <int MR, typename TA>
void pack_a_panel(Index m, Index k, const TA* a, Index lda, std::int32_t* dst) {
  const Index pairs = ceil_div(k, 2);
  for (Index p2 = 0; p2 < pairs; ++p2) {
    for (int r = 0; r < MR; ++r) {
      std::int16_t low = 0, high = 0;
      if (r < m) {
        low = static_cast<std::int16_t>(a[r * lda + 2 * p2]);
        if (2 * p2 + 1 < k) high = static_cast<std::int16_t>(a[r * lda + 2 * p2 + 1]);
      }
      dst[p2 * MR + r] = static_cast<std::int32_t>(static_cast<std::uint16_t>(low) |
                                                   (static_cast<std::uint32_t>(static_cast<std::uint16_t>(high)) << 16));
    }
  }
}

// Columns [0, n) x depth [0, k) of B into one NR-column panel of int16 pairs: element
// (p2, j, t) = B[2 p2 + t][j], zeros past n and past k.
template <int NR>
void pack_b_panel(Index k, Index n, const std::int8_t* b, Index ldb, std::int16_t* dst) {
  const Index pairs = ceil_div(k, 2);
  for (Index p2 = 0; p2 < pairs; ++p2) {
    const std::int8_t* even = b + 2 * p2 * ldb;
    const std::int8_t* odd = 2 * p2 + 1 < k ? even + ldb : nullptr;
    std::int16_t* out = dst + p2 * NR * 2;
    for (Index j = 0; j < NR; ++j) {
      out[2 * j] = j < n ? even[j] : 0;
      out[2 * j + 1] = j < n && odd ? odd[j] : 0;
    }
  }
}

// C[0:MR, 0:NR] (=|+=) the packed A panel times the packed B panel over `pairs` pairs of depth.
template <int MR, int NR>
void micro_kernel(Index pairs, const std::int32_t* a, const std::int16_t* b, std::int32_t* c, Index ldc,
                  bool accumulate) {
#if defined(__AVX2__)
  constexpr int V = NR / 8;
  __m256i acc[MR][V];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_si256();
  for (Index p2 = 0; p2 < pairs; ++p2) {
    __m256i bv[V];
    for (int v = 0; v < V; ++v)
      bv[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + (p2 * NR + v * 8) * 2));
    for (int r = 0; r < MR; ++r) {
      const __m256i av = _mm256_set1_epi32(a[p2 * MR + r]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(av, bv[v]));
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < V; ++v) {
      auto* out = reinterpret_cast<__m256i*>(c + r * ldc + v * 8);
      const __m256i sum = accumulate ? _mm256_add_epi32(_mm256_loadu_si256(out), acc[r][v]) : acc[r][v];
      _mm256_storeu_si256(out, sum);
    }
#else
  std::int32_t acc[MR][NR] = {};
  for (Index p2 = 0; p2 < pairs; ++p2)
    for (int r = 0; r < MR; ++r) {
      const std::int32_t word = a[p2 * MR + r];
      const auto low = static_cast<std::int16_t>(word & 0xffff), high = static_cast<std::int16_t>(word >> 16);
      for (int j = 0; j < NR; ++j)
        acc[r][j] += low * b[(p2 * NR + j) * 2] + high * b[(p2 * NR + j) * 2 + 1];
    }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
#endif
}

// One thread's columns [0, N) of C, all rows.
template <GemmInt8Config Cfg, typename TA>
void run_slice(Index M, Index N, Index K, const TA* A, Index lda, const std::int8_t* B, Index ldb, std::int32_t* C,
               Index ldc) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr;
  thread_local AlignedBuffer a_buffer, b_buffer;
  const Index kc_max = std::min<Index>(Cfg.kc, K + (K & 1));
  const Index mc_max = std::min<Index>(Cfg.mc, ceil_div(M, MR) * MR);
  const Index nc_max = std::min<Index>(Cfg.nc, ceil_div(N, NR) * NR);
  // Sizes in floats (4 bytes): A words, B int16 pairs.
  auto* packed_a = reinterpret_cast<std::int32_t*>(a_buffer.reserve(static_cast<std::size_t>(mc_max * kc_max / 2)));
  auto* packed_b = reinterpret_cast<std::int16_t*>(b_buffer.reserve(static_cast<std::size_t>(nc_max * kc_max / 2)));
  alignas(32) std::int32_t tile[MR * NR];
  for (Index jc = 0; jc < N; jc += Cfg.nc) {
    const Index nc = std::min<Index>(Cfg.nc, N - jc);
    for (Index pc = 0; pc < K; pc += Cfg.kc) {
      const Index kc = std::min<Index>(Cfg.kc, K - pc), pairs = ceil_div(kc, 2);
      for (Index j = 0; j < ceil_div(nc, NR); ++j)
        pack_b_panel<NR>(kc, std::min<Index>(NR, nc - j * NR), B + pc * ldb + jc + j * NR, ldb,
                         packed_b + j * NR * 2 * pairs);
      for (Index ic = 0; ic < M; ic += Cfg.mc) {
        const Index mc = std::min<Index>(Cfg.mc, M - ic);
        for (Index i = 0; i < ceil_div(mc, MR); ++i)
          pack_a_panel<MR>(std::min<Index>(MR, mc - i * MR), kc, A + (ic + i * MR) * lda + pc, lda,
                           packed_a + i * MR * pairs);
        for (Index j = 0; j < ceil_div(nc, NR); ++j) {
          const Index n = std::min<Index>(NR, nc - j * NR);
          for (Index i = 0; i < ceil_div(mc, MR); ++i) {
            const Index m = std::min<Index>(MR, mc - i * MR);
            std::int32_t* c = C + (ic + i * MR) * ldc + jc + j * NR;
            const std::int32_t* a = packed_a + i * MR * pairs;
            const std::int16_t* b = packed_b + j * NR * 2 * pairs;
            if (m == MR && n == NR) {
              micro_kernel<MR, NR>(pairs, a, b, c, ldc, pc > 0);
              continue;
            }
            // An edge tile: computed whole on zero padding, its part inside C added or stored.
            micro_kernel<MR, NR>(pairs, a, b, tile, NR, false);
            for (Index r = 0; r < m; ++r)
              for (Index col = 0; col < n; ++col)
                c[r * ldc + col] = pc > 0 ? c[r * ldc + col] + tile[r * NR + col] : tile[r * NR + col];
          }
        }
      }
    }
  }
}

}  // namespace gemm_int8_detail

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions in elements; TA is std::uint8_t or
// std::int8_t. Any M, N, K >= 0; K == 0 gives C = 0.
template <GemmInt8Config Cfg, typename TA>
void gemm_int8(std::int64_t M, std::int64_t N, std::int64_t K, const TA* A, std::int64_t lda, const std::int8_t* B,
               std::int64_t ldb, std::int32_t* C, std::int64_t ldc) {
  using namespace gemm_int8_detail;
  static_assert(gemm_int8_config_error(Cfg) == nullptr, "invalid GemmInt8Config (see gemm_int8_config_error)");
  static_assert(sizeof(TA) == 1, "A is u8 or s8");
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (Index i = 0; i < M; ++i) std::fill_n(C + i * ldc, N, 0);
    return;
  }
  // Threads split N in whole micro-panels.
  const Index panels = ceil_div(N, Cfg.nr);
  auto run_thread = [&](int id, int size) {
    const Index first = panels * id / size * Cfg.nr, last = std::min<Index>(N, panels * (id + 1) / size * Cfg.nr);
    if (first < last) run_slice<Cfg>(M, last - first, K, A, lda, B + first, ldb, C + first, ldc);
  };
  if constexpr (Cfg.threads == 1) {
    run_thread(0, 1);
  } else {
#if defined(_OPENMP)
#pragma omp parallel num_threads(Cfg.threads)
    run_thread(omp_get_thread_num(), omp_get_num_threads());
#else
    run_thread(0, 1);
#endif
  }
}

}  // namespace optune::kernels::cpu
