// The CPU GEMM in 8-bit integers: C[M,N] (int32) = A[M,K] * B[K,N], each of A and B u8 or s8,
// accumulated exactly in int32, as oneDNN's u8s8s32 matmul and PyTorch's _int_mm compute it (A u8
// activations, B s8 weights; conv2d_dot.hpp runs s8 filters as A on u8 image columns as B). GotoBLAS
// structure as gemm.hpp: each thread owns a slice of N (in whole micro-panels), and loops over NC
// column blocks, KC depth blocks (B's block packed into micro-panels) and MC row blocks (A's block
// packed into micro-panels), then over NR-column and MR-row micro-tiles.
//
// Five paths, chosen at compile time; all pack K in groups of G consecutive values (A's G values
// of a row in one word, broadcast; B's as G adjacent K per column; SMMLA's below take them in
// pairs), zero padded, so any KC is correct and each depth block is packed on its own:
//  - AVX-512 VNNI (__AVX512VNNI__ and __AVX512BW__) with one operand u8 and the other s8: G = 4
//    bytes, unwidened. vpdpbusd multiplies u8 x s8 and adds four products straight into each of
//    16 int32 lanes of a zmm, exact (no int16 intermediate; |4 * 255 * -128| is far inside int32),
//    4x the products per instruction of the AVX2 pair path. Which operand is broadcast does not
//    matter to it: the u8 one goes in its unsigned slot. NR is a multiple of 16 (one zmm).
//  - AVX2 with 7-bit activations (GemmInt8Config::a7: the u8 operand holds 0..127 only, as
//    PyTorch's x86 quantisers make activations where there is no VNNI, reduce_range) and the
//    other operand s8 (the GEMM's A u8 and B s8, or the convolution's s8 filter as A and u8
//    columns as B): G = 4, VNNI's quads. vpmaddubsw multiplies 32 u8 x s8 pairs (the u8 one in its
//    unsigned slot) and adds each pair into an int16, which cannot saturate (2 x 127 x 128 <
//    32768); vpmaddwd by ones adds the int16 pairs into 8 int32 lanes. Three instructions per 32
//    products against the pair path's four, A read in place and B packed unwidened. NR is a
//    multiple of 8 (one ymm).
//  - AVX2, and two operands of one signedness on a VNNI machine: G = 2, operands
//    widened to int16 as they are packed, vpmaddwd multiplies 16 pairs and adds each pair into
//    8 int32 lanes, exact for any 8-bit inputs (vpmaddubsw, 2x the products per instruction,
//    would saturate its int16 sums at u8 x s8). NR is a multiple of 8 (one ymm).
//  - Arm with the dot-product extension (__ARM_FEATURE_DOTPROD: -march=armv8.2-a+dotprod) and
//    s8 x s8, as Arm runs int8: G = 4 as VNNI's quads, SDOT adds four products into each of 4
//    int32 lanes of a 128-bit vector, 4x the products of widening multiplies. NR a multiple of 8
//    all the same (4 would do), so that a config runs on every path.
//  - Arm with the int8 matrix multiply (__ARM_FEATURE_MATMUL_INT8: +i8mm, Armv8.6 and some
//    Armv8.2 cores: Neoverse V1/N2, Graviton 3, Cortex-A510/A710) and s8 x s8: G = 8, SMMLA
//    multiplies a 2 x 8 block of A by an 8 x 2 block of B into a 2 x 2 int32 tile, 32 products
//    an instruction (SDOT's 16). A is packed in row pairs, B in column pairs, 8 bytes of K each;
//    an odd MR's last pair holds a zero row.
//  - Elsewhere the pair layout runs in plain C++ (NR a multiple of 8, as for AVX2).
//  - `amx` configs, with AMX-INT8 (__AMX_TILE__, __AMX_INT8__: Sapphire Rapids on), any
//    signedness: tdpb[su][su]d multiplies a 16-row x 64-deep slab of A (rows as they lie, or copied
//    into a zero-padded block) by a 16-quad x 16-column slab of the quads' B panel into a 16 x 16
//    int32 tile; micro-tiles of 16 or 32 rows by 16 to 48 columns (amx_tiles.hpp), KC a multiple
//    of 64. Elsewhere (or where Linux refuses the process AMX's state) they run the paths above.
// gemm_int8_lanes<TA, TB>() says which NR the compiled path accepts; a KC that is a multiple of G
// wastes no padding.
//
//   optune::kernels::cpu::gemm_int8<GemmInt8Config{...}>(M, N, K, A, lda, B, ldb, C, ldc);
// (TA and TB deduced from A and B.)
// Compile with -O3 -march=<target> -fopenmp (without -fopenmp it runs on one thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_MATMUL_INT8)
#include <arm_neon.h>
#endif

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/amx_tiles.hpp"
#include "optune/kernels/cpu/column_split.hpp"
#include "optune/kernels/cpu/row_groups.hpp"

