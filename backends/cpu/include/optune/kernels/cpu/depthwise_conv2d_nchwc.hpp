// Depthwise conv2d on the kept activation layout NCHW[lanes]c (layout.hpp): input
// [N][ceil(C/lanes)][H][W][lanes], output [N][ceil(C/lanes)][P][Q][lanes], for networks that keep
// that layout between layers (as oneDNN's nChw8c and TVM's NCHWc do), so no call pays for a
// transform. The compute is the channel-blocked kernel's (depthwise_conv2d_blocked.hpp): a
// register tile of oh_block x ow_block pixels times c_vectors channel vectors accumulates all
// R x S taps, one vector load of input and one FMA per tap; here the c_vectors vectors of a
// channel group are c_vectors layout blocks, each its own plane in memory.
//
// Reads and writes in place. The layers are memory-bound, so the input is not copied where it need
// not be: a tile whose input window lies inside the image reads the image itself. Only tiles at
// the padded borders (and in a last channel group with fewer than c_vectors blocks) copy their
// window, zero outside the image, into a small per-thread scratch that stays in L1. Where that
// would copy more pixels than the band of rows a work item computes (planes up to 56x56, where a
// third or more of the tiles are edges), the band is copied once with its zero border instead and
// every tile reads the copy. (Measured on MobileNet's layers, single thread: that choice was the
// faster one on dw1, dw2 and dw3; computing the edge columns one pixel wide and the inside in
// full tiles was slower than either, the one-pixel tiles being latency-bound.) Full output tiles
// are stored as vectors straight into the output; edge tiles through a local tile clipped to it.
//
// Output channels past C come out zero: the packed filter's weights are zero there, so any finite
// values in the input's padding channels are multiplied by zero.
//
// Threads split (image, channel group) items and, where those are fewer than four per thread
// (few channels, large planes: MobileNet's first layers), bands of output rows as well.
//
//   depthwise_conv2d_pack_filter<DepthwiseConv2dConfig{...}>(dims, filter, packed);  // once per weights
//   depthwise_conv2d_nchwc_packed<DepthwiseConv2dConfig{...}>(dims, input, packed, output);
// (The filter packing is depthwise_conv2d.hpp's, included here.)
// Config.algorithm must be kBlocked; dims.K is ignored. Compile with -O3 -march=<target> -fopenmp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/depthwise_conv2d.hpp"
#include "optune/kernels/cpu/depthwise_conv2d_blocked.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace depthwise_nchwc_detail {

using conv_detail::ceil_div;
using conv_detail::Index;
using depthwise_blocked_detail::PixelSteps;

// Input pixels rows x cols from (y0, x0), in image coordinates (negative in the padding): what a
// tile of output pixels reads, or a whole band of tiles.
struct Window {
  Index y0 = 0, x0 = 0, rows = 0, cols = 0;
  bool inside(const Conv2dDims& d) const { return y0 >= 0 && x0 >= 0 && y0 + rows <= d.H && x0 + cols <= d.W; }
  Index pixels() const { return rows * cols; }
};

// The input window of output rows [oh, oh + rows) and columns [ow, ow + cols) (rows x cols outputs).
inline Window window_of(const Conv2dDims& d, Index oh, Index ow, Index rows, Index cols) {
  return {oh * d.stride - d.pad, ow * d.stride - d.pad, (rows - 1) * d.stride + (d.R - 1) * d.dilation + 1,
          (cols - 1) * d.stride + (d.S - 1) * d.dilation + 1};
}

