// The CPU GEMM in bf16 on AVX-512 BF16's dot products: C[M,N] (bf16) = A[M,K] (bf16) *
// B[K,N] (bf16), accumulated in float32 and rounded to bf16 once, at the end (round to nearest
// even, as narrow<bfloat16> does). GotoBLAS structure as gemm_int8.hpp: each thread owns a slice
// of N (in whole micro-panels), and loops over NC column blocks, KC depth blocks (B's block
// packed into micro-panels) and MC row blocks (A's block packed into micro-panels), then over
// NR-column and MR-row micro-tiles. CPUs without BF16 dot products take gemm_widening.hpp.
//
// Products are summed in pairs along K, as vdpbf16ps takes them: A's two bf16 of a pair in one
// 32-bit word (broadcast), B's as pairs of adjacent K per column (a zmm is 16 columns' pairs),
// zero padded past K and past the tile, so any KC is correct (an even one wastes no padding).
// vdpbf16ps adds each pair's two products into 16 float32 lanes (the odd product first; each
// product of two bf16 is exact in float32).
//
// C holds only bf16, so a sum over several depth blocks cannot wait in C: it waits in a per
// thread float32 buffer, and the last depth block adds it and rounds into C. The buffer holds the
// current column block only (all M rows x NC, not the thread's whole slice of N), since the depth
// loop runs inside the column-block loop. When K <= KC the buffer is never touched and the
// micro-kernel rounds straight from its registers.
//
// Paths, chosen at compile time:
//  - __AVX512BF16__ and __AVX512F__: vdpbf16ps on zmm. Like the instruction, it treats
//    denormal inputs and results as zero (it ignores MXCSR), which the plain path does not.
//  - Elsewhere the same packed layout and float32 sums (the odd product first) in plain C++,
//    correct anywhere but only tuned for where avx512_bf16 exists.
//  - `amx` configs, with __AMX_TILE__ and __AMX_BF16__ (Sapphire Rapids on): AMX's tdpbf16ps
//    on tiles of 16 rows x 32 K of A (rows as they lie, 64 bytes each) and 16 pairs x 16 columns
//    of B (the packed panel's rows), summing into 16 x 16 float32 tiles; MR x NR of them (mr 16
//    or 32, nr 16 to 48, at most 8 tiles with A's and B's). Depth goes in steps of 32: A's block
//    is read in place where K and KC are multiples of 32 (pack_a off), else copied into a
//    zero-padded block; B's panel is zero-padded to whole steps. Elsewhere (or where Linux
//    refuses the process AMX's state) an amx config runs the paths above.
// NR is a multiple of gemm_bf16_lanes() = 16 (one zmm of float32) on both paths, so a config
// valid on one compiles on the other.
//
//   optune::kernels::cpu::gemm_bf16<GemmBf16Config{...}>(M, N, K, A, lda, B, ldb, C, ldc);
// Compile with -O3 -march=<target> -fopenmp (without -fopenmp it runs on one thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#include <immintrin.h>
#define OPTUNE_GEMM_BF16_AVX512 1
#endif
#include "optune/kernels/cpu/amx_tiles.hpp"
#if defined(OPTUNE_GEMM_BF16_AVX512) && defined(OPTUNE_AMX_TILES) && defined(__AMX_BF16__)
#define OPTUNE_GEMM_BF16_AMX 1
#endif

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/column_split.hpp"
#include "optune/kernels/cpu/element_types.hpp"
#include "optune/kernels/cpu/row_groups.hpp"

namespace optune::kernels::cpu {

struct GemmBf16Config {
  int mc = 96;     // rows of A per block (multiple of mr)
  int nc = 512;    // columns of B per block (multiple of nr)
  int kc = 256;    // depth per block (any; even wastes no zero padding)
  int mr = 6;      // micro-tile rows
  int nr = 32;     // micro-tile columns, a multiple of gemm_bf16_lanes() (16)
  int threads = 1;
  // false: A's rows are read where they lie (a pair of K is 4 bytes of a row as it is in memory)
  // when K is even; elsewhere A is packed regardless.
  bool pack_a = true;
  // true: the threads split M (whole MR-row panels) instead of N, for N too narrow to share.
  bool split_rows = false;
  // true: AMX tiles (mr 16 or 32 rows, nr 16 to 48 columns, kc a multiple of 32) where the target has them.
  bool amx = false;