#if defined(OPTUNE_AMX_TILES) && defined(__AMX_INT8__)
#define OPTUNE_GEMM_INT8_AMX 1
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define OPTUNE_GEMM_INT8_VNNI 1
#elif defined(__ARM_FEATURE_MATMUL_INT8)
#define OPTUNE_GEMM_INT8_I8MM 1
#elif defined(__ARM_FEATURE_DOTPROD)
#define OPTUNE_GEMM_INT8_SDOT 1
#elif defined(__AVX2__)
#define OPTUNE_GEMM_INT8_MADDUBS 1  // 7-bit activations only (GemmInt8Config::a7)
#endif

namespace optune::kernels::cpu {

struct GemmInt8Config {
  int mc = 96;     // rows of A per block (multiple of mr)
  int nc = 512;    // columns of B per block (multiple of nr)
  int kc = 512;    // depth per block (any; a multiple of 8 wastes no zero padding on any path)
  int mr = 4;      // micro-tile rows
  int nr = 16;     // micro-tile columns, a multiple of gemm_int8_lanes<TA, TB>() (8, or 16 on VNNI)
  int threads = 1;
  // false: A's rows are read where they lie (the quad paths' quads are 4 bytes of a row as they
  // are in memory) when K is a multiple of 4; elsewhere A is packed regardless.
  bool pack_a = true;
  // true: the threads split M (whole MR-row panels) instead of N, for N too narrow to share.
  bool split_rows = false;
  // true: AMX tiles (mr 16 or 32 rows, nr 16 to 48 columns, kc a multiple of 64) where the target has them.
  bool amx = false;
  // true: the u8 operand (A or B, the activations) holds 0..127 only, 7-bit activations: AVX2
  // without VNNI then takes vpmaddubsw's quads (above). A value of 128 or more there may saturate
  // a pair's sum: the caller's contract.
  bool a7 = false;

  friend constexpr bool operator==(const GemmInt8Config&, const GemmInt8Config&) = default;
};

// Path-independent limits; the path compiled in may ask more of nr (gemm_int8_lanes).
constexpr const char* gemm_int8_config_error(const GemmInt8Config& c) {
  if (c.amx) {
    if (const char* error = amx::micro_tile_error(c.mr, c.nr, c.kc, 64)) return error;
  } else if (c.mr < 1 || c.mr > 14) {
    return "mr must be in 1..14";
  }
  if (c.nr < 8 || c.nr > 64 || c.nr % 8 != 0) return "nr must be a multiple of 8 in 8..64";
  if (c.mc < c.mr || c.mc % c.mr != 0) return "mc must be a positive multiple of mr";
  if (c.nc < c.nr || c.nc % c.nr != 0) return "nc must be a positive multiple of nr";
  if (c.kc < 1) return "kc must be positive";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  return nullptr;
}

// Whether operands TA and TB are one u8 and one s8: vpdpbusd multiplies such a pair.
template <typename TA, typename TB>
constexpr bool mixed_signedness() {
  return std::is_same_v<TA, std::uint8_t> != std::is_same_v<TB, std::uint8_t>;
}

// The int32 lanes of the vector the compiled path accumulates in for operands TA and TB (u8 x s8
// is what the gemm_int8.cpu template emits on x86): nr must be a multiple of it.
template <typename TA = std::uint8_t, typename TB = std::int8_t>
constexpr int gemm_int8_lanes() {
#if defined(OPTUNE_GEMM_INT8_VNNI)
  if constexpr (mixed_signedness<TA, TB>()) return 16;
#endif
  return 8;
}

namespace gemm_int8_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// Whether operands TA and TB take a quad path: VNNI's u8 x s8, Arm's SDOT s8 x s8, AVX2's
// vpmaddubsw for a 7-bit u8 operand (A7) and an s8 one.
template <typename TA, typename TB, bool A7 = false>
constexpr bool use_quads() {
#if defined(OPTUNE_GEMM_INT8_VNNI)
  return mixed_signedness<TA, TB>();
#elif defined(OPTUNE_GEMM_INT8_SDOT)
  return std::is_same_v<TA, std::int8_t> && std::is_same_v<TB, std::int8_t>;
#elif defined(OPTUNE_GEMM_INT8_MADDUBS)
  return A7 && mixed_signedness<TA, TB>();
#else
  return false;
#endif
}

// Whether operands TA and TB take Arm's matrix-multiply path: s8 x s8 with I8MM.
template <typename TA, typename TB>
constexpr bool use_i8mm() {
#if defined(OPTUNE_GEMM_INT8_I8MM)
  return std::is_same_v<TA, std::int8_t> && std::is_same_v<TB, std::int8_t>;
#else
  return false;
#endif
}

// The path operands TA and TB take: 0 widened pairs, 1 quads (VNNI, SDOT, or AVX2's vpmaddubsw
// where A7: the u8 operand holds 0..127), 2 SMMLA's octets.
template <typename TA, typename TB, bool A7 = false>
constexpr int path_of() {
  return use_i8mm<TA, TB>() ? 2 : use_quads<TA, TB, A7>() ? 1 : 0;
}

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
template <int NR, typename TB>
void pack_b_panel(Index k, Index n, const TB* b, Index ldb, std::int16_t* dst) {
  const Index pairs = ceil_div(k, 2);
  for (Index p2 = 0; p2 < pairs; ++p2) {
    const TB* even = b + 2 * p2 * ldb;
    const TB* odd = 2 * p2 + 1 < k ? even + ldb : nullptr;
    std::int16_t* out = dst + p2 * NR * 2;
    for (Index j = 0; j < NR; ++j) {
      out[2 * j] = j < n ? even[j] : 0;
      out[2 * j + 1] = j < n && odd ? odd[j] : 0;
    }
  }
}

#if defined(__AVX2__)
// C[0:MR, 0:8 V] (=|+=) an AVX2 tile of int32 sums, V ymm a row.
template <int MR, int V>
[[gnu::always_inline]] inline void store_tile(const __m256i (&acc)[MR][V], std::int32_t* c, Index ldc, bool accumulate) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      auto* out = reinterpret_cast<__m256i*>(c + r * ldc + v * 8);
      _mm256_storeu_si256(out, accumulate ? _mm256_add_epi32(_mm256_loadu_si256(out), acc[r][v]) : acc[r][v]);
    }
  }
}
#endif

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
  store_tile<MR, V>(acc, c, ldc, accumulate);
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