// Vectors [0, present) of a channel group's window into scratch [CV][rows][cols][L], zero where
// the window leaves the image; the group's other vectors (blocks past the last) all zero. Inline
// vector moves: the windows of edge tiles are a few dozen pixels, too few for memcpy's calls.
template <int L, int CV>
void copy_window(const Conv2dDims& d, const float* __restrict group, Index present, const Window& win,
                 float* __restrict scratch) {
  using V = Simd<L>;
  using Vector = typename V::Vector;
  // keep_in_register hides the values from GCC, which would otherwise turn each loop back into
  // a memset or memcpy call (measured: a fifth of a 7x7 layer's time in those calls).
  const auto zero_fill = [](float* dst, Index pixels) {
    for (Index k = 0; k < pixels; ++k) {
      Vector zero{};
      V::keep_in_register(zero);
      V::store(dst + k * L, zero);
    }
  };
  const Index plane = d.H * d.W * L;
  const Index x_begin = std::clamp<Index>(-win.x0, 0, win.cols);  // the window's columns inside the image
  const Index x_end = std::clamp<Index>(d.W - win.x0, x_begin, win.cols);
  for (Index v = 0; v < CV; ++v) {
    for (Index i = 0; i < win.rows; ++i) {
      float* __restrict dst = scratch + (v * win.rows + i) * win.cols * L;
      const Index y = win.y0 + i;
      if (v >= present || y < 0 || y >= d.H) {
        zero_fill(dst, win.cols);
        continue;
      }
      const float* __restrict src = group + v * plane + (y * d.W + win.x0) * L;
      zero_fill(dst, x_begin);
      for (Index k = x_begin; k < x_end; ++k) {
        Vector pixel = V::load(src + k * L);
        V::keep_in_register(pixel);
        V::store(dst + k * L, pixel);
      }
      zero_fill(dst + x_end * L, win.cols - x_end);
    }
  }
}

// How a band of output rows reads its input: the tiles whose window lies inside the image read
// it in place and the others (edges) copy their window; or, where that would copy more pixels
// than the band's whole padded window (small planes: every tile is an edge tile), the band's
// window is copied once and every tile reads the copy.
struct BandInput {
  bool copy_band = false;
  Window band;             // the band's window (copy_band)
  Index scratch_floats = 0;  // per vector: the band's copy or one tile's window
};

// edges_in_place: tiles whose window leaves the image by one column, left or right, read the
// image in place (run_band).
template <int CV, int OWB, int OHB>
BandInput band_input(const Conv2dDims& d, Index oh_begin, Index oh_end, Index present, bool edges_in_place) {
  const Index Q = d.out_w();
  const Window tile = window_of(d, 0, 0, OHB, OWB);
  // A tile is inside where both its rows and its columns are.
  Index row_tiles = 0, rows_inside = 0, col_tiles = 0, cols_inside = 0;
  const Index reach = edges_in_place ? 1 : 0;  // columns of padding a tile may leave unread
  for (Index oh = oh_begin; oh < oh_end; oh += OHB, ++row_tiles) {
    const Window w = window_of(d, oh, 0, OHB, OWB);
    rows_inside += w.y0 >= 0 && w.y0 + w.rows <= d.H;
  }
  for (Index ow = 0; ow < Q; ow += OWB, ++col_tiles) {
    const Window w = window_of(d, 0, ow, OHB, OWB);
    cols_inside += w.x0 >= -reach && w.x0 + w.cols <= d.W + reach;
  }
  const Index edge_tiles = row_tiles * col_tiles - (present == CV ? rows_inside * cols_inside : 0);
  // Pixels the edge tiles' windows hold, and for each copy the cost of about 16 more (its loops
  // and call: with a few pixels a window, copying them one tile at a time measured slower than
  // the band's count of pixels says).
  const Index copied = edge_tiles * (tile.pixels() + 16);
  BandInput input;
  input.band = window_of(d, oh_begin, 0, conv_detail::round_up(oh_end - oh_begin, OHB), conv_detail::round_up(Q, OWB));
  input.copy_band = input.band.pixels() < copied;
  input.scratch_floats = input.copy_band ? input.band.pixels() : tile.pixels();
  return input;
}

// A tile at the left or right edge that reads the image in place (run_band), leaving out the
// taps on the SkipLeft / SkipRight columns of padding. A call of its own: inlined, the three
// variants made the band loop slower on 7x7 planes (10%), where no tile takes them.
template <int L, int CV, int OWB, int OHB, int FixedS, int FixedStride, int SkipLeft, int SkipRight>
[[gnu::noinline]] void edge_tile_in_place(const float* in, PixelSteps in_steps, const float* taps, const Conv2dDims& d,
                                          float* out, PixelSteps out_steps) {
  depthwise_blocked_detail::depthwise_blocked_tile<L, CV, OWB, OHB, FixedS, L, FixedStride, SkipLeft, SkipRight>(
      in, in_steps, taps, d.R, d.S, d.stride, d.dilation, out, out_steps);
}