  friend constexpr bool operator==(const GemmBf16Config&, const GemmBf16Config&) = default;
};

// The float32 lanes of the vector the micro-kernels accumulate in: nr must be a multiple of it.
// The plain path keeps AVX-512's 16 so that tuned configs stay valid on any machine.
constexpr int gemm_bf16_lanes() { return 16; }

constexpr const char* gemm_bf16_config_error(const GemmBf16Config& c) {
  if (c.amx) {
    if (const char* error = amx::micro_tile_error(c.mr, c.nr, c.kc, 32)) return error;
  } else if (c.mr < 1 || c.mr > 14) {
    return "mr must be in 1..14";
  }
  if (c.nr < 16 || c.nr > 64 || c.nr % 16 != 0) return "nr must be 16, 32, 48 or 64";
  if (c.mc < c.mr || c.mc % c.mr != 0) return "mc must be a positive multiple of mr";
  if (c.nc < c.nr || c.nc % c.nr != 0) return "nc must be a positive multiple of nr";
  if (c.kc < 1) return "kc must be positive";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  return nullptr;
}

namespace gemm_bf16_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// Rows [0, m) x depth [0, k) of A into one MR-row panel of pair words: word (p, r) holds
// A[r][2 p] in its low and A[r][2 p + 1] in its high 16 bits; rows past m and a last odd depth
// are zeros.
template <int MR>
void pack_a_panel(Index m, Index k, const bfloat16* a, Index lda, std::uint32_t* dst) {
  const Index pairs = ceil_div(k, 2);
  for (Index p = 0; p < pairs; ++p)
    for (int r = 0; r < MR; ++r) {
      std::uint32_t low = 0, high = 0;
      if (r < m) {
        low = a[r * lda + 2 * p].bits;
        if (2 * p + 1 < k) high = a[r * lda + 2 * p + 1].bits;
      }
      dst[p * MR + r] = low | (high << 16);
    }
}

// Columns [0, n) x depth [0, k) of B into one NR-column panel of bf16 pairs (as bits): element
// (p, j, t) = B[2 p + t][j], zeros past n and past k.
template <int NR>
void pack_b_panel(Index k, Index n, const bfloat16* b, Index ldb, std::uint16_t* dst) {
  const Index pairs = ceil_div(k, 2);
  for (Index p = 0; p < pairs; ++p) {
#if defined(OPTUNE_GEMM_BF16_AVX512)
    if (2 * p + 2 <= k && n == NR) {
      // Whole pairs of whole 8-column groups, interleaved in registers: a short-M GEMM uses each
      // value of B in few rows, and packing it one by one weighs.
      const bfloat16* even_row = b + 2 * p * ldb;
      auto* out = reinterpret_cast<__m128i*>(dst + p * NR * 2);
      for (Index j = 0; j < NR; j += 8) {
        const __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(even_row + j));
        const __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(even_row + ldb + j));
        _mm_storeu_si128(out + j / 4, _mm_unpacklo_epi16(even, odd));
        _mm_storeu_si128(out + j / 4 + 1, _mm_unpackhi_epi16(even, odd));
      }
      continue;
    }
#endif
    const bfloat16* even = b + 2 * p * ldb;
    const bfloat16* odd = 2 * p + 1 < k ? even + ldb : nullptr;
    std::uint16_t* out = dst + p * NR * 2;
    for (Index j = 0; j < NR; ++j) {
      out[2 * j] = j < n ? even[j].bits : 0;
      out[2 * j + 1] = j < n && odd ? odd[j].bits : 0;
    }
  }
}

#if defined(OPTUNE_GEMM_BF16_AVX512)
// 16 float32 to bf16 with narrow<bfloat16>'s rounding, bit for bit: vcvtneps2bf16 would flush
// denormal values to zero. Shifts in vector extensions and a zero-masked vpmovdw: GCC 12 warns
// (-Wmaybe-uninitialized) on the unmasked intrinsics' undefined pass-through operand.
inline __m256i narrow_bf16(__m512 x) {
  typedef std::uint32_t Bits __attribute__((vector_size(64)));
  const Bits bits = (Bits)x, high = bits >> 16;
  const Bits rounded = (bits + 0x7fffu + (high & 1u)) >> 16;
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  // NaN stays (quiet) NaN.
  const __m512i result = _mm512_mask_or_epi32((__m512i)rounded, nan, (__m512i)high, _mm512_set1_epi32(0x40));
  return _mm512_maskz_cvtepi32_epi16(0xffff, result);
}
#endif