// Rows [0, m) x depth [0, k) of A (bytes of either signedness) into one MR-row panel of quad
// words: word (q, r) holds A[r][4 q + t] in its byte t; rows past m and depth past k are zeros.
template <int MR, typename TA>
void pack_a_quads(Index m, Index k, const TA* a, Index lda, std::uint32_t* dst) {
  const Index quads = ceil_div(k, 4), whole = k / 4;
  // A whole quad is the 4 bytes of the row as they lie: copied as one word (byte by byte, packing
  // a short-M GEMM's A took a fifth of its time).
  for (int r = 0; r < MR; ++r) {
    const TA* row = a + r * lda;
    for (Index q = 0; q < whole; ++q) {
      std::uint32_t word = 0;
      if (r < m) std::memcpy(&word, row + 4 * q, sizeof word);
      dst[q * MR + r] = word;
    }
    for (Index q = whole; q < quads; ++q) {
      std::uint32_t word = 0;
      if (r < m)
        for (Index t = 0; 4 * q + t < k; ++t)
          word |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(row[4 * q + t])) << (8 * t);
      dst[q * MR + r] = word;
    }
  }
}

#if defined(__AVX512VBMI__)
// vpermb's indices that take four rows of 16 bytes (lane t of a zmm holds row t) to 16 quads:
// byte 4 j + t of the result is byte j of row t.
inline __m512i quad_transpose_index() {
  alignas(64) std::uint8_t index[64];
  for (int j = 0; j < 16; ++j)
    for (int t = 0; t < 4; ++t) index[4 * j + t] = static_cast<std::uint8_t>(16 * t + j);
  return _mm512_load_si512(index);
}
#endif

// Columns [0, n) x depth [0, k) of B (bytes of either signedness) into one NR-column panel of
// quads: byte (q, j, t) = B[4 q + t][j], so a zmm load is 16 columns' quads, zeros past n and k.
template <int NR, typename TB>
void pack_b_quads(Index k, Index n, const TB* b, Index ldb, TB* dst) {
  const Index quads = ceil_div(k, 4);
#if defined(__AVX512VBMI__)
  const __m512i transpose = quad_transpose_index();
#endif
  for (Index q = 0; q < quads; ++q) {
    TB* out = dst + q * NR * 4;
#if defined(__AVX512VBMI__)
    if (4 * q + 4 <= k && n == NR && NR % 16 == 0) {
      // 16 columns of the quad's four rows in one zmm, transposed by one vpermb (a third of the
      // instructions of the SSE2 unpacks below; packing B was a sixth of a short-M GEMM's time).
      const TB* row = b + 4 * q * ldb;
      for (Index j = 0; j < NR; j += 16) {
        const auto load = [&](Index t) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + t * ldb + j)); };
        __m512i rows = _mm512_castsi128_si512(load(0));
        rows = _mm512_inserti32x4(rows, load(1), 1);
        rows = _mm512_inserti32x4(rows, load(2), 2);
        rows = _mm512_inserti32x4(rows, load(3), 3);
        _mm512_storeu_si512(out + 4 * j, _mm512_permutexvar_epi8(transpose, rows));
      }
      continue;
    }