// The output rows [oh_begin, oh_end) of channel group g of image n. FixedStride: d.stride as a
// constant (1, 2), or 0.
template <int L, int CV, int OWB, int OHB, int FixedS, int FixedStride>
void run_band(const Conv2dDims& d, const float* input, const float* packed_filter, float* output, Index n, Index g,
              Index oh_begin, Index oh_end, AlignedBuffer& scratch_buffer) {
  using V = Simd<L>;
  constexpr int CB = CV * L;
  const Index P = d.out_h(), Q = d.out_w(), blocks = ceil_div(d.C, L);
  const Index present = std::min<Index>(CV, blocks - g * CV);  // layout blocks of this group in memory
  const float* group_in = input + (n * blocks + g * CV) * d.H * d.W * L;
  float* group_out = output + (n * blocks + g * CV) * P * Q * L;
  const float* taps = packed_filter + g * d.R * d.S * CB;
  // A tile whose window leaves the image only by one column on the left or the right, or both
  // (pad 1: MobileNet's layers, where with stride 2 the left column is the only edge but the top
  // row) reads the image in place and leaves out the taps on those columns: the copy of its window
  // cost a quarter of a stride-2 layer's time.
  const bool edges_in_place = FixedS > 0 && FixedStride > 0 && d.pad == 1 && d.dilation == 1;
  const auto columns_in_place = [&](const Window& w) {  // 1 left, 2 right, 3 both, 0 neither
    if (!edges_in_place || present < CV || w.y0 < 0 || w.y0 + w.rows > d.H) return 0;
    const bool left = w.x0 == -1, right = w.x0 + w.cols == d.W + 1;
    if ((w.x0 < 0 && !left) || (w.x0 + w.cols > d.W && !right)) return 0;
    return (left ? 1 : 0) | (right ? 2 : 0);
  };
  const BandInput band = band_input<CV, OWB, OHB>(d, oh_begin, oh_end, present, edges_in_place);
  float* scratch = scratch_buffer.reserve(static_cast<std::size_t>(CV * band.scratch_floats * L));
  if (band.copy_band) copy_window<L, CV>(d, group_in, present, band.band, scratch);
  const Window tile_window = window_of(d, 0, 0, OHB, OWB);
  const PixelSteps image_steps{d.W * L, d.H * d.W * L}, out_steps{Q * L, P * Q * L};
  const PixelSteps band_steps{band.band.cols * L, band.band.pixels() * L};
  const PixelSteps window_steps{tile_window.cols * L, tile_window.pixels() * L};
  const PixelSteps tile_steps{OWB * L, OHB * OWB * L};
  alignas(64) float tile[CV * OHB * OWB * L];  // [CV][OHB][OWB][L]: edge tiles before clipping
  for (Index oh = oh_begin; oh < oh_end; oh += OHB) {
    const Index rows = std::min<Index>(OHB, P - oh);
    for (Index ow = 0; ow < Q; ow += OWB) {
      const Index cols = std::min<Index>(OWB, Q - ow);
      const Window win = window_of(d, oh, ow, OHB, OWB);
      const float* in = group_in + (win.y0 * d.W + win.x0) * L;
      PixelSteps in_steps = image_steps;
      int skip = 0;  // columns_in_place
      if (band.copy_band) {
        in = scratch + ((oh - oh_begin) * d.stride * band.band.cols + ow * d.stride) * L;
        in_steps = band_steps;
      } else if (present < CV || !win.inside(d)) {
        skip = columns_in_place(win);
        if (skip == 0) {
          copy_window<L, CV>(d, group_in, present, win, scratch);
          in = scratch;
          in_steps = window_steps;
        }
      }
      const auto compute = [&](float* dst, const PixelSteps& dst_steps) [[gnu::always_inline]] {
        if constexpr (FixedS > 0 && FixedStride > 0) {
          switch (skip) {
            case 1: return edge_tile_in_place<L, CV, OWB, OHB, FixedS, FixedStride, 1, 0>(
                in, in_steps, taps, d, dst, dst_steps);
            case 2: return edge_tile_in_place<L, CV, OWB, OHB, FixedS, FixedStride, 0, 1>(
                in, in_steps, taps, d, dst, dst_steps);
            case 3: return edge_tile_in_place<L, CV, OWB, OHB, FixedS, FixedStride, 1, 1>(
                in, in_steps, taps, d, dst, dst_steps);
          }
        }
        depthwise_blocked_detail::depthwise_blocked_tile<L, CV, OWB, OHB, FixedS, L, FixedStride>(
            in, in_steps, taps, d.R, d.S, d.stride, d.dilation, dst, dst_steps);
      };
      float* out = group_out + (oh * Q + ow) * L;
      if (rows == OHB && cols == OWB && present == CV) {
        compute(out, out_steps);
        continue;
      }
      compute(tile, tile_steps);
      for (Index v = 0; v < present; ++v) {
        for (Index h = 0; h < rows; ++h) {
          const float* src = tile + (v * OHB + h) * OWB * L;
          float* dst = out + v * out_steps.vector + h * out_steps.row;
          for (Index j = 0; j < cols; ++j) V::store(dst + j * L, V::load(src + j * L));
        }
      }
    }
  }
}