// The MR x NR tile of the packed A panel times the packed B panel over `pairs` pairs of depth,
// plus the earlier depth blocks' sum in `wide` unless `first`; kept in `wide` for the next block,
// or, when `last`, rounded into the bf16 tile `c`.
// A pair of A: 4 bytes that may lie anywhere (memcpy: A's rows are bf16 values, not words).
inline std::uint32_t load_pair(const std::uint8_t* at) {
  std::uint32_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// Pair p of row r of A is the 4 bytes at a + p * pair_step + r * row_step: a packed panel
// (pair_step 4 MR, row_step 4) or A's rows in place (4, 2 lda).
template <int MR, int NR>
void micro_kernel(Index pairs, const std::uint8_t* a, Index pair_step, Index row_step, const std::uint16_t* b,
                  float* wide, Index ldw, bfloat16* c, Index ldc, bool first, bool last) {
#if defined(OPTUNE_GEMM_BF16_AVX512)
  constexpr int V = NR / 16;
  __m512 acc[MR][V];
  // Unrolled whole so the accumulators stay in registers (GCC's -O2 would keep them in memory).
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (Index p = 0; p < pairs; ++p) {
    __m512bh bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + (p * NR + v * 16) * 2);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(load_pair(a + p * pair_step + r * row_step)));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      float* w = wide + r * ldw + v * 16;
      const __m512 sum = first ? acc[r][v] : _mm512_add_ps(_mm512_loadu_ps(w), acc[r][v]);
      if (last)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + v * 16), narrow_bf16(sum));
      else
        _mm512_storeu_ps(w, sum);
    }
  }
#else
  float acc[MR][NR] = {};
  for (Index p = 0; p < pairs; ++p)
    for (int r = 0; r < MR; ++r) {
      const std::uint32_t word = load_pair(a + p * pair_step + r * row_step);
      const float low = widen(bfloat16{static_cast<std::uint16_t>(word & 0xffffu)});
      const float high = widen(bfloat16{static_cast<std::uint16_t>(word >> 16)});
      const std::uint16_t* pair = b + p * NR * 2;
      for (int j = 0; j < NR; ++j) {
        acc[r][j] += high * widen(bfloat16{pair[2 * j + 1]});
        acc[r][j] += low * widen(bfloat16{pair[2 * j]});
      }
    }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) {
      const float sum = first ? acc[r][j] : wide[r * ldw + j] + acc[r][j];
      if (last)
        c[r * ldc + j] = narrow<bfloat16>(sum);
      else
        wide[r * ldw + j] = sum;
    }
#endif
}

// The m x n part of a tile computed whole into `tile` (rows of NR floats), carried into C as a
// full tile's sums would be: added to the earlier depth blocks' in `w` unless `first`, kept there,
// or, when `last`, rounded into `c`.
template <int NR>
void carry_tile(const float* tile, Index m, Index n, float* w, Index ldw, bfloat16* c, Index ldc, bool first,
                bool last) {
  for (Index r = 0; r < m; ++r)
    for (Index col = 0; col < n; ++col) {
      const float sum = first ? tile[r * NR + col] : w[r * ldw + col] + tile[r * NR + col];
      if (last)
        c[r * ldc + col] = narrow<bfloat16>(sum);
      else
        w[r * ldw + col] = sum;
    }
}

#if defined(OPTUNE_GEMM_BF16_AMX)
// The MT*16 x NT*16 tile of A (rows a_stride bytes apart, 32 K a step) times the packed B panel
// over `steps` steps, plus the earlier depth blocks' sum in `wide` unless `first`; kept in `wide`
// for the next block, or, when `last`, rounded into the bf16 tile `c`.
template <int MT, int NT>
void amx_micro_kernel(Index steps, const std::uint8_t* a, Index a_stride, const std::uint8_t* b, Index b_stride,
                      float* wide, Index ldw, bfloat16* c, Index ldc, bool first, bool last) {
  alignas(64) float sums[16 * 16];
  amx::micro_tile<MT, NT, amx::DotBf16>(
      steps, a, a_stride, b, b_stride,
      [&]<int T>(int mi, int ni) {
        if (first)
          amx::zero<T>();
        else
          amx::load<T>(wide + mi * 16 * ldw + ni * 16, ldw * 4);
      },
      [&]<int T>(int mi, int ni) {
        if (!last) return amx::store<T>(wide + mi * 16 * ldw + ni * 16, ldw * 4);
        amx::store<T>(sums, 64);
        for (int r = 0; r < 16; ++r)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + (mi * 16 + r) * ldc + ni * 16),
                              narrow_bf16(_mm512_load_ps(sums + r * 16)));
      });
}