#endif
#if defined(__SSE2__)
    if (4 * q + 4 <= k && n == NR && NR % 16 == 0) {
      // Whole quads of whole 16-column groups, interleaved in registers: a short-M GEMM uses each
      // byte of B in few rows, and a byte-by-byte pack took as long as the products.
      const TB* row = b + 4 * q * ldb;
      for (Index j = 0; j < NR; j += 16) {
        const auto load = [&](Index t) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + t * ldb + j)); };
        const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
        const __m128i low01 = _mm_unpacklo_epi8(r0, r1), high01 = _mm_unpackhi_epi8(r0, r1);
        const __m128i low23 = _mm_unpacklo_epi8(r2, r3), high23 = _mm_unpackhi_epi8(r2, r3);
        auto* quad = reinterpret_cast<__m128i*>(out + 4 * j);
        _mm_storeu_si128(quad + 0, _mm_unpacklo_epi16(low01, low23));
        _mm_storeu_si128(quad + 1, _mm_unpackhi_epi16(low01, low23));
        _mm_storeu_si128(quad + 2, _mm_unpacklo_epi16(high01, high23));
        _mm_storeu_si128(quad + 3, _mm_unpackhi_epi16(high01, high23));
      }
      continue;
    }
#endif
    for (Index t = 0; t < 4; ++t) {
      const TB* row = 4 * q + t < k ? b + (4 * q + t) * ldb : nullptr;
      for (Index j = 0; j < NR; ++j) out[4 * j + t] = row && j < n ? row[j] : 0;
    }
  }
}

#if defined(OPTUNE_GEMM_INT8_VNNI)
// acc + the dot products of u8 quads and s8 quads. In assembly, the accumulator tied to the
// instruction's destination: through the intrinsic, GCC 12 computes each product into a fresh
// register and copies it back, a register move beside every vpdpbusd of the micro-kernel.
inline __m512i dpbusd(__m512i acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
  return acc;
}

#endif

// A quad of A: 4 bytes that may lie anywhere (memcpy: A's rows are bytes, not words).
inline int load_quad(const void* at) {
  std::uint32_t word;
  std::memcpy(&word, at, sizeof word);
  return static_cast<int>(word);
}

#if defined(OPTUNE_GEMM_INT8_VNNI)
// C[0:MR, 0:NR] (=|+=) MR rows of A times the packed B panel over `quads` quads of depth. Quad q
// of row r is the 4 bytes at a + q * quad_step + r * row_step: a packed panel (quad_step 4 MR,
// row_step 4) or A's rows in place (4, lda). AUnsigned: A is the u8 operand (broadcast into
// vpdpbusd's unsigned slot), else B is.
template <int MR, int NR, bool AUnsigned>
void micro_kernel_quads(Index quads, const std::uint8_t* a, Index quad_step, Index row_step, const void* b,
                        std::int32_t* c, Index ldc, bool accumulate) {
  constexpr int V = NR / 16;
  __m512i acc[MR][V];
  // Unrolled whole so the accumulators stay in registers (GCC's -O2 would keep them in memory).
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  for (Index q = 0; q < quads; ++q) {
    __m512i bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = _mm512_load_si512(static_cast<const std::int8_t*>(b) + (q * NR + v * 16) * 4);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512i av = _mm512_set1_epi32(load_quad(a + q * quad_step + r * row_step));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        acc[r][v] = AUnsigned ? dpbusd(acc[r][v], av, bv[v]) : dpbusd(acc[r][v], bv[v], av);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      std::int32_t* out = c + r * ldc + v * 16;
      const __m512i sum = accumulate ? _mm512_add_epi32(_mm512_loadu_si512(out), acc[r][v]) : acc[r][v];
      _mm512_storeu_si512(out, sum);
    }
  }
}
#endif

#if defined(OPTUNE_GEMM_INT8_MADDUBS)
// The same tile on AVX2 for a 7-bit u8 operand and an s8 one (AUnsigned: A is the u8 one, else B):
// a panel of NR columns is NR / 8 ymm of quads; vpmaddubsw sums each pair of a quad's products
// into an int16 (no saturation below 128 in the u8 operand), vpmaddwd by ones the two int16 of a
// quad into its int32 lane. Out of line: inlined into run_slice (a candidate's one config) it ran
// 302 against 431 GOP/s at 1024^3, 4 x 16, A packed.
template <int MR, int NR, bool AUnsigned>
[[gnu::noinline]] void micro_kernel_maddubs(Index quads, const std::uint8_t* a, Index quad_step, Index row_step, const void* b,
                          std::int32_t* c, Index ldc, bool accumulate) {
  constexpr int V = NR / 8;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[MR][V];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_si256();
  }
  for (Index q = 0; q < quads; ++q) {
    __m256i bv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      bv[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(static_cast<const std::int8_t*>(b) + (q * NR + v * 8) * 4));
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256i av = _mm256_set1_epi32(load_quad(a + q * quad_step + r * row_step));
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        const __m256i pairs = AUnsigned ? _mm256_maddubs_epi16(av, bv[v]) : _mm256_maddubs_epi16(bv[v], av);
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(pairs, ones));
        // Pinned to its register: left free, GCC 12 spilled an accumulator of the 4 x 16 tile to
        // the stack every step (222 against 243 GOP/s a core, the tile's operands in L1).
        asm("" : "+x"(acc[r][v]));
      }
    }
  }
  store_tile<MR, V>(acc, c, ldc, accumulate);
}
#endif

