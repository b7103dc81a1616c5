// The CPU conv2d kernel template: float32, NCHW input, OIHW filter, NCHW output, any stride,
// padding and dilation, groups = 1. The structure of TVM's x86 conv2d_NCHWc schedule:
//   1. the input is copied into a zero-padded, channel-blocked layout NCHW[ic_block]c, so that
//      the inner loops read `ic_block` consecutive channels of one pixel and never test bounds;
//   2. the filter is packed into [K/ob][C/ib][R][S][ib][ob] (ob = oc_vectors * lanes), so that
//      the micro-kernel reads it as one linear stream;
//   3. a register-tiled micro-kernel keeps an (oh_block x ow_block) tile of output pixels times
//      `ob` output channels in vector registers (vectors along output channels, one broadcast
//      input value per pixel) and reduces over all of C, R and S before writing the tile once,
//      transposed, into the NCHW output (so there is no output layout pass and no zeroing).
//
// Costs a caller sees: the input layout transform (step 1) runs inside every call and is part of
// the measured time; the filter packing (step 2) is separate (conv2d_pack_filter), because the
// weights of an inference are constants: the tuner's candidates pack once, on the first call, as
// TVM's pre-packed weights and oneDNN's reordered weights are prepared outside the timed call.
// conv2d() below packs in every call, for callers that want one function.
//
// That is the direct algorithm; Config.algorithm = kGemm runs the layer as a GEMM instead
// (conv2d_gemm.hpp), behind the same three functions. conv2d_nchwc.hpp runs the direct kernel on
// tensors kept in NCHW[lanes]c between layers (no layout transform), with the same micro-kernel
// (conv_tile) and tile loops (for_each_tile).
//
// The tuner's candidates and build-time consumers instantiate this same header:
//   conv2d_pack_filter<Conv2dConfig{...}>(dims, filter, packed);
//   conv2d_packed<Conv2dConfig{...}>(dims, input, packed, output);
// Compile with -O3 -march=<target> -fopenmp (without -fopenmp it runs on one thread).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/conv2d_gemm.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace conv_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }
inline Index round_up(Index a, Index b) { return ceil_div(a, b) * b; }

// How the tile loops share and order their work: a config's threads, loop_order and parallel.
struct ConvSchedule {
  int threads = 1;
  ConvLoopOrder loop_order = ConvLoopOrder::kOcOuter;
  ConvParallel parallel = ConvParallel::kOuter;
};

// The schedule of a candidate compiled with Conv2dConfig::run_time_schedule, set before it runs
// (by its optune_set_knobs: each candidate's shared object has its own). Until then one thread.
inline ConvSchedule run_time_schedule;

// Config's schedule: its fields, or run_time_schedule where it asks for it. Config: a
// Conv2dConfig, or any config with threads, loop_order and parallel (conv2d_dot_nchwc.hpp's).
template <auto Config>
ConvSchedule schedule_of() {
  if constexpr (requires { Config.run_time_schedule; }) {
    if constexpr (Config.run_time_schedule) return run_time_schedule;
  }
  return {Config.threads, Config.loop_order, Config.parallel};
}

// The zero-padded, channel-blocked copy of one image: [channel_blocks][height][width][block].
// Its height and width cover every input pixel a full register tile reads, so tiles at the
// bottom and right edges run the same code and only their stores are clipped.
struct BlockedImage {
  Index channel_blocks = 0, block = 1, height = 0, width = 0;
  Index row_floats() const { return width * block; }
  Index plane_floats() const { return height * width * block; }
  Index floats() const { return channel_blocks * plane_floats(); }
};

inline BlockedImage blocked_image(const Conv2dDims& d, Index block, Index oh_block, Index ow_block) {
  const Index rows = (round_up(d.out_h(), oh_block) - 1) * d.stride + (d.R - 1) * d.dilation + 1;
  const Index cols = (round_up(d.out_w(), ow_block) - 1) * d.stride + (d.S - 1) * d.dilation + 1;
  return {ceil_div(d.C, block), block, std::max(rows, d.pad + d.H), std::max(cols, d.pad + d.W)};
}

// The input window one register tile of oh_block x ow_block output pixels reads: its rows and
// columns of `channel_blocks` blocks of `block` channels.
inline BlockedImage tile_window(const Conv2dDims& d, Index channel_blocks, Index block, Index oh_block,
                                Index ow_block) {
  return {channel_blocks, block, (oh_block - 1) * d.stride + (d.R - 1) * d.dilation + 1,
          (ow_block - 1) * d.stride + (d.S - 1) * d.dilation + 1};
}

