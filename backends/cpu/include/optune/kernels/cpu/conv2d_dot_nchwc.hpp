// conv2d in int8 and bf16 as a direct convolution on the channel-blocked layout NCHW[L]c a network
// keeps between its layers (layout.hpp; L = Conv2dDotNchwcConfig::block, 16 or 8): input
// [N][ceil(C/L)][H][W][L], output [N][ceil(K/L)][P][Q][L], the filter packed once by
// conv2d_dot_nchwc_pack_filter. This is how oneDNN's brgconv and AVX2 int8 convolution run these
// precisions: no im2col columns, each register tile a run of output pixels times L-channel output
// vectors, reduced over the input channels in the groups one dot-product instruction takes (G
// consecutive channels of a pixel are one 32-bit word of the blocked input, broadcast).
//   - int8, u8 image x s8 filter, int32 sums and output, exact: vpdpbusd (AVX-512 VNNI), G = 4,
//     on NCHW16c.
//   - bf16 image, filter and output, float32 sums rounded once: vdpbf16ps (AVX-512 BF16), G = 2,
//     on NCHW16c.
//   - 7-bit activations (`a7`: the u8 image holds 0..127, PyTorch's reduce_range) with an s8
//     filter where there is no VNNI path for the block (AVX2; NCHW8c, as oneDNN's AVX2 code
//     keeps): vpmaddubsw multiplies a pixel's broadcast quad (u8) by the filter's (s8), each pair
//     summed into an int16 that cannot saturate (2 x 127 x 128 < 32768), vpmaddwd by ones adds a
//     quad's two into its int32 lane. G = 4, L / 8 ymm of sums per output vector.
//   - Elsewhere (and s8 x s8, as Arm runs int8) the same packed layout in plain C++: correct on
//     any CPU, tuned for the paths above.
//   - `amx` configs, where the CPU has AMX tiles for the type (Sapphire Rapids on): tiles of 16
//     output pixels x 16 output channels, summed by tdpbusd / tdpbf16ps over 64 bytes of depth a
//     step (run_amx below). Elsewhere, or where Linux refuses the tiles, the vector path runs.
// The packed filter holds, per output-channel block of OCV x L channels, per input-channel block,
// tap and group: OCV vectors of L output channels x G input channels (one zmm each at L = 16), zero
// past K and past C, so channels past C in the input's last block may hold any finite value, and
// the output's channels past K are written as zeros.
// Tiles read the input in place and skip the taps that would read padding no wider than the
// stride (every padded 3x3 layer of ResNet); wider padding is read from a zero-padded copy of the
// input (one row copy per image, channel block and row). A tile never reads past the tensor: the
// last columns and rows run on narrower and shorter tiles.
//
//   conv2d_dot_nchwc_pack_filter<Config>(dims, filter, packed);        // OIHW s8 or bf16; packed 64-byte aligned
//   conv2d_dot_nchwc_packed<Config>(dims, blocked_input, packed, blocked_output);
// (AMX's tiles, below, take NCHW16c only.)
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/amx_tiles.hpp"
#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/element_types.hpp"
#include "optune/kernels/cpu/gemm_bf16.hpp"
#include "optune/kernels/cpu/gemm_int8.hpp"

namespace optune::kernels::cpu {

// The layout's block by default: 16 channels, one AVX-512 vector of 32-bit sums (the plain path
// keeps it, so that a config valid on one machine runs on any).
inline constexpr int kDotNchwcBlock = 16;

struct Conv2dDotNchwcConfig {
  int oc_vectors = 2;  // output-channel blocks of 16 per register tile
  int ow_block = 12;   // output pixels along a row per register tile
  int oh_block = 1;    // output rows per register tile
  int threads = 1;
  ConvLoopOrder loop_order = ConvLoopOrder::kOcOuter;
  ConvParallel parallel = ConvParallel::kOuter;
  // threads, loop_order and parallel given at run time, as Conv2dConfig::run_time_schedule.
  bool run_time_schedule = false;
  // On AMX's tiles: oh_block slabs of ow_block = 16 output pixels x oc_vectors blocks of 16
  // output channels, at most 8 tiles with the slabs' and blocks' operands (dilation 1 only).
  bool amx = false;
  // The layout's channel block: 16 (NCHW16c), or 8 (NCHW8c, AVX2's).
  int block = kDotNchwcBlock;
  // true: the u8 image holds 0..127 only (7-bit activations): vpmaddubsw's path where no VNNI path
  // runs the block. A value of 128 or more there may saturate a pair's sum: the caller's contract.
  bool a7 = false;