// run_slice on AMX tiles, in amx::walk_blocks's loops: B packed in vdpbf16ps's pairs, float sums
// kept between depth blocks in `wide`, tiles short of MR x NR computed whole into `tile` and
// carried into C after.
template <GemmBf16Config Cfg>
void run_slice_amx(Index M, Index N, Index K, const bfloat16* A, Index lda, const bfloat16* B, Index ldb, bfloat16* C,
                   Index ldc) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr, MT = MR / 16, NT = NR / 16;
  thread_local AlignedBuffer wide_buffer;
  const Index nc_max = std::min<Index>(Cfg.nc, ceil_div(N, NR) * NR);
  float* wide = K > Cfg.kc ? wide_buffer.reserve(static_cast<std::size_t>(M * nc_max)) : nullptr;
  alignas(64) float tile[MR * NR];
  amx::walk_blocks<MR, NR, 32>(
      M, N, K, A, lda, Cfg.mc, Cfg.nc, Cfg.kc, Cfg.pack_a,
      [&](Index kc, Index columns, Index depth, Index column, std::uint8_t* panel) {
        pack_b_panel<NR>(kc, columns, B + depth * ldb + column, ldb, reinterpret_cast<std::uint16_t*>(panel));
      },
      [&](const amx::MicroTileAt& t) {
        float* w = wide ? wide + t.row * nc_max + t.block_column : nullptr;
        bfloat16* c = C + t.row * ldc + t.column;
        if (t.rows == MR && t.columns == NR) {
          amx_micro_kernel<MT, NT>(t.steps, t.a, t.a_stride, t.b, NR * 4, w, nc_max, c, ldc, t.first, t.last);
          return;
        }
        amx_micro_kernel<MT, NT>(t.steps, t.a, t.a_stride, t.b, NR * 4, tile, NR, nullptr, 0, true, false);
        carry_tile<NR>(tile, t.rows, t.columns, w, nc_max, c, ldc, t.first, t.last);
      });
}
#endif