#if defined(__AVX__)
// Eight rows of eight floats (rows[i][0..8)) transposed: pixel j's eight values go to out + j * step.
[[gnu::always_inline]] inline void transpose_8x8(const float* const* rows, Index column, float* out, Index step) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[i] + column);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int half = 0; half < 8; half += 4) {
    r[half + 0] = _mm256_shuffle_ps(t[half + 0], t[half + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[half + 1] = _mm256_shuffle_ps(t[half + 0], t[half + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[half + 2] = _mm256_shuffle_ps(t[half + 1], t[half + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[half + 3] = _mm256_shuffle_ps(t[half + 1], t[half + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(out + j * step, _mm256_permute2f128_ps(r[j], r[j + 4], 0x20));
    _mm256_storeu_ps(out + (j + 4) * step, _mm256_permute2f128_ps(r[j], r[j + 4], 0x31));
  }
}
#endif

// Row `hp` of channel block `cb` of the blocked image: image row hp - pad of channels
// [cb * Block, (cb + 1) * Block), zero in the padding and in channels past C. A transpose of
// Block channel rows into pixels of Block channels: 8 x 8 at a time with AVX.
template <int Block>
void fill_blocked_row(const Conv2dDims& d, const BlockedImage& b, const float* __restrict image,
                      Index cb, Index hp, float* __restrict dst) {
  const Index h = hp - d.pad;
  if (h < 0 || h >= d.H) {
    std::fill_n(dst, b.row_floats(), 0.0f);
    return;
  }
  std::fill_n(dst, d.pad * Block, 0.0f);
  const Index tail = (d.pad + d.W) * Block;
  std::fill_n(dst + tail, b.row_floats() - tail, 0.0f);
  float* __restrict body = dst + d.pad * Block;
  int c = 0;
#if defined(__AVX__)
  if constexpr (Block % 8 == 0) {
    for (; c + 8 <= Block && cb * Block + c + 8 <= d.C; c += 8) {
      const float* rows[8];
      for (int i = 0; i < 8; ++i) rows[i] = image + ((cb * Block + c + i) * d.H + h) * d.W;
      Index w = 0;
      for (; w + 8 <= d.W; w += 8) transpose_8x8(rows, w, body + w * Block + c, Block);
      for (; w < d.W; ++w) {
        for (int i = 0; i < 8; ++i) body[w * Block + c + i] = rows[i][w];
      }
    }
  }
#endif
  for (; c < Block; ++c) {
    const Index channel = cb * Block + c;
    if (channel >= d.C) {
      for (Index w = 0; w < d.W; ++w) body[w * Block + c] = 0.0f;
      continue;
    }
    const float* __restrict src = image + (channel * d.H + h) * d.W;
    for (Index w = 0; w < d.W; ++w) body[w * Block + c] = src[w];
  }
}

// Strides of the blocked image and the filter that the micro-kernel walks, in floats.
struct TileGeometry {
  Index channel_blocks, R, S, stride, dilation, row_floats, plane_floats;
};

// The geometry of the layer's taps over a blocked image (a whole copy, or one tile's window).
inline TileGeometry tile_geometry(const Conv2dDims& d, const BlockedImage& image) {
  return {image.channel_blocks, d.R, d.S, d.stride, d.dilation, image.row_floats(), image.plane_floats()};
}

// Where a register tile's vectors go, in floats: vector v of pixel (h, j) is stored at
// out + h * row + j * pixel + v * vector. A pixel-major scratch tile ([OHB][OWB][OCV * Lanes]) is
// {OWB * OCV * Lanes, OCV * Lanes, Lanes}; the NCHW[Lanes]c output itself is {Q * Lanes, Lanes, P * Q * Lanes}.
struct TileStrides {
  Index row, pixel, vector;
};

#if defined(__AVX2__) && defined(__FMA__)
// The tile of 3 pixels x 4 vectors of 8 output channels on AVX2's 16 registers, scheduled by hand
// as oneDNN's AVX2 kernels are: 12 accumulators, the 3 pixels' broadcasts held while each of the 4
// filter vectors is loaded once into the last register, 3 broadcasts and 4 loads per 12
// multiply-adds (a 6 x 2 tile needs 6 broadcasts). GCC, given the same loop, folds each filter
// load into every multiply-add that uses it (12 loads) and spills. `x` is the first pixel, the
// others `step` floats apart; `w` the 4 filter vectors. The asm reads the image and the filter,
// which nothing writes while tiles are computed, so it declares no memory clobber (one cost 8%:
// GCC then reloads the loop bounds at every tap).
[[gnu::always_inline]] inline void conv_tap_avx2_3x4(const float* x, Index step, const float* w,
                                                     Simd<8>::Vector (&a)[12]) {
  const Index step_bytes = step * Index{sizeof(float)};
  asm("vbroadcastss (%[x]), %%ymm12\n\t"
      "vbroadcastss (%[x],%[step],1), %%ymm13\n\t"
      "vbroadcastss (%[x],%[step],2), %%ymm14\n\t"
      "vmovups (%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm15, %%ymm12, %[a00]\n\t"
      "vfmadd231ps %%ymm15, %%ymm13, %[a10]\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %[a20]\n\t"
      "vmovups 32(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm15, %%ymm12, %[a01]\n\t"
      "vfmadd231ps %%ymm15, %%ymm13, %[a11]\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %[a21]\n\t"
      "vmovups 64(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm15, %%ymm12, %[a02]\n\t"
      "vfmadd231ps %%ymm15, %%ymm13, %[a12]\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %[a22]\n\t"
      "vmovups 96(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm15, %%ymm12, %[a03]\n\t"
      "vfmadd231ps %%ymm15, %%ymm13, %[a13]\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %[a23]\n\t"
      : [a00] "+x"(a[0]), [a01] "+x"(a[1]), [a02] "+x"(a[2]), [a03] "+x"(a[3]), [a10] "+x"(a[4]),
        [a11] "+x"(a[5]), [a12] "+x"(a[6]), [a13] "+x"(a[7]), [a20] "+x"(a[8]), [a21] "+x"(a[9]),
        [a22] "+x"(a[10]), [a23] "+x"(a[11])
      : [x] "r"(x), [step] "r"(step_bytes), [w] "r"(w)
      : "ymm12", "ymm13", "ymm14", "ymm15");
}
#endif

// The multiply-adds of one filter tap into a register tile (conv_tile): IB input channels from
// `x`, the tap's packed weights at `w`.
template <int Lanes, int OCV, int IB, int OWB, int OHB>
[[gnu::always_inline]] inline void conv_tap(const float* __restrict x, const float* __restrict w, Index row_step,
                                            Index col_step, typename Simd<Lanes>::Vector (&acc)[OHB][OWB][OCV]) {
  using V = Simd<Lanes>;
  using Vector = typename V::Vector;
#if defined(__AVX2__) && defined(__FMA__)
  if constexpr (Lanes == 8 && OCV == 4 && OHB * OWB == 3) {
#pragma GCC unroll 8
    for (int ic = 0; ic < IB; ++ic) {
      conv_tap_avx2_3x4(x + ic, OWB == 3 ? col_step : row_step, w + ic * OCV * Lanes,
                        reinterpret_cast<Vector(&)[12]>(acc));
    }
    return;
  }
#endif
#pragma GCC unroll 2
  for (int ic = 0; ic < IB; ++ic) {
    Vector weights[OCV];
#pragma GCC unroll 4
    for (int v = 0; v < OCV; ++v) {
      weights[v] = V::load(w + (ic * OCV + v) * Lanes);
      V::keep_in_register(weights[v]);
    }
#pragma GCC unroll 32
    for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
      for (int j = 0; j < OWB; ++j) {
        const Vector pixel = V::broadcast(x + h * row_step + j * col_step + ic);
#pragma GCC unroll 4
        for (int v = 0; v < OCV; ++v) acc[h][j][v] = V::fma(pixel, weights[v], acc[h][j][v]);
      }
    }
  }
}

// One register tile: OHB x OWB output pixels times OCV * Lanes output channels, reduced over all
// input channels and filter taps. `in` points at the tile's first input pixel (padded
// coordinates), `w` at the packed filter of its output-channel block. The tile's vectors are
// stored once, at the end, at `out` with strides `o`; Accumulate starts them from what is there
// (a later reduction pass over more input channels). FixedS > 0 makes the filter width a
// constant, FixedStride > 0 the stride: the pixels' offsets become immediates of the broadcasts
// (with run-time strides GCC computes each address, and a 7x7 first layer with one input channel
// per step ran at three quarters of the speed).
template <int Lanes, int OCV, int IB, int OWB, int OHB, int FixedS, int FixedStride, bool Accumulate = false>
void conv_tile(const float* __restrict in, const float* __restrict w, const TileGeometry& g,
               float* __restrict out, const TileStrides& o) {
  using V = Simd<Lanes>;
  using Vector = typename V::Vector;
  Vector acc[OHB][OWB][OCV];
#pragma GCC unroll 32
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
    for (int j = 0; j < OWB; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < OCV; ++v) {
        acc[h][j][v] = Accumulate ? V::load(out + h * o.row + j * o.pixel + v * o.vector) : Vector{};
      }
    }
  }
  const Index S = FixedS > 0 ? FixedS : g.S;
  const Index stride = FixedStride > 0 ? FixedStride : g.stride;
  const Index col_step = stride * IB, row_step = stride * g.row_floats;
  for (Index cb = 0; cb < g.channel_blocks; ++cb) {
    const float* block = in + cb * g.plane_floats;
    for (Index r = 0; r < g.R; ++r) {
      const float* row = block + r * g.dilation * g.row_floats;
      // With many input channels a tap the loop is not unrolled even with a constant S:
      // unrolling made GCC spill the accumulators (measured 5x slower on a 3x3 layer), and the
      // constant trip count is what unroll_kw buys. With one or two channels a tap (first
      // layers) the loop overhead is a large part of a tap's work, and unrolling pays.
      if constexpr (IB <= 2) {
#pragma GCC unroll 8
        for (Index s = 0; s < S; ++s) {
          conv_tap<Lanes, OCV, IB, OWB, OHB>(row + s * g.dilation * IB, w, row_step, col_step, acc);
          w += IB * OCV * Lanes;
        }
      } else {
#pragma GCC unroll 1
        for (Index s = 0; s < S; ++s) {
          conv_tap<Lanes, OCV, IB, OWB, OHB>(row + s * g.dilation * IB, w, row_step, col_step, acc);
          w += IB * OCV * Lanes;
        }
      }
    }
  }
#pragma GCC unroll 32
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
    for (int j = 0; j < OWB; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < OCV; ++v) V::store(out + h * o.row + j * o.pixel + v * o.vector, acc[h][j][v]);
    }
  }
}

// Writes the valid part of a pixel-major tile ([OHB][OWB][OB]) into the NCHW output image.
template <int OB, int OWB, int OHB>
void store_tile(const float* __restrict tile, const Conv2dDims& d, Index k0, Index oh0, Index ow0,
                float* __restrict out_image) {
  const Index P = d.out_h(), Q = d.out_w();
  const Index channels = std::min<Index>(OB, d.K - k0), rows = std::min<Index>(OHB, P - oh0),
              cols = std::min<Index>(OWB, Q - ow0);
  for (Index k = 0; k < channels; ++k) {
    for (Index h = 0; h < rows; ++h) {
      float* __restrict dst = out_image + ((k0 + k) * P + oh0 + h) * Q + ow0;
      for (Index j = 0; j < cols; ++j) dst[j] = tile[(h * OWB + j) * OB + k];
    }
  }
}

// The work loops of the conv kernels, on Config.threads threads: first fill_row(row) for every
// row in [0, rows_to_fill) (the input's blocked copy; none where the kernel reads its input in
// place), then, once every row is in place, run_item(n, kb, rt) for every (image n, output-channel
// block kb, row rt) in Config's loop order and parallel split. What a "row" is the caller's: a row
// of register tiles (for_each_tile below), or a band of pixels (conv2d_nchwc_pointwise.hpp).
// The fused split hands out `fused_grab` consecutive items at a time.
// Config: as schedule_of's.
template <auto Config, typename FillRow, typename RunItem>
void for_each_item(Index images, Index oc_blocks, Index rows, Index rows_to_fill, const FillRow& fill_row,
                   const RunItem& run_item, Index fused_grab = 1) {
  const ConvSchedule schedule = schedule_of<Config>();
  const bool oc_outer = schedule.loop_order == ConvLoopOrder::kOcOuter;
  const Index outer_per_image = oc_outer ? oc_blocks : rows, outer = images * outer_per_image;
  const Index inner = oc_outer ? rows : oc_blocks;
  auto run = [&](Index o, Index i) {
    const Index n = o / outer_per_image, outer_index = o % outer_per_image;
    run_item(n, oc_outer ? outer_index : i, oc_outer ? i : outer_index);
  };

#pragma omp parallel num_threads(schedule.threads)
  {
    if (rows_to_fill > 0) {  // the same for every thread, so all or none meet the loop
#pragma omp for schedule(static)
      for (Index row = 0; row < rows_to_fill; ++row) fill_row(row);
      // (the implicit barrier of the loop above: every row is in place before any item runs)
    }
    if (schedule.parallel == ConvParallel::kOuter) {
#pragma omp for schedule(static)
      for (Index o = 0; o < outer; ++o) {
        for (Index i = 0; i < inner; ++i) run(o, i);
      }
    } else {
      // Dynamic: on a shared machine a descheduled thread would otherwise hold up the team.
#pragma omp for schedule(dynamic, fused_grab)
      for (Index f = 0; f < outer * inner; ++f) run(f / inner, f % inner);
    }
  }
}

// run.template operator()<N>() with N = `value` (1..Max) as a compile-time constant.
template <int Max, typename Run>
void with_constant(Index value, const Run& run) {
  if constexpr (Max > 1) {
    if (value < Max) return with_constant<Max - 1>(value, run);
  }
  run.template operator()<Max>();
}

// The tile loops both layouts share (conv2d_run below, conv2d_nchwc_run in conv2d_nchwc.hpp):
// for_each_item over rows of register tiles, run_tile(n, kb, rt, ct) for every output tile (image
// n, output-channel block kb, row tile rt, column tile ct), column tiles innermost.
template <Conv2dConfig Config, typename FillRow, typename RunTile>
void for_each_tile(const Conv2dDims& d, Index rows_to_fill, const FillRow& fill_row, const RunTile& run_tile) {
  const Index oc_blocks = ceil_div(d.K, Config.oc_vectors * Config.lanes);
  const Index row_tiles = ceil_div(d.out_h(), Config.oh_block), col_tiles = ceil_div(d.out_w(), Config.ow_block);
  for_each_item<Config>(d.N, oc_blocks, row_tiles, rows_to_fill, fill_row, [&](Index n, Index kb, Index rt) {
    for (Index ct = 0; ct < col_tiles; ++ct) run_tile(n, kb, rt, ct);
  });
}

// The input window of one tile of an NCHW image read in place (blocked_copy_run, ic_block 1):
// rows [h0, h0 + window.height) and columns [w0, w0 + window.width) of every channel, in image
// coordinates (negative in the padding), zero outside the image, into `dst`
// ([C][window.height][window.width]).
inline void copy_nchw_window(const Conv2dDims& d, const float* __restrict image, Index h0, Index w0,
                             const BlockedImage& window, float* __restrict dst) {
  const Index first = std::clamp<Index>(-w0, 0, window.width);
  const Index last = std::clamp<Index>(d.W - w0, first, window.width);  // columns [first, last) are inside
  for (Index c = 0; c < window.channel_blocks; ++c) {
    for (Index r = 0; r < window.height; ++r) {
      float* __restrict row = dst + c * window.plane_floats() + r * window.width;
      const Index h = h0 + r;
      if (h < 0 || h >= d.H) {
        std::fill_n(row, window.width, 0.0f);
        continue;
      }
      const float* __restrict src = image + (c * d.H + h) * d.W + w0;
      std::fill_n(row, first, 0.0f);
      std::copy(src + first, src + last, row + first);
      std::fill(row + last, row + window.width, 0.0f);
    }
  }
}

// The NCHW input's side of the direct kernel: the zero-padded, channel-blocked copy of the input
// (filled by the tile loops' threads), then compute_tile(image, filter, g, n, kb, oh0, ow0) for
// every output tile, with `image` at the tile's first input pixel in the copy and `filter` at
// its output-channel block's packed filter: it runs conv_tile and stores the tile where its
// output layout wants it (conv2d_run below: NCHW; conv2d_nchwc.hpp: NCHW[lanes]c).
// With one channel a block (first layers: RGB) the NCHW image already is the blocked image less
// its padding: tiles read it in place, and the few whose window reaches into the padding or past
// the image read a zero-padded copy of their window. The whole copy, filled before any tile ran,
// was an eighth of MobileNet's first layer.
template <Conv2dConfig Config, typename ComputeTile>
void blocked_copy_run(const Conv2dDims& d, const float* input, const float* packed_filter,
                      const ComputeTile& compute_tile) {
  constexpr int OB = Config.oc_vectors * Config.lanes, IB = Config.ic_block;
  constexpr int OWB = Config.ow_block, OHB = Config.oh_block;
  if constexpr (IB == 1) {
    const TileGeometry in_place = tile_geometry(d, BlockedImage{d.C, 1, d.H, d.W});
    const BlockedImage window = tile_window(d, d.C, 1, OHB, OWB);
    const TileGeometry window_g = tile_geometry(d, window);
    const Index filter_block_floats = d.C * d.R * d.S * OB;
    auto run_tile = [&](Index n, Index kb, Index rt, Index ct) {
      const Index oh0 = rt * OHB, ow0 = ct * OWB;
      const Index h0 = oh0 * d.stride - d.pad, w0 = ow0 * d.stride - d.pad;
      const float* image = input + n * d.C * d.H * d.W;
      const float* filter = packed_filter + kb * filter_block_floats;
      if (h0 >= 0 && w0 >= 0 && h0 + window.height <= d.H && w0 + window.width <= d.W) {
        compute_tile(image + h0 * d.W + w0, filter, in_place, n, kb, oh0, ow0);
        return;
      }
      thread_local AlignedBuffer window_buffer;  // each thread's own
      float* copy = window_buffer.reserve(static_cast<std::size_t>(window.floats()));
      copy_nchw_window(d, image, h0, w0, window, copy);
      compute_tile(copy, filter, window_g, n, kb, oh0, ow0);
    };
    for_each_tile<Config>(d, 0, [](Index) {}, run_tile);
    return;
  }
  const BlockedImage b = blocked_image(d, IB, OHB, OWB);
  thread_local AlignedBuffer blocked_buffer;  // the calling thread's; its team shares it
  float* blocked = blocked_buffer.reserve(static_cast<std::size_t>(d.N * b.floats()));
  const TileGeometry g = tile_geometry(d, b);
  const Index filter_block_floats = b.channel_blocks * d.R * d.S * IB * OB;

  auto fill_row = [&](Index row) {
    const Index n = row / (b.channel_blocks * b.height), rest = row % (b.channel_blocks * b.height);
    fill_blocked_row<IB>(d, b, input + n * d.C * d.H * d.W, rest / b.height, rest % b.height,
                         blocked + row * b.row_floats());
  };
  auto run_tile = [&](Index n, Index kb, Index rt, Index ct) {
    const Index oh0 = rt * OHB, ow0 = ct * OWB;
    const float* image = blocked + n * b.floats() + (oh0 * b.row_floats() + ow0 * IB) * d.stride;
    compute_tile(image, packed_filter + kb * filter_block_floats, g, n, kb, oh0, ow0);
  };
  for_each_tile<Config>(d, d.N * b.channel_blocks * b.height, fill_row, run_tile);
}

template <Conv2dConfig Config, int FixedS, int FixedStride>
void conv2d_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, OCV = Config.oc_vectors, OB = OCV * L, IB = Config.ic_block;
  constexpr int OWB = Config.ow_block, OHB = Config.oh_block;
  const Index P = d.out_h(), Q = d.out_w();
  blocked_copy_run<Config>(d, input, packed_filter,
                           [&](const float* image, const float* filter, const TileGeometry& g, Index n, Index kb,
                               Index oh0, Index ow0) {
                             alignas(64) float tile[OHB * OWB * OB];
                             conv_tile<L, OCV, IB, OWB, OHB, FixedS, FixedStride>(image, filter, g, tile,
                                                                                 {OWB * OB, OB, L});
                             store_tile<OB, OWB, OHB>(tile, d, kb * OB, oh0, ow0, output + n * d.K * P * Q);
                           });
}

// Calls run.template operator()<S>() with S the filter width as a compile-time constant where
// there is one: FixedS when the caller knows it (candidates, FixedS >= 0), else `S` when it is 1,
// 3, 5 or 7 and Unroll (the config's unroll_kw); S = 0 reads the width at run time. For every
// CPU conv kernel (conv2d, its NCHW[b]c form, depthwise).
template <bool Unroll, int FixedS, typename Run>
void with_filter_width(Index S, const Run& run) {
  if constexpr (FixedS >= 0) {
    run.template operator()<FixedS>();
  } else {
    switch (Unroll ? S : 0) {
      case 1: return run.template operator()<1>();
      case 3: return run.template operator()<3>();
      case 5: return run.template operator()<5>();
      case 7: return run.template operator()<7>();
      default: return run.template operator()<0>();
    }
  }
}

// As with_filter_width, and the stride too: run.template operator()<S, Stride>() with Stride
// FixedStride when the caller knows it (candidates, FixedStride >= 0), else 1 or 2 where `stride`
// is, 0 (read at run time) otherwise.
template <bool Unroll, int FixedS, int FixedStride, typename Run>
void with_filter_width_and_stride(Index S, Index stride, const Run& run) {
  with_filter_width<Unroll, FixedS>(S, [&]<int ConstS>() {
    if constexpr (FixedStride >= 0) {
      run.template operator()<ConstS, FixedStride>();
    } else {
      switch (stride) {
        case 1: return run.template operator()<ConstS, 1>();
        case 2: return run.template operator()<ConstS, 2>();
        default: return run.template operator()<ConstS, 0>();
      }
    }
  });
}

}  // namespace conv_detail