#if defined(OPTUNE_GEMM_INT8_SDOT)
// The same tile on Arm's dot products (s8 x s8): SDOT adds four products of a quad into each int32
// lane of a 128-bit vector, so a panel of NR columns is NR / 4 vectors; A's quad is broadcast.
template <int MR, int NR>
void micro_kernel_sdot(Index quads, const std::uint8_t* a, Index quad_step, Index row_step, const std::int8_t* b,
                       std::int32_t* c, Index ldc, bool accumulate) {
  constexpr int V = NR / 4;
  int32x4_t acc[MR][V];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[r][v] = vdupq_n_s32(0);
  }
  for (Index q = 0; q < quads; ++q) {
    int8x16_t bv[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) bv[v] = vld1q_s8(b + (q * NR + v * 4) * 4);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(load_quad(a + q * quad_step + r * row_step)));
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[r][v] = vdotq_s32(acc[r][v], bv[v], av);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      std::int32_t* out = c + r * ldc + v * 4;
      vst1q_s32(out, accumulate ? vaddq_s32(vld1q_s32(out), acc[r][v]) : acc[r][v]);
    }
  }
}
#endif

#if defined(OPTUNE_GEMM_INT8_VNNI) || defined(OPTUNE_GEMM_INT8_SDOT) || defined(OPTUNE_GEMM_INT8_MADDUBS)
// The quad path's micro-kernel (AUnsigned: A holds the u8 operand; SDOT's are both s8).
template <int MR, int NR, bool AUnsigned, typename TB>
void quads_kernel(Index quads, const std::uint8_t* a, Index quad_step, Index row_step, const TB* b, std::int32_t* c,
                  Index ldc, bool accumulate) {
#if defined(OPTUNE_GEMM_INT8_VNNI)
  micro_kernel_quads<MR, NR, AUnsigned>(quads, a, quad_step, row_step, b, c, ldc, accumulate);
#elif defined(OPTUNE_GEMM_INT8_SDOT)
  micro_kernel_sdot<MR, NR>(quads, a, quad_step, row_step, b, c, ldc, accumulate);
#else
  micro_kernel_maddubs<MR, NR, AUnsigned>(quads, a, quad_step, row_step, b, c, ldc, accumulate);
#endif
}
#endif

#if defined(OPTUNE_GEMM_INT8_I8MM)
// Rows [0, m) x depth [0, k) of A (s8) into one MR-row panel of octets: word (g, r) holds
// A[r][8 g + t] in its byte t; rows past m and depth past k are zeros.
template <int MR>
void pack_a_octets(Index m, Index k, const std::int8_t* a, Index lda, std::uint64_t* dst) {
  const Index groups = ceil_div(k, 8);
  for (int r = 0; r < MR; ++r)
    for (Index g = 0; g < groups; ++g) {
      std::uint64_t word = 0;
      if (r < m) std::memcpy(&word, a + r * lda + 8 * g, static_cast<std::size_t>(std::min<Index>(8, k - 8 * g)));
      dst[g * MR + r] = word;
    }
}

// Columns [0, n) x depth [0, k) of B (s8) into one NR-column panel of octets: byte (g, j, t) =
// B[8 g + t][j], so 16 bytes are a column pair's 8 depths each, as SMMLA takes them.
template <int NR>
void pack_b_octets(Index k, Index n, const std::int8_t* b, Index ldb, std::int8_t* dst) {
  const Index groups = ceil_div(k, 8);
  for (Index g = 0; g < groups; ++g)
    for (Index t = 0; t < 8; ++t) {
      const std::int8_t* row = 8 * g + t < k ? b + (8 * g + t) * ldb : nullptr;
      for (Index j = 0; j < NR; ++j) dst[(g * NR + j) * 8 + t] = row && j < n ? row[j] : 0;
    }
}