  friend constexpr bool operator==(const Conv2dDotNchwcConfig&, const Conv2dDotNchwcConfig&) = default;
};

// Accumulators, the tile's filter vectors and a broadcast within AVX-512's 32 vector registers;
// an amx config's tiles within AMX's 8.
constexpr const char* conv2d_dot_nchwc_config_error(const Conv2dDotNchwcConfig& c) {
  if (c.oc_vectors < 1 || c.oc_vectors > 8) return "oc_vectors must be in 1..8";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  if (c.block != 8 && c.block != 16) return "block must be 8 or 16";
  if (c.amx && c.block != 16) return "amx: block must be 16";
  if (c.amx) {
    if (c.ow_block != 16) return "amx: ow_block must be 16 (a tile's rows)";
    if (c.oh_block < 1 || c.oh_block > 2) return "amx: oh_block must be 1 or 2 slabs of pixels";
    if (c.oc_vectors > 3 || amx::tiles_of(16 * c.oh_block, 16 * c.oc_vectors) > 8)
      return "amx: oh_block x oc_vectors takes more than AMX's 8 tiles";
    return nullptr;
  }
  if (c.ow_block < 1 || c.ow_block > 28) return "ow_block must be in 1..28";
  if (c.oh_block < 1 || c.oh_block > 4) return "oh_block must be in 1..4";
  if (c.oh_block * c.ow_block * c.oc_vectors + c.oc_vectors + 1 > 32) return "the tile needs more than 32 registers";
  return nullptr;
}

namespace conv_dot_nchwc_detail {

using Index = std::int64_t;
constexpr int kAmxBlock = 16;  // AMX's tiles run NCHW16c

// Input channels one dot product sums per lane: four bytes or two bf16, one 32-bit word.
template <typename TIn>
constexpr int group() {
  return static_cast<int>(4 / sizeof(TIn));
}

template <typename TIn, typename TW>
constexpr bool vnni_path() {
#if defined(OPTUNE_GEMM_INT8_VNNI)
  return std::is_same_v<TIn, std::uint8_t> && std::is_same_v<TW, std::int8_t>;
#else
  return false;
#endif
}

template <typename TIn>
constexpr bool bf16_path() {
#if defined(OPTUNE_GEMM_BF16_AVX512)
  return std::is_same_v<TIn, bfloat16>;
#else
  return false;
#endif
}

// vpmaddubsw's path: a 7-bit u8 image (A7) and an s8 filter on AVX2, where VNNI does not run the
// block of L channels.
template <typename TIn, typename TW, bool A7, int L>
constexpr bool maddubs_path() {
#if defined(__AVX2__)
  return A7 && L % 8 == 0 && std::is_same_v<TIn, std::uint8_t> && std::is_same_v<TW, std::int8_t> &&
         !(vnni_path<TIn, TW>() && L == 16);
#else
  return false;
#endif
}

// What a tile reads: its first input pixel's channel block 0, and the source's geometry in
// elements (a row of pixels, a channel block's plane), with the layer's stride and dilation.
struct Source {
  Index row = 0, plane = 0, stride = 1, dilation = 1, channel_blocks = 0, R = 0, S = 0;
};

#if defined(OPTUNE_GEMM_INT8_VNNI) || defined(OPTUNE_GEMM_BF16_AVX512)
// The accumulating vector: float32 sums for bf16, int32 for int8 (std::conditional_t would drop
// the vector types' attributes).
template <bool Float>
struct AccumulatorOf {
  using type = __m512i;
};
template <>
struct AccumulatorOf<true> {
  using type = __m512;
};
#endif

#if defined(OPTUNE_GEMM_BF16_AVX512)
// acc + the pair products of `filter` (16 output channels' pairs) and the pair at `pair`
// broadcast from memory in the instruction ({1to16}): the separate vpbroadcastd GCC emits for
// _mm512_set1_epi32 is one more instruction per pixel of the tile. (int8 cannot do the same:
// vpdpbusd broadcasts only its signed operand, the filter.)
inline __m512 dpbf16_broadcast(__m512 acc, __m512i filter, const void* pair) {
  asm("vdpbf16ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(filter), "m"(*static_cast<const std::int32_t*>(pair)));
  return acc;
}
#endif

inline std::int32_t load_word(const void* at) {
  std::int32_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// The taps a tile reads: filter rows [rows_begin, rows_end) for all its pixels, and of each row
// the columns [first_begin, S) for its first pixel and [0, last_end) for its last. At the edges of
// a padded layer the taps that read only padding there are skipped, as oneDNN's brgconv skips
// them: 18% of a 7x7 layer's 3x3 taps, 9% of a 14x14's. (Inner pixels of a wider padding still
// multiply its zeros.)
struct Taps {
  Index rows_begin = 0, rows_end = 0, first_begin = 0, last_end = 0;
};

// One dimension of it: of output positions [p0, p1], the first filter index that reads inside an
// input of `extent` for p1 (the last position reads inside soonest), and one past the last that
// does for p0. Filter index r of position p reads input p * stride + r * dilation - pad.
inline std::pair<Index, Index> reading_taps(Index p0, Index p1, Index extent, Index taps, Index stride, Index pad,
                                            Index dilation) {
  const Index above = pad - p1 * stride, room = extent - 1 + pad - p0 * stride;
  const Index begin = above <= 0 ? 0 : (above + dilation - 1) / dilation;
  const Index end = room < 0 ? 0 : std::min<Index>(taps, room / dilation + 1);
  return {std::min(begin, end), end};
}

inline Taps tile_taps(const Conv2dDims& d, Index oh, Index height, Index ow, Index width) {
  const auto [rows_begin, rows_end] = reading_taps(oh, oh + height - 1, d.H, d.R, d.stride, d.pad, d.dilation);
  const Index first_begin = reading_taps(ow, ow, d.W, d.S, d.stride, d.pad, d.dilation).first;
  const Index last_end = reading_taps(ow + width - 1, ow + width - 1, d.W, d.S, d.stride, d.pad, d.dilation).second;
  return {rows_begin, rows_end, first_begin, last_end};
}

#if defined(__AVX2__)
// tile() on vpmaddubsw for a 7-bit u8 image and an s8 filter (maddubs_path): OCV x L / 8 ymm of
// int32 sums a pixel. Out of line: inlined into the tile loops (a candidate's one call site) its
// loops got worse registers, 0.57 against 0.49-0.50 ms on a 256 x 14^2 layer.
template <int OCV, int W, int H, int Stride, int L>
[[gnu::noinline]] void tile_maddubs(const std::uint8_t* in, const Source& src, const Taps& taps,
                                    const std::int8_t* filter, std::int32_t* out, Index out_row, Index out_plane,
                                    Index vectors) {
  constexpr int G = 4, Groups = L / G, Y = OCV * L / 8;
  constexpr Index kFilterStep = Index{Groups} * OCV * L * G;  // elements per (block, tap)
  const Index stride = Stride > 0 ? Stride : src.stride;
  const Index pixel_step = stride * L, row_step = stride * src.row;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[H][W][Y];
#pragma GCC unroll 4
  for (int h = 0; h < H; ++h)
#pragma GCC unroll 28
    for (int j = 0; j < W; ++j)
#pragma GCC unroll 16
      for (int y = 0; y < Y; ++y) acc[h][j][y] = _mm256_setzero_si256();
  // Channel blocks innermost: a tap's whole reduction in one loop (the blocks a plane apart in the
  // input, R x S taps apart in the filter), where a block's two quads are too little work to carry
  // the loops over the taps.
  const Index filter_block_step = src.R * src.S * kFilterStep;
  for (Index r = taps.rows_begin; r < taps.rows_end; ++r) {
    for (Index s = 0; s < src.S; ++s) {
      const bool first_reads = s >= taps.first_begin, last_reads = s < taps.last_end;
      const std::int8_t* f = filter + (r * src.S + s) * kFilterStep;
      const std::uint8_t* px = in + (r * src.row + s * L) * src.dilation;
      for (Index cb = 0; cb < src.channel_blocks; ++cb, f += filter_block_step, px += src.plane) {
#pragma GCC unroll 4
        for (int q = 0; q < Groups; ++q) {
          // The group's OCV x L output channels' quads: ymm y holds channels 8 y .. 8 y + 7.
          __m256i fv[Y];
#pragma GCC unroll 16
          for (int y = 0; y < Y; ++y)
            fv[y] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f + (q * OCV * L + y * 8) * G));
#pragma GCC unroll 4
          for (int h = 0; h < H; ++h) {
#pragma GCC unroll 28
            for (int j = 0; j < W; ++j) {
              if ((j == 0 && !first_reads) || (j == W - 1 && !last_reads)) continue;
              // In asm, one pixel's products in order: with intrinsics GCC hoisted the tile's
              // broadcasts ahead of the products and spilled the accumulators past AVX2's 16
              // registers (4 x 2 pixels: 300 against 368 GOP/s on a 56x56 layer).
              const std::uint8_t* quad = px + h * row_step + j * pixel_step + q * G;
              __m256i a, pairs;
              asm("vpbroadcastd %[quad], %[a]" : [a] "=x"(a) : [quad] "m"(*reinterpret_cast<const std::int32_t*>(quad)));
#pragma GCC unroll 16
              for (int y = 0; y < Y; ++y) {
                asm("vpmaddubsw %[f], %[a], %[pairs]\n\t"
                    "vpmaddwd %[ones], %[pairs], %[pairs]\n\t"
                    "vpaddd %[pairs], %[acc], %[acc]"
                    : [acc] "+x"(acc[h][j][y]), [pairs] "=&x"(pairs)
                    : [a] "x"(a), [f] "x"(fv[y]), [ones] "x"(ones));
              }
            }
          }
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int h = 0; h < H; ++h)
#pragma GCC unroll 28
    for (int j = 0; j < W; ++j)
#pragma GCC unroll 16
      for (int y = 0; y < Y; ++y) {
        if (y / (L / 8) >= vectors) continue;
        std::int32_t* o = out + y / (L / 8) * out_plane + h * out_row + j * L + y % (L / 8) * 8;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), acc[h][j][y]);
      }
}
#endif

// One register tile: H rows x W pixels x OCV output vectors of L channels, reduced over every
// input channel block and the taps of `taps`, stored into the blocked output at `out` (its first
// pixel of its first vector; `out_row` and `out_plane` elements apart). Only the first `vectors`
// vectors are stored (the rest lie past the output's last block). Stride > 0: the layer's stride
// as a constant, so that the tile's pixels are constant offsets of one address (with a run-time
// stride GCC held a register per pixel and spilled them). A7: the image holds 0..127 only.
template <int OCV, int W, int H, int Stride, int L, bool A7, typename TIn, typename TW, typename TOut>
void tile(const TIn* in, const Source& src, const Taps& taps, const TW* filter, TOut* out, Index out_row,
          Index out_plane, Index vectors) {
  constexpr int G = group<TIn>(), Groups = L / G;
  constexpr Index kFilterStep = Index{Groups} * OCV * L * G;  // elements per (block, tap)
  const Index stride = Stride > 0 ? Stride : src.stride;
  const Index pixel_step = stride * L, row_step = stride * src.row;
#if defined(__AVX2__)
  if constexpr (maddubs_path<TIn, TW, A7, L>()) {
    return tile_maddubs<OCV, W, H, Stride, L>(in, src, taps, filter, out, out_row, out_plane, vectors);
  }
#endif
#if defined(OPTUNE_GEMM_INT8_VNNI) || defined(OPTUNE_GEMM_BF16_AVX512)
  if constexpr (L == 16 && (vnni_path<TIn, TW>() || bf16_path<TIn>())) {
    using Acc = typename AccumulatorOf<std::is_same_v<TOut, bfloat16>>::type;
    Acc acc[H][W][OCV];
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h)
#pragma GCC unroll 28
      for (int j = 0; j < W; ++j)
#pragma GCC unroll 8
        for (int v = 0; v < OCV; ++v) acc[h][j][v] = Acc{};
    for (Index cb = 0; cb < src.channel_blocks; ++cb) {
      for (Index r = taps.rows_begin; r < taps.rows_end; ++r) {
        const TW* f = filter + (cb * src.R + r) * src.S * kFilterStep;
        for (Index s = 0; s < src.S; ++s, f += kFilterStep) {
          const TIn* px = in + cb * src.plane + (r * src.row + s * L) * src.dilation;
          const bool first_reads = s >= taps.first_begin, last_reads = s < taps.last_end;
#pragma GCC unroll 8
          for (int q = 0; q < Groups; ++q) {
            __m512i fv[OCV];
#pragma GCC unroll 8
            for (int v = 0; v < OCV; ++v) fv[v] = _mm512_load_si512(f + (q * OCV + v) * L * G);
#pragma GCC unroll 4
            for (int h = 0; h < H; ++h) {
#pragma GCC unroll 28
              for (int j = 0; j < W; ++j) {
                if ((j == 0 && !first_reads) || (j == W - 1 && !last_reads)) continue;
                const TIn* pair_or_quad = px + h * row_step + j * pixel_step + q * G;
#if defined(OPTUNE_GEMM_INT8_VNNI)
                if constexpr (vnni_path<TIn, TW>()) {
                  const __m512i a = _mm512_set1_epi32(load_word(pair_or_quad));
#pragma GCC unroll 8
                  for (int v = 0; v < OCV; ++v) acc[h][j][v] = gemm_int8_detail::dpbusd(acc[h][j][v], a, fv[v]);
                }
#endif
#if defined(OPTUNE_GEMM_BF16_AVX512)
                if constexpr (bf16_path<TIn>()) {
#pragma GCC unroll 8
                  for (int v = 0; v < OCV; ++v) acc[h][j][v] = dpbf16_broadcast(acc[h][j][v], fv[v], pair_or_quad);
                }
#endif
              }
            }
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h)
#pragma GCC unroll 28
      for (int j = 0; j < W; ++j)
#pragma GCC unroll 8
        for (int v = 0; v < OCV; ++v) {
          if (v >= vectors) continue;
          TOut* o = out + v * out_plane + h * out_row + j * L;
          if constexpr (std::is_same_v<TOut, bfloat16>) {
#if defined(OPTUNE_GEMM_BF16_AVX512)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), gemm_bf16_detail::narrow_bf16(acc[h][j][v]));
#endif
          } else {
            _mm512_storeu_si512(o, acc[h][j][v]);
          }
        }
    return;
  }
#endif
  // Plain C++: the same order of groups, bf16 products summed in float32. A group's filter values
  // are widened first, one array per element of the group. Its elements are summed in order: with
  // the odd one first (vdpbf16ps's order), GCC 12.2's loop vectorizer at -O3 produced wrong sums
  // for one-vector, one-pixel tiles (right at -O2 and under the sanitizers).
  using Sum = std::conditional_t<std::is_same_v<TOut, bfloat16>, float, std::int32_t>;
  Sum acc[H][W][OCV][L] = {};
  for (Index cb = 0; cb < src.channel_blocks; ++cb) {
    for (Index r = taps.rows_begin; r < taps.rows_end; ++r) {
      const TW* f = filter + (cb * src.R + r) * src.S * kFilterStep;
      for (Index s = 0; s < src.S; ++s, f += kFilterStep) {
        const TIn* px = in + cb * src.plane + (r * src.row + s * L) * src.dilation;
        const bool first_reads = s >= taps.first_begin, last_reads = s < taps.last_end;
        for (int q = 0; q < Groups; ++q) {
          Sum weights[G][OCV][L];
          for (int v = 0; v < OCV; ++v)
            for (int lane = 0; lane < L; ++lane)
              for (int e = 0; e < G; ++e) {
                const TW w = f[((q * OCV + v) * L + lane) * G + e];
                if constexpr (std::is_same_v<Sum, float>)
                  weights[e][v][lane] = widen(w);
                else
                  weights[e][v][lane] = w;
              }
          for (int h = 0; h < H; ++h) {
            for (int j = 0; j < W; ++j) {
              if ((j == 0 && !first_reads) || (j == W - 1 && !last_reads)) continue;
              const TIn* a = px + h * row_step + j * pixel_step + q * G;
              for (int e = 0; e < G; ++e) {
                Sum activation;
                if constexpr (std::is_same_v<Sum, float>)
                  activation = widen(a[e]);
                else
                  activation = a[e];
                for (int v = 0; v < OCV; ++v)
                  for (int lane = 0; lane < L; ++lane) acc[h][j][v][lane] += activation * weights[e][v][lane];
              }
            }
          }
        }
      }
    }
  }
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < W; ++j)
      for (int v = 0; v < OCV && v < vectors; ++v)
        for (int lane = 0; lane < L; ++lane) {
          TOut* o = out + v * out_plane + h * out_row + j * L + lane;
          if constexpr (std::is_same_v<Sum, float>)
            *o = narrow<bfloat16>(acc[h][j][v][lane]);
          else
            *o = acc[h][j][v][lane];
        }
}

// Row hp of channel block cb of image n's zero-padded copy (rows and columns of `pad` zeros
// around each plane), blocks of L channels.
template <int L, typename T>
void copy_padded_row(const Conv2dDims& d, const T* input, Index n, Index cb, Index hp, T* dst) {
  const Index width = d.W + 2 * d.pad, h = hp - d.pad;
  if (h < 0 || h >= d.H) {
    std::memset(static_cast<void*>(dst), 0, sizeof(T) * width * L);
    return;
  }
  const Index blocks = (d.C + L - 1) / L;
  std::memset(static_cast<void*>(dst), 0, sizeof(T) * d.pad * L);
  std::memcpy(static_cast<void*>(dst + d.pad * L), input + ((n * blocks + cb) * d.H + h) * d.W * L,
              sizeof(T) * d.W * L);
  std::memset(static_cast<void*>(dst + (d.pad + d.W) * L), 0, sizeof(T) * d.pad * L);
}

// Input channels a tile row of 64 bytes holds on AMX, one tap's (int8: 64, 4 of the layout's
// blocks; bf16: 32, 2 blocks): run_amx's copy of the input interleaves that many channels a pixel.
constexpr Index amx_channels(Index element_bytes) { return 64 / element_bytes; }

// What an amx config runs where the tiles are not there: the vector path on a small tile (one
// output vector, whose packed filter fits the amx config's room).
template <Conv2dDotNchwcConfig Config>
constexpr Conv2dDotNchwcConfig vector_fallback() {
  Conv2dDotNchwcConfig fallback = Config;
  fallback.amx = false;
  fallback.oc_vectors = 1;
  fallback.ow_block = 12;
  fallback.oh_block = 1;
  return fallback;
}

// Whether an amx config runs on AMX's tiles here: compiled for the element type's AMX products and
// the tiles permitted to this process. Packing and running ask alike.
template <Conv2dDotNchwcConfig Config, typename T>
bool runs_on_amx() {
  if constexpr (Config.amx) {
#if defined(OPTUNE_AMX_TILES) && defined(__AMX_BF16__) && defined(OPTUNE_GEMM_BF16_AVX512)
    if constexpr (std::is_same_v<T, bfloat16>) return amx::permitted();
#endif
#if defined(OPTUNE_AMX_TILES) && defined(__AMX_INT8__)
    if constexpr (sizeof(T) == 1) return amx::permitted();
#endif
  }
  return false;
}

// OIHW filter -> AMX's panels: [oc group of OCV x 16][channel group][r][s][OCV][16 rows][16
// columns][G], row i of a panel holding channels i * G + e of the group of amx_channels (the order
// of a pixel's channels in run_amx's copy); zero past C and K.
template <Conv2dDotNchwcConfig Config, typename TW>
void pack_filter_amx(const Conv2dDims& d, const TW* filter, TW* packed) {
  constexpr int NT = Config.oc_vectors;
  constexpr Index E = sizeof(TW), G = 4 / E, Channels = amx_channels(E);
  constexpr Index L = kAmxBlock;
  const Index groups = (d.K + NT * L - 1) / (NT * L), channel_groups = (d.C + Channels - 1) / Channels;
  TW* dst = packed;
  for (Index g = 0; g < groups; ++g)
    for (Index cg = 0; cg < channel_groups; ++cg)
      for (Index r = 0; r < d.R; ++r)
        for (Index s = 0; s < d.S; ++s)
          for (int v = 0; v < NT; ++v)
            for (Index i = 0; i < 16; ++i)
              for (Index n = 0; n < L; ++n)
                for (Index e = 0; e < G; ++e) {
                  const Index c = cg * Channels + i * G + e, oc = (g * NT + v) * L + n;
                  *dst++ = c < d.C && oc < d.K ? filter[((oc * d.C + c) * d.R + r) * d.S + s] : TW{};
                }
}

}  // namespace conv_dot_nchwc_detail

// Elements of the packed filter (an amx config's: room for either path's packing).
template <Conv2dDotNchwcConfig Config>
constexpr std::int64_t conv2d_dot_nchwc_packed_filter_size(const Conv2dDims& d) {
  constexpr std::int64_t L = Config.block, OB = Config.oc_vectors * L;
  const std::int64_t vectors = (d.K + OB - 1) / OB * OB * ((d.C + L - 1) / L * L) * d.R * d.S;
  if constexpr (!Config.amx) return vectors;
  // Panels of 1024 bytes per output-channel group, channel group, tap and output vector; counted
  // for bytes (64 channels a group), whose count times 1024 elements is at least bf16's times 512.
  const std::int64_t panels = (d.K + OB - 1) / OB * ((d.C + 63) / 64) * d.R * d.S * Config.oc_vectors;
  return std::max(vectors, panels * 1024);
}

// OIHW filter -> [oc block][ic block][r][s][group][OCV vectors][L output channels][G input
// channels], zero past K and C; for AMX's tiles, pack_filter_amx's panels.
template <Conv2dDotNchwcConfig Config, typename TW>
void conv2d_dot_nchwc_pack_filter(const Conv2dDims& d, const TW* filter, TW* packed) {
  using namespace conv_dot_nchwc_detail;
  if constexpr (Config.amx) {
    if (runs_on_amx<Config, TW>()) return pack_filter_amx<Config>(d, filter, packed);
    return conv2d_dot_nchwc_pack_filter<vector_fallback<Config>()>(d, filter, packed);
  }
  constexpr int OCV = Config.oc_vectors, L = Config.block;
  constexpr int G = std::is_same_v<TW, bfloat16> ? 2 : 4, Groups = L / G;
  const Index oc_blocks = (d.K + OCV * L - 1) / (OCV * L), ic_blocks = (d.C + L - 1) / L;
  TW* dst = packed;
  for (Index kb = 0; kb < oc_blocks; ++kb)
    for (Index cb = 0; cb < ic_blocks; ++cb)
      for (Index r = 0; r < d.R; ++r)
        for (Index s = 0; s < d.S; ++s)
          for (int q = 0; q < Groups; ++q)
            for (int v = 0; v < OCV; ++v)
              for (int lane = 0; lane < L; ++lane)
                for (int e = 0; e < G; ++e) {
                  const Index k = (kb * OCV + v) * L + lane, c = cb * L + q * G + e;
                  *dst++ = k < d.K && c < d.C ? filter[((k * d.C + c) * d.R + r) * d.S + s] : TW{};
                }
}

namespace conv_dot_nchwc_detail {

#if defined(OPTUNE_AMX_TILES)
// A thread's own zero-padded copy of a layer's input for AMX's tiles: per image and group of
// amx_channels channels, Hp x Wp pixels of those channels interleaved (one tap's 64 bytes, a tile
// row's whole depth: with the layout's 16 a pixel, 3 taps of a 3x3 filter row took 48 of 64), and
// zeros past the last plane for the tiles past the output to read. Filled row by row as the
// thread's items need them: no phase of copying before the items, no barrier, and no row written
// by one core and read by the other (which, with one shared copy, took a third of a 56x56
// layer's time). Rows of padding are zeroed once per geometry; an input row is copied once a call
// (`filled` holds the call that copied it).
struct PaddedCopy {
  static constexpr std::uint64_t kPadding = ~std::uint64_t{0};
  AlignedBuffer buffer;
  std::vector<std::uint64_t> filled;  // per (image, padded row)
  Index geometry[7] = {};             // N, C, H, W, pad, stride, element bytes
};
inline std::atomic<std::uint64_t> amx_conv_calls{0};

// An amx config's convolution, on the calling thread's PaddedCopy. Output pixels are numbered
// along rows of Qv = ceil(Wp / stride), and the copy holds a plane's rows by phase (rows
// stride x k + phase, k = 0, 1, ...: all of a stride-1 layer's rows in order), each row
// Wc = Qv x stride pixels wide. Output row oh's tap row r then is row oh + r x dilation / stride
// of phase r x dilation % stride, and pixel p's taps lie at p x stride + (that row) x Wc +
// s x dilation whatever its row: a slab of 16 runs on from one output row into the next, and only
// Qv - Q pixels of each row are computed for nothing (2 of 9 on 7x7 layers, 1 of 8 on a 7x7
// output of stride 2, against 9 of 16 with slabs held to a row). A slab's tile rows are its
// pixels, stride pixels apart in the copy. Each item: oh_block slabs x oc_vectors
// blocks of 16 output channels, their sums over every channel group and tap, stored to the pixels
// that exist (int8: a slab of 16 within a row directly, the rest and bf16 through a 1 KiB buffer).
template <Conv2dDotNchwcConfig Config, typename TIn, typename TW, typename TOut>
void run_amx(const Conv2dDims& d, const TIn* input, const TW* packed_filter, TOut* output) {
  constexpr int MT = Config.oh_block, NT = Config.oc_vectors, kB = 8 - NT, L = kAmxBlock;
  constexpr Index E = sizeof(TIn), Panel = 1024 / E;  // elements of a 16-row x 64-byte tile
  constexpr Index Channels = amx_channels(E), Blocks = Channels / L;  // a copied pixel's
  constexpr bool kBf16 = std::is_same_v<TIn, bfloat16>;
  using Dot = std::conditional_t<kBf16, amx::DotBf16, amx::DotInt8<std::is_same_v<TIn, std::int8_t>, true>>;
  using Sum = std::conditional_t<kBf16, float, std::int32_t>;
  const Index P = d.out_h(), Q = d.out_w(), in_blocks = (d.C + L - 1) / L, out_blocks = (d.K + L - 1) / L;
  const Index channel_groups = (d.C + Channels - 1) / Channels;
  const Index Wp = d.W + 2 * d.pad, Hp = d.H + 2 * d.pad;
  const Index Qv = (Wp + d.stride - 1) / d.stride, Wc = Qv * d.stride, rows_per_phase = (Hp + d.stride - 1) / d.stride;
  const Index plane = d.stride * rows_per_phase * Wc * Channels;
  // Where padded row hp of a plane starts in the copy.
  auto row_at = [&](Index hp) { return ((hp % d.stride) * rows_per_phase + hp / d.stride) * Wc * Channels; };
  const Index items = ((P * Qv + 15) / 16 + MT - 1) / MT, groups = (d.K + NT * L - 1) / (NT * L);
  const Index taps = d.R * d.S, filter_group = channel_groups * taps * NT * Panel;
  const std::uint64_t call = amx_conv_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  // The calling thread's copy, its geometry set (zeroed, its rows of padding marked) where it
  // changed, and the rows [first, last] of image n copied where this call has not yet.
  auto own_copy = [&]() -> PaddedCopy& {
    thread_local PaddedCopy mine;
    const Index geometry[7] = {d.N, d.C, d.H, d.W, d.pad, d.stride, E};
    if (!std::equal(geometry, geometry + 7, mine.geometry)) {
      const Index elements =
          d.N * channel_groups * plane + ((d.R * d.dilation + 3) * Wc + 32 * d.stride + d.S * d.dilation) * Channels;
      void* at = mine.buffer.reserve(static_cast<std::size_t>((elements * E + 3) / 4));
      std::memset(at, 0, static_cast<std::size_t>(elements * E));
      mine.filled.assign(static_cast<std::size_t>(d.N * Hp), 0);
      for (Index n = 0; n < d.N; ++n)
        for (Index hp = 0; hp < Hp; ++hp)
          if (hp < d.pad || hp >= d.pad + d.H) mine.filled[n * Hp + hp] = PaddedCopy::kPadding;
      std::copy(geometry, geometry + 7, mine.geometry);
    }
    return mine;
  };
  // A row's pixels gather their group's blocks; the padding columns and blocks past the input's
  // last stay the zeros the geometry's setting wrote.
  auto copy_rows = [&](PaddedCopy& mine, Index n, Index first, Index last) {
    TIn* copy = reinterpret_cast<TIn*>(mine.buffer.data());
    for (Index hp = std::max<Index>(first, 0); hp <= std::min(last, Hp - 1); ++hp) {
      std::uint64_t& stamp = mine.filled[n * Hp + hp];
      if (stamp == call || stamp == PaddedCopy::kPadding) continue;
      const Index h = hp - d.pad;
      for (Index cg = 0; cg < channel_groups; ++cg) {
        TIn* row = copy + (n * channel_groups + cg) * plane + row_at(hp) + d.pad * Channels;
        // Pixel by pixel, each a whole line of the copy written at once (block by block over the
        // row wrote each line in four pieces: 10% of a 56x56 int8 layer's time).
        const Index blocks = std::min<Index>(Blocks, in_blocks - cg * Blocks), block_stride = d.H * d.W * L;
        const TIn* from = input + ((n * in_blocks + cg * Blocks) * d.H + h) * d.W * L;
        for (Index w = 0; w < d.W; ++w)
          for (Index b = 0; b < blocks; ++b)
            std::memcpy(static_cast<void*>(row + w * Channels + b * L), from + b * block_stride + w * L, L * E);
      }
      stamp = call;
    }
  };
  auto each_sum = [](auto&& f) {
    [&]<int... T>(std::integer_sequence<int, T...>) { (f.template operator()<T / NT, T % NT>(), ...); }(
        std::make_integer_sequence<int, MT * NT>{});
  };
  auto run_item = [&](Index n, Index g, Index item) {
    const Index p0 = item * MT * 16, first_row = p0 / Qv;
    if (first_row >= P) return;  // pixels past the output only
    // The rows its valid pixels read (the others' results are not stored).
    const Index last_row = std::min(P - 1, (p0 + MT * 16 - 1) / Qv);
    PaddedCopy& mine = own_copy();
    copy_rows(mine, n, first_row * d.stride, last_row * d.stride + (d.R - 1) * d.dilation);
    amx::configure();
    Index slab[MT];  // each slab's first pixel's tap (0, 0), past its tap row's start
    for (int mi = 0; mi < MT; ++mi) slab[mi] = (p0 + mi * 16) * d.stride * Channels;
    const TIn* image = reinterpret_cast<const TIn*>(mine.buffer.data()) + n * channel_groups * plane;
    const TW* filter = packed_filter + g * filter_group;
    const Index a_stride = d.stride * 64;
    each_sum([&]<int MI, int NI>() { amx::zero<MI * NT + NI>(); });
    for (Index cg = 0; cg < channel_groups; ++cg)
      for (Index r = 0; r < d.R; ++r)
        for (Index s = 0; s < d.S; ++s) {
          const TIn* a = image + cg * plane + row_at(r * d.dilation) + s * d.dilation * Channels;
          const TW* b = filter + ((cg * d.R + r) * d.S + s) * NT * Panel;
          [&]<int... MI>(std::integer_sequence<int, MI...>) {
            (amx::load<4 + MI>(a + slab[MI], a_stride), ...);
          }(std::make_integer_sequence<int, MT>{});
          [&]<int... NI>(std::integer_sequence<int, NI...>) {
            (amx::load<kB + NI>(b + NI * Panel, 64), ...);
          }(std::make_integer_sequence<int, NT>{});
          each_sum([&]<int MI, int NI>() {
            static_assert(amx::is_used_triple(MI * NT + NI, 4 + MI, kB + NI));
            Dot::template run<MI * NT + NI, 4 + MI, kB + NI>();
          });
        }
    const Index vectors = std::min<Index>(NT, out_blocks - g * NT);
    alignas(64) Sum sums[16 * L];
    each_sum([&]<int MI, int NI>() {
      if (NI >= vectors) return;
      const Index p = p0 + MI * 16;
      Index oh = p / Qv, j = p % Qv;
      TOut* plane_out = output + (n * out_blocks + g * NT + NI) * P * Q * L;
      if constexpr (!kBf16) {  // int32 sums of 16 pixels of one row: the tile is their output
        if (oh < P && j + 16 <= Q) return amx::store<MI * NT + NI>(plane_out + (oh * Q + j) * L, L * sizeof(Sum));
      }
      amx::store<MI * NT + NI>(sums, L * sizeof(Sum));
      for (Index i = 0; i < 16; ++i, ++j) {
        if (j == Qv) j = 0, ++oh;
        if (oh >= P) break;
        if (j >= Q) continue;
        TOut* o = plane_out + (oh * Q + j) * L;
        if constexpr (kBf16)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), gemm_bf16_detail::narrow_bf16(_mm512_load_ps(sums + i * L)));
        else
          _mm512_storeu_si512(o, _mm512_load_si512(sums + i * L));
      }
    });
  };
  conv_detail::for_each_item<Config>(d.N, groups, items, 0, [](Index) {}, run_item);
}
#endif

// OutWidth > 0: the output's width as a constant, so that only the row's last narrower tile is
// compiled, not one for every width below ow_block (a candidate's compile, 1.0 s before).
template <Conv2dDotNchwcConfig Config, int Stride, int OutWidth, typename TIn, typename TW, typename TOut>
void run(const Conv2dDims& d, const TIn* input, const TW* packed_filter, TOut* output) {
  using namespace conv_dot_nchwc_detail;
  static_assert(conv2d_dot_nchwc_config_error(Config) == nullptr, "invalid Conv2dDotNchwcConfig");
  constexpr bool kBf16 = std::is_same_v<TIn, bfloat16>;
  static_assert(!kBf16 || (std::is_same_v<TW, bfloat16> && std::is_same_v<TOut, bfloat16>),
                "bf16 convolution: bf16 input, filter and output");
  static_assert(kBf16 || (sizeof(TIn) == 1 && std::is_same_v<TW, std::int8_t> && std::is_same_v<TOut, std::int32_t>),
                "int8 convolution: u8 or s8 input, s8 filter, int32 output");
  constexpr int OCV = Config.oc_vectors, OWB = Config.ow_block, OHB = Config.oh_block, L = Config.block;
  const Index P = d.out_h(), Q = d.out_w(), in_blocks = (d.C + L - 1) / L, out_blocks = (d.K + L - 1) / L;
  const Index oc_blocks = (d.K + OCV * L - 1) / (OCV * L), row_tiles = (P + OHB - 1) / OHB;
  const Index filter_block = in_blocks * d.R * d.S * OCV * L * L;  // elements per output-channel block

  // Padding no wider than the stride is read nowhere: the taps that would read it are skipped
  // (tile_taps), since only a row's first and last pixels and the first and last rows reach it,
  // and a band of rows that does runs row by row. The tiles then read the input in place (a tile
  // at the top-left edge starts from an address before its image that it never reads). Wider
  // padding is read from a zero-padded copy, written by the team before any tile runs.
  const bool copied = d.pad > d.stride;
  const Index width = copied ? d.W + 2 * d.pad : d.W, height = copied ? d.H + 2 * d.pad : d.H;
  const Index shift = copied ? 0 : d.pad;  // where output pixel 0's first tap lies, before the source's
  thread_local AlignedBuffer copy_buffer;  // the calling thread's; its team shares it
  const Index copy_elements = copied ? d.N * in_blocks * height * width * L : 0;
  TIn* copy = copied ? reinterpret_cast<TIn*>(copy_buffer.reserve(
                           static_cast<std::size_t>((copy_elements * static_cast<Index>(sizeof(TIn)) + 3) / 4)))
                     : nullptr;
  const TIn* source = copied ? copy : input;
  const Source src{width * L, height * width * L, d.stride, d.dilation, in_blocks, d.R, d.S};
  auto fill_row = [&](Index row) {
    const Index n = row / (in_blocks * height), rest = row % (in_blocks * height);
    copy_padded_row<L>(d, input, n, rest / height, rest % height, copy + row * width * L);
  };
  // Whether the rows [oh, oh + OHB) read only input rows, for every tap.
  const auto inside_rows = [&](Index oh) {
    return oh * d.stride >= d.pad && (oh + OHB - 1) * d.stride + (d.R - 1) * d.dilation - d.pad <= d.H - 1;
  };

  const Index whole_columns = Q / OWB * OWB;
  auto run_item = [&](Index n, Index kb, Index rt) {
    const Index oh0 = rt * OHB, rows = std::min<Index>(OHB, P - oh0);
    const Index vectors = std::min<Index>(OCV, out_blocks - kb * OCV);
    const TW* filter = packed_filter + kb * filter_block;
    // The tile of Width columns and Height rows at output (oh, ow0).
    auto run_tile = [&]<int Width, int Height>(Index oh, Index ow0) {
      const TIn* in = source + n * in_blocks * src.plane + (oh * d.stride - shift) * src.row + (ow0 * d.stride - shift) * L;
      TOut* out = output + ((n * out_blocks + kb * OCV) * P + oh) * Q * L + ow0 * L;
      tile<OCV, Width, Height, Stride, L, Config.a7>(in, src, tile_taps(d, oh, Height, ow0, Width), filter, out, Q * L, P * Q * L,
                                       vectors);
    };
    // A row band's tiles, the last (when Q is not a multiple of OWB) on a narrower micro-kernel.
    auto band = [&]<int Height>(Index oh) {
      for (Index ow0 = 0; ow0 < whole_columns; ow0 += OWB) run_tile.template operator()<OWB, Height>(oh, ow0);
      if constexpr (OWB > 1) {
        if constexpr (OutWidth > 0) {
          if constexpr (OutWidth % OWB > 0) run_tile.template operator()<OutWidth % OWB, Height>(oh, whole_columns);
        } else if (whole_columns < Q) {
          conv_detail::with_constant<OWB - 1>(Q - whole_columns, [&]<int Width>() {
            run_tile.template operator()<Width, Height>(oh, whole_columns);
          });
        }
      }
    };
    if (rows == OHB && (OHB == 1 || copied || inside_rows(oh0))) {
      band.template operator()<OHB>(oh0);
    } else {  // the last rows, and a band at the edge of the padding, one row at a time
      for (Index oh = oh0; oh < oh0 + rows; ++oh) band.template operator()<1>(oh);
    }
  };
  conv_detail::for_each_item<Config>(d.N, oc_blocks, row_tiles, copied ? d.N * in_blocks * height : 0, fill_row,
                                     run_item);
}

}  // namespace conv_dot_nchwc_detail

// output = conv2d(input, filter) on NCHW[Config.block]c tensors, the filter packed by
// conv2d_dot_nchwc_pack_filter<Config>. TIn u8 (x86 int8) or s8 (Arm's) with TW s8 and TOut int32;
// or bfloat16 all three. FixedStride > 0: the layer's stride, a constant of the tiles (a candidate
// knows it); 0: strides 1 and 2 are made constants at run time, others stay run-time values.
// FixedOutWidth > 0: the output's width (d.out_w()), known to a candidate: fewer tiles to compile.
template <Conv2dDotNchwcConfig Config, int FixedStride = 0, int FixedOutWidth = 0, typename TIn, typename TW,
          typename TOut>
void conv2d_dot_nchwc_packed(const Conv2dDims& d, const TIn* input, const TW* packed_filter, TOut* output) {
  using conv_dot_nchwc_detail::runs_on_amx, conv_dot_nchwc_detail::vector_fallback;
  if constexpr (Config.amx) {
#if defined(OPTUNE_AMX_TILES)
    if (runs_on_amx<Config, TIn>()) return conv_dot_nchwc_detail::run_amx<Config>(d, input, packed_filter, output);
#endif
    return conv2d_dot_nchwc_packed<vector_fallback<Config>(), FixedStride, FixedOutWidth>(d, input, packed_filter,
                                                                                         output);
  } else if constexpr (FixedStride == 0) {
    if (d.stride == 1) return conv2d_dot_nchwc_packed<Config, 1, FixedOutWidth>(d, input, packed_filter, output);
    if (d.stride == 2) return conv2d_dot_nchwc_packed<Config, 2, FixedOutWidth>(d, input, packed_filter, output);
    return conv2d_dot_nchwc_packed<Config, -1, FixedOutWidth>(d, input, packed_filter, output);
  } else {
    conv_dot_nchwc_detail::run<Config, (FixedStride > 0 ? FixedStride : 0), FixedOutWidth>(d, input, packed_filter,
                                                                                         output);
  }
}

// One call that packs the filter (into a per-thread buffer) and convolves: apply-best's entry.
// It packs on every call, which costs more than the convolution on deep layers (about 2 ms for a
// 512 x 512 x 3 x 3 int8 filter on a 2-core EPYC, against 0.21 ms of convolution): a layer run
// repeatedly packs once with conv2d_dot_nchwc_pack_filter and calls conv2d_dot_nchwc_packed, as
// the tuned candidates (and so their timings) do.
template <Conv2dDotNchwcConfig Config, typename TIn, typename TW, typename TOut>
void conv2d_dot_nchwc(const Conv2dDims& d, const TIn* input, const TW* filter, TOut* output) {
  thread_local AlignedBuffer packed;
  const auto elements = conv2d_dot_nchwc_packed_filter_size<Config>(d);
  TW* buffer = reinterpret_cast<TW*>(packed.reserve(static_cast<std::size_t>((elements * static_cast<std::int64_t>(sizeof(TW)) + 3) / 4)));
  conv2d_dot_nchwc_pack_filter<Config>(d, filter, buffer);
  conv2d_dot_nchwc_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