// Floats of the packed filter: [ceil(K/ob)][ceil(C/ib)][R][S][ib][ob], zero-padded.
template <Conv2dConfig Config>
std::size_t conv2d_packed_filter_size(const Conv2dDims& d) {
  if constexpr (Config.algorithm == ConvAlgorithm::kGemm) return conv2d_gemm_packed_filter_size<Config>(d);
  using conv_detail::round_up;
  return static_cast<std::size_t>(round_up(d.K, Config.oc_vectors * Config.lanes) *
                                  round_up(d.C, Config.ic_block) * d.R * d.S);
}

// OIHW filter into the kernel's packed layout (conv2d_packed_filter_size floats at `packed`).
template <Conv2dConfig Config>
void conv2d_pack_filter(const Conv2dDims& d, const float* __restrict filter, float* __restrict packed) {
  if constexpr (Config.algorithm == ConvAlgorithm::kGemm) {
    return conv2d_gemm_pack_filter<Config>(d, filter, packed);
  }
  using conv_detail::Index;
  constexpr Index OB = Config.oc_vectors * Config.lanes, IB = Config.ic_block;
  const Index oc_blocks = conv_detail::ceil_div(d.K, OB), ic_blocks = conv_detail::ceil_div(d.C, IB);
  for (Index kb = 0; kb < oc_blocks; ++kb) {
    for (Index cb = 0; cb < ic_blocks; ++cb) {
      for (Index r = 0; r < d.R; ++r) {
        for (Index s = 0; s < d.S; ++s) {
          for (Index ic = 0; ic < IB; ++ic) {
            for (Index oc = 0; oc < OB; ++oc) {
              const Index k = kb * OB + oc, c = cb * IB + ic;
              *packed++ = k < d.K && c < d.C ? filter[((k * d.C + c) * d.R + r) * d.S + s] : 0.0f;
            }
          }
        }
      }
    }
  }
}

// output = conv2d(input, filter) with the filter already packed by conv2d_pack_filter<Config>.
// FixedS: the filter width as a constant when the caller knows it at compile time (candidates);
// -1 picks it at run time (1, 3, 5, 7 get unrolled code when Config.unroll_kw). FixedStride
// likewise (0: read at run time; -1: constant code for strides 1 and 2).
template <Conv2dConfig Config, int FixedS = -1, int FixedStride = -1>
void conv2d_packed(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  static_assert(conv2d_config_error(Config) == nullptr, "invalid Conv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "Conv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  if constexpr (Config.algorithm == ConvAlgorithm::kGemm) {
    conv2d_gemm_packed<Config>(d, input, packed_filter, output);
  } else {
    conv_detail::with_filter_width_and_stride<Config.unroll_kw, FixedS, FixedStride>(
        d.S, d.stride, [&]<int S, int Stride>() {
          conv_detail::conv2d_run<Config, S, Stride>(d, input, packed_filter, output);
        });
  }
}

// One call that packs the filter (into a per-thread buffer) and convolves.
template <Conv2dConfig Config>
void conv2d(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(conv2d_packed_filter_size<Config>(d));
  conv2d_pack_filter<Config>(d, filter, buffer);
  conv2d_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