// C[0:MR, 0:NR] (=|+=) the packed panels over `groups` octets of depth: SMMLA multiplies a row
// pair of A (16 bytes) by a column pair of B into the 2 x 2 int32 tile [r0c0, r0c1, r1c0, r1c1];
// an odd MR's last row is paired with zeros.
template <int MR, int NR>
void micro_kernel_mmla(Index groups, const std::uint64_t* a, const std::int8_t* b, std::int32_t* c, Index ldc,
                       bool accumulate) {
  constexpr int P = (MR + 1) / 2, V = NR / 2;
  int32x4_t acc[P][V];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) acc[p][v] = vdupq_n_s32(0);
  }
  for (Index g = 0; g < groups; ++g) {
    int8x16_t bv[V];
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) bv[v] = vld1q_s8(b + (g * NR + 2 * v) * 8);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const auto* pair = reinterpret_cast<const std::int8_t*>(a + g * MR + 2 * p);
      const int8x16_t av = 2 * p + 1 < MR ? vld1q_s8(pair) : vcombine_s8(vld1_s8(pair), vdup_n_s8(0));
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v) acc[p][v] = vmmlaq_s32(acc[p][v], av, bv[v]);
    }
  }
  // Two tiles side by side are rows 2p and 2p + 1 of four columns: their 64-bit halves zipped.
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 16
    for (int v = 0; v < V; v += 2) {
      const int64x2_t left = vreinterpretq_s64_s32(acc[p][v]), right = vreinterpretq_s64_s32(acc[p][v + 1]);
      const int32x4_t rows[2] = {vreinterpretq_s32_s64(vzip1q_s64(left, right)),
                                 vreinterpretq_s32_s64(vzip2q_s64(left, right))};
      for (int h = 0; h < 2 && 2 * p + h < MR; ++h) {
        std::int32_t* out = c + (2 * p + h) * ldc + 2 * v;
        vst1q_s32(out, accumulate ? vaddq_s32(vld1q_s32(out), rows[h]) : rows[h]);
      }
    }
  }
}
#endif

// The packing and micro-kernel of one path: depth in groups of G, each group sizeof(AWord) bytes
// per row of A and per column of B (4, or SMMLA's 8).
template <int MR, int NR, typename TA, typename TB, int Kind = path_of<TA, TB>()>
struct Path {
  static constexpr Index G = 2;
  static constexpr bool kReadsAInPlace = false;  // pairs are widened to int16: always packed
  using AWord = std::int32_t;
  using BElement = std::int16_t;
  static void pack_a(Index m, Index k, const TA* a, Index lda, AWord* dst) { pack_a_panel<MR>(m, k, a, lda, dst); }
  static void pack_b(Index k, Index n, const TB* b, Index ldb, BElement* dst) { pack_b_panel<NR>(k, n, b, ldb, dst); }
  static void kernel(Index groups, const AWord* a, const BElement* b, std::int32_t* c, Index ldc, bool accumulate) {
    micro_kernel<MR, NR>(groups, a, b, c, ldc, accumulate);
  }
  // Never called (kReadsAInPlace is false): run_slice names it for every path.
  static void kernel_in_place(Index, const TA*, Index, const BElement*, std::int32_t*, Index, bool) {}
};

#if defined(OPTUNE_GEMM_INT8_VNNI) || defined(OPTUNE_GEMM_INT8_SDOT) || defined(OPTUNE_GEMM_INT8_MADDUBS)
template <int MR, int NR, typename TA, typename TB>
struct Path<MR, NR, TA, TB, 1> {
  static constexpr Index G = 4;
  static constexpr bool kReadsAInPlace = true;
  static constexpr bool kAUnsigned = std::is_same_v<TA, std::uint8_t>;
  using AWord = std::uint32_t;
  using BElement = TB;
  static void pack_a(Index m, Index k, const TA* a, Index lda, AWord* dst) { pack_a_quads<MR>(m, k, a, lda, dst); }
  static void pack_b(Index k, Index n, const TB* b, Index ldb, BElement* dst) { pack_b_quads<NR>(k, n, b, ldb, dst); }
  static void kernel(Index groups, const AWord* a, const BElement* b, std::int32_t* c, Index ldc, bool accumulate) {
    quads_kernel<MR, NR, kAUnsigned>(groups, reinterpret_cast<const std::uint8_t*>(a), 4 * MR, 4, b, c, ldc,
                                     accumulate);
  }
  static void kernel_in_place(Index groups, const TA* a, Index lda, const BElement* b, std::int32_t* c, Index ldc,
                              bool accumulate) {
    quads_kernel<MR, NR, kAUnsigned>(groups, reinterpret_cast<const std::uint8_t*>(a), 4, lda, b, c, ldc, accumulate);
  }
};
#endif