// One thread's columns [0, N) of C, all rows.
template <GemmBf16Config Cfg>
void run_slice(Index M, Index N, Index K, const bfloat16* A, Index lda, const bfloat16* B, Index ldb, bfloat16* C,
               Index ldc) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr;
  thread_local AlignedBuffer a_buffer, b_buffer, wide_buffer;
  const Index pairs_max = ceil_div(std::min<Index>(Cfg.kc, K), 2);
  const Index mc_max = std::min<Index>(Cfg.mc, ceil_div(M, MR) * MR);
  const Index nc_max = std::min<Index>(Cfg.nc, ceil_div(N, NR) * NR);
  // Sizes in floats (4 bytes): one per A pair word and per B column-pair.
  auto* packed_a = reinterpret_cast<std::uint32_t*>(a_buffer.reserve(static_cast<std::size_t>(mc_max * pairs_max)));
  auto* packed_b = reinterpret_cast<std::uint16_t*>(b_buffer.reserve(static_cast<std::size_t>(nc_max * pairs_max)));
  // The float32 sums of the column block between depth blocks (row stride nc_max), only when K
  // takes more than one.
  float* wide = K > Cfg.kc ? wide_buffer.reserve(static_cast<std::size_t>(M * nc_max)) : nullptr;
  alignas(64) float tile[MR * NR];
  // Row panels read in place: every depth block is then whole pairs of each row.
  const bool in_place = !Cfg.pack_a && K % 2 == 0 && Cfg.kc % 2 == 0;
  for (Index jc = 0; jc < N; jc += Cfg.nc) {
    const Index nc = std::min<Index>(Cfg.nc, N - jc);
    for (Index pc = 0; pc < K; pc += Cfg.kc) {
      const Index kc = std::min<Index>(Cfg.kc, K - pc), pairs = ceil_div(kc, 2);
      const bool first = pc == 0, last = pc + kc >= K;
      for (Index j = 0; j < ceil_div(nc, NR); ++j)
        pack_b_panel<NR>(kc, std::min<Index>(NR, nc - j * NR), B + pc * ldb + jc + j * NR, ldb,
                         packed_b + j * NR * 2 * pairs);
      for (Index ic = 0; ic < M; ic += Cfg.mc) {
        const Index mc = std::min<Index>(Cfg.mc, M - ic);
        // Each group of rows (row_groups.hpp) packed on its own: rows [r, r + R) of the block at
        // word r * pairs, an R-row panel.
        if (!in_place)
          for (Index i = 0; i < ceil_div(mc, MR); ++i)
            for_each_row_group<MR>(std::min<Index>(MR, mc - i * MR), [&](auto rows, Index first_row) {
              const Index r = i * MR + first_row;
              pack_a_panel<rows()>(rows(), kc, A + (ic + r) * lda + pc, lda, packed_a + r * pairs);
            });
        for (Index j = 0; j < ceil_div(nc, NR); ++j) {
          const Index n = std::min<Index>(NR, nc - j * NR);
          const std::uint16_t* b = packed_b + j * NR * 2 * pairs;
          for (Index i = 0; i < ceil_div(mc, MR); ++i) {
            const Index m = std::min<Index>(MR, mc - i * MR);
            // A tile of fewer than NR columns is computed whole on B's zero padding into `tile`;
            // its part inside C is carried on after, as a full tile's would be.
            const bool full_width = n == NR;
            for_each_row_group<MR>(m, [&](auto rows, Index first_row) {
              const Index r = ic + i * MR + first_row;
              const auto* a = in_place ? reinterpret_cast<const std::uint8_t*>(A + r * lda + pc)
                                       : reinterpret_cast<const std::uint8_t*>(packed_a + (r - ic) * pairs);
              const Index pair_step = in_place ? 4 : 4 * rows(), row_step = in_place ? 2 * lda : 4;
              if (full_width)
                micro_kernel<rows(), NR>(pairs, a, pair_step, row_step, b,
                                         wide ? wide + r * nc_max + j * NR : nullptr, nc_max, C + r * ldc + jc + j * NR,
                                         ldc, first, last);
              else
                micro_kernel<rows(), NR>(pairs, a, pair_step, row_step, b, tile + first_row * NR, NR, nullptr, 0, true,
                                         false);
            });
            if (full_width) continue;
            carry_tile<NR>(tile, m, n, wide ? wide + (ic + i * MR) * nc_max + j * NR : nullptr, nc_max,
                           C + (ic + i * MR) * ldc + jc + j * NR, ldc, first, last);
          }
        }
      }
    }
  }
}

}  // namespace gemm_bf16_detail

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions in elements. Any M, N, K >= 0;
// K == 0 gives C = 0.
template <GemmBf16Config Cfg>
void gemm_bf16(std::int64_t M, std::int64_t N, std::int64_t K, const bfloat16* A, std::int64_t lda,
               const bfloat16* B, std::int64_t ldb, bfloat16* C, std::int64_t ldc) {
  using namespace gemm_bf16_detail;
  static_assert(gemm_bf16_config_error(Cfg) == nullptr, "invalid GemmBf16Config (see gemm_bf16_config_error)");
  static_assert(Cfg.nr % gemm_bf16_lanes() == 0,
                "GemmBf16Config::nr must be a multiple of gemm_bf16_lanes() (16: one zmm of float32)");
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (Index i = 0; i < M; ++i) std::fill_n(C + i * ldc, N, bfloat16{0});
    return;
  }
  for_each_share<Cfg.threads, Cfg.split_rows>(M, N, Cfg.mr, Cfg.nr, [&](Index i0, Index m, Index j0, Index n) {
#if defined(OPTUNE_GEMM_BF16_AMX)
    if constexpr (Cfg.amx)
      if (amx::permitted()) return run_slice_amx<Cfg>(m, n, K, A + i0 * lda, lda, B + j0, ldb, C + i0 * ldc + j0, ldc);
#endif
    run_slice<Cfg>(m, n, K, A + i0 * lda, lda, B + j0, ldb, C + i0 * ldc + j0, ldc);
  });
}

}  // namespace optune::kernels::cpu