template <int L, int CV, int OWB, int OHB, int FixedS, int FixedStride, int Threads>
void run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  const Index P = d.out_h(), groups = ceil_div(ceil_div(d.C, L), CV), planes = d.N * groups;
  // At least four items per thread where the planes allow it, so a thread the OS deschedules
  // on a shared machine does not hold up the team (dynamic shares).
  const Index row_tiles = ceil_div(P, OHB);
  const Index bands = Threads == 1 ? 1 : std::clamp<Index>(ceil_div(4 * Threads, planes), 1, row_tiles);
  const Index band_rows = ceil_div(row_tiles, bands) * OHB;
  // Chunks of several items where items are many and small (7x7 planes: 128 per layer).
  const Index items = planes * bands, chunk = std::max<Index>(1, items / (8 * Threads));
#pragma omp parallel for num_threads(Threads) schedule(dynamic, chunk)
  for (Index item = 0; item < items; ++item) {
    thread_local AlignedBuffer scratch;  // this thread's copies of edge windows or of a band
    const Index plane = item / bands, band = item % bands;
    const Index oh_begin = band * band_rows;
    if (oh_begin >= P) continue;
    run_band<L, CV, OWB, OHB, FixedS, FixedStride>(d, input, packed_filter, output, plane / groups, plane % groups,
                                                   oh_begin, std::min(P, oh_begin + band_rows), scratch);
  }
}

}  // namespace depthwise_nchwc_detail

// input [N][ceil(C/B)][H][W][B], output [N][ceil(C/B)][P][Q][B], B = Config.lanes (the layout
// block); packed_filter from depthwise_conv2d_pack_filter<Config>. FixedS as
// in depthwise_conv2d_packed: the filter width when known at compile time, -1 for run time.
template <DepthwiseConv2dConfig Config, int FixedS = -1>
void depthwise_conv2d_nchwc_packed(const Conv2dDims& d, const float* input, const float* packed_filter,
                                   float* output) {
  static_assert(depthwise_conv2d_config_error(Config) == nullptr, "invalid DepthwiseConv2dConfig");
  static_assert(Config.algorithm == DepthwiseAlgorithm::kBlocked,
                "depthwise_conv2d_nchwc needs algorithm = kBlocked: vectors along channels, as the layout has them");
  static_assert(Config.lanes <= kMaxLanes,
                "DepthwiseConv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  constexpr int L = Config.lanes, CV = Config.c_vectors, OWB = Config.ow_block, OHB = Config.oh_block;
  // The stride as a constant: MobileNet's layers have 1 and 2.
  const auto run_with_stride = [&]<int S>() {
    using depthwise_nchwc_detail::run;
    switch (d.stride) {
      case 1: return run<L, CV, OWB, OHB, S, 1, Config.threads>(d, input, packed_filter, output);
      case 2: return run<L, CV, OWB, OHB, S, 2, Config.threads>(d, input, packed_filter, output);
      default: return run<L, CV, OWB, OHB, S, 0, Config.threads>(d, input, packed_filter, output);
    }
  };
  conv_detail::with_filter_width<Config.unroll_kw, FixedS>(d.S, run_with_stride);
}

// One call that packs the filter (per call, like depthwise_conv2d()) and convolves.
template <DepthwiseConv2dConfig Config>
void depthwise_conv2d_nchwc(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(depthwise_conv2d_packed_filter_size<Config>(d));
  depthwise_conv2d_pack_filter<Config>(d, filter, buffer);
  depthwise_conv2d_nchwc_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