#if defined(OPTUNE_GEMM_INT8_I8MM)
template <int MR, int NR, typename TA, typename TB>
struct Path<MR, NR, TA, TB, 2> {
  static constexpr Index G = 8;
  static constexpr bool kReadsAInPlace = false;  // row pairs interleaved: always packed
  using AWord = std::uint64_t;
  using BElement = std::int8_t;
  static void pack_a(Index m, Index k, const TA* a, Index lda, AWord* dst) { pack_a_octets<MR>(m, k, a, lda, dst); }
  static void pack_b(Index k, Index n, const TB* b, Index ldb, BElement* dst) { pack_b_octets<NR>(k, n, b, ldb, dst); }
  static void kernel(Index groups, const AWord* a, const BElement* b, std::int32_t* c, Index ldc, bool accumulate) {
    micro_kernel_mmla<MR, NR>(groups, a, b, c, ldc, accumulate);
  }
  static void kernel_in_place(Index, const TA*, Index, const BElement*, std::int32_t*, Index, bool) {}
};
#endif

// One thread's columns [0, N) of C, all rows.
template <GemmInt8Config Cfg, typename TA, typename TB>
void run_slice(Index M, Index N, Index K, const TA* A, Index lda, const TB* B, Index ldb, std::int32_t* C, Index ldc) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr;
  constexpr int kPath = path_of<TA, TB, Cfg.a7>();
  using P = Path<MR, NR, TA, TB, kPath>;
  constexpr Index G = P::G;
  using AWord = typename P::AWord;
  using BElement = typename P::BElement;
  // Per group of depth: an A panel holds MR words, a B panel NR columns x G elements, as many
  // bytes each (4, or 8 on the SMMLA path).
  constexpr Index kGroupBytes = sizeof(AWord);
  static_assert(sizeof(BElement) * G == kGroupBytes);
  thread_local AlignedBuffer a_buffer, b_buffer;
  const Index groups_max = ceil_div(std::min<Index>(Cfg.kc, K), G);
  const Index mc_max = std::min<Index>(Cfg.mc, ceil_div(M, MR) * MR);
  const Index nc_max = std::min<Index>(Cfg.nc, ceil_div(N, NR) * NR);
  // Sizes in floats (4 bytes).
  auto* packed_a = reinterpret_cast<AWord*>(
      a_buffer.reserve(static_cast<std::size_t>(mc_max * groups_max * kGroupBytes / 4)));
  auto* packed_b = reinterpret_cast<BElement*>(
      b_buffer.reserve(static_cast<std::size_t>(nc_max * groups_max * kGroupBytes / 4)));
  alignas(64) std::int32_t tile[MR * NR];
  // Row panels read in place: every depth block is then whole quads of each row.
  const bool in_place = P::kReadsAInPlace && !Cfg.pack_a && K % G == 0 && Cfg.kc % G == 0;
  for (Index jc = 0; jc < N; jc += Cfg.nc) {
    const Index nc = std::min<Index>(Cfg.nc, N - jc);
    for (Index pc = 0; pc < K; pc += Cfg.kc) {
      const Index kc = std::min<Index>(Cfg.kc, K - pc), groups = ceil_div(kc, G);
      for (Index j = 0; j < ceil_div(nc, NR); ++j)
        P::pack_b(kc, std::min<Index>(NR, nc - j * NR), B + pc * ldb + jc + j * NR, ldb,
                  packed_b + j * NR * G * groups);
      for (Index ic = 0; ic < M; ic += Cfg.mc) {
        const Index mc = std::min<Index>(Cfg.mc, M - ic);
        // Each group of rows (row_groups.hpp) packed on its own: rows [r, r + R) of the block at
        // word r * groups, an R-row panel.
        if (!in_place)
          for (Index i = 0; i < ceil_div(mc, MR); ++i)
            for_each_row_group<MR>(std::min<Index>(MR, mc - i * MR), [&](auto rows, Index first_row) {
              const Index r = i * MR + first_row;
              Path<rows(), NR, TA, TB, kPath>::pack_a(rows(), kc, A + (ic + r) * lda + pc, lda, packed_a + r * groups);
            });
        for (Index j = 0; j < ceil_div(nc, NR); ++j) {
          const Index n = std::min<Index>(NR, nc - j * NR);
          const BElement* b = packed_b + j * NR * G * groups;
          // A tile of fewer than NR columns is computed whole (on B's zero padding) into `tile`, its
          // part inside C added or stored after.
          const bool full_width = n == NR;
          std::int32_t* c_block = C + ic * ldc + jc + j * NR;
          for (Index i = 0; i < ceil_div(mc, MR); ++i) {
            const Index m = std::min<Index>(MR, mc - i * MR);
            for_each_row_group<MR>(m, [&](auto rows, Index first_row) {
              using Rows = Path<rows(), NR, TA, TB, kPath>;
              const Index r = i * MR + first_row;
              std::int32_t* out = full_width ? c_block + r * ldc : tile + first_row * NR;
              const Index ld_out = full_width ? ldc : NR;
              if (in_place)
                Rows::kernel_in_place(groups, A + (ic + r) * lda + pc, lda, b, out, ld_out, full_width && pc > 0);
              else
                Rows::kernel(groups, packed_a + r * groups, b, out, ld_out, full_width && pc > 0);
            });
            if (full_width) continue;
            std::int32_t* c = c_block + i * MR * ldc;
            for (Index r = 0; r < m; ++r)
              for (Index col = 0; col < n; ++col)
                c[r * ldc + col] = pc > 0 ? c[r * ldc + col] + tile[r * NR + col] : tile[r * NR + col];
          }
        }
      }
    }
  }
}

#if defined(OPTUNE_GEMM_INT8_AMX)
// run_slice on AMX tiles, in amx::walk_blocks's loops: B packed in the VNNI kernel's quads, C
// summed in place from the second depth block on, tiles short of MR x NR computed whole into
// `tile` and carried into C after.
template <GemmInt8Config Cfg, typename TA, typename TB>
void run_slice_amx(Index M, Index N, Index K, const TA* A, Index lda, const TB* B, Index ldb, std::int32_t* C,
                   Index ldc) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr, MT = MR / 16, NT = NR / 16;
  using Dot = amx::DotInt8<std::is_same_v<TA, std::int8_t>, std::is_same_v<TB, std::int8_t>>;
  alignas(64) std::int32_t tile[MR * NR];
  amx::walk_blocks<MR, NR, 64>(
      M, N, K, A, lda, Cfg.mc, Cfg.nc, Cfg.kc, Cfg.pack_a,
      [&](Index kc, Index columns, Index depth, Index column, std::uint8_t* panel) {
        pack_b_quads<NR>(kc, columns, B + depth * ldb + column, ldb, reinterpret_cast<TB*>(panel));
      },
      [&](const amx::MicroTileAt& t) {
        std::int32_t* c = C + t.row * ldc + t.column;
        // A whole tile sums in C itself; a short one in `tile`, carried into C after.
        const bool whole = t.rows == MR && t.columns == NR;
        std::int32_t* out = whole ? c : tile;
        const Index ld_out = whole ? ldc : NR;
        const bool accumulate = whole && !t.first;
        amx::micro_tile<MT, NT, Dot>(
            t.steps, t.a, t.a_stride, t.b, NR * 4,
            [&]<int T>(int mi, int ni) {
              if (accumulate)
                amx::load<T>(out + mi * 16 * ld_out + ni * 16, ld_out * 4);
              else
                amx::zero<T>();
            },
            [&]<int T>(int mi, int ni) { amx::store<T>(out + mi * 16 * ld_out + ni * 16, ld_out * 4); });
        if (whole) return;
        for (Index r = 0; r < t.rows; ++r)
          for (Index col = 0; col < t.columns; ++col)
            c[r * ldc + col] = t.first ? tile[r * NR + col] : c[r * ldc + col] + tile[r * NR + col];
      });
}
#endif

}  // namespace gemm_int8_detail

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions in elements; TA and TB are each
// std::uint8_t or std::int8_t. Any M, N, K >= 0; K == 0 gives C = 0.
template <GemmInt8Config Cfg, typename TA, typename TB>
void gemm_int8(std::int64_t M, std::int64_t N, std::int64_t K, const TA* A, std::int64_t lda, const TB* B,
               std::int64_t ldb, std::int32_t* C, std::int64_t ldc) {
  using namespace gemm_int8_detail;
  static_assert(gemm_int8_config_error(Cfg) == nullptr, "invalid GemmInt8Config (see gemm_int8_config_error)");
  static_assert(std::is_same_v<TA, std::uint8_t> || std::is_same_v<TA, std::int8_t>, "A is u8 or s8");
  static_assert(std::is_same_v<TB, std::uint8_t> || std::is_same_v<TB, std::int8_t>, "B is u8 or s8");
  static_assert(Cfg.nr % gemm_int8_lanes<TA, TB>() == 0,
                "GemmInt8Config::nr must be a multiple of gemm_int8_lanes<TA, TB>(): 16 (one zmm of int32) on the "
                "AVX-512 VNNI path with one u8 and one s8 operand, 8 elsewhere");
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (Index i = 0; i < M; ++i) std::fill_n(C + i * ldc, N, 0);
    return;
  }
  for_each_share<Cfg.threads, Cfg.split_rows>(M, N, Cfg.mr, Cfg.nr, [&](Index i0, Index m, Index j0, Index n) {
#if defined(OPTUNE_GEMM_INT8_AMX)
    if constexpr (Cfg.amx)
      if (amx::permitted()) return run_slice_amx<Cfg>(m, n, K, A + i0 * lda, lda, B + j0, ldb, C + i0 * ldc + j0, ldc);
#endif
    run_slice<Cfg>(m, n, K, A + i0 * lda, lda, B + j0, ldb, C + i0 * ldc + j0, ldc);
  });
}

}  // namespace optune::kernels::cpu
