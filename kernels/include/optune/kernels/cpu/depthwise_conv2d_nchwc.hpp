// Depthwise conv2d on the kept activation layout NCHW[lanes]c (layout.hpp): input
// [N][ceil(C/lanes)][H][W][lanes], output [N][ceil(C/lanes)][P][Q][lanes], for networks that keep
// that layout between layers (as oneDNN's nChw8c and TVM's NCHWc do), so no call pays for a
// transform. The compute is the channel-blocked kernel's (depthwise_conv2d_blocked.hpp): a
// register tile of oh_block x ow_block pixels times c_vectors channel vectors accumulates all
// R x S taps, one vector load of input and one FMA per tap; here the c_vectors vectors of a
// channel group are c_vectors layout blocks, each its own plane in memory.
//
// Reads and writes in place. The layers are memory-bound, so the input is not copied: a tile whose
// input window lies inside the image reads the image itself. Only tiles at the padded borders
// (and in a last channel group with fewer than c_vectors blocks) copy their window, zero outside
// the image, into a small per-thread scratch that stays in L1. Full output tiles are stored as
// vectors straight into the output; edge tiles through a local tile clipped to the output.
//
// Output channels past C come out zero: the packed filter's weights are zero there, so any finite
// values in the input's padding channels are multiplied by zero.
//
// Threads split (image, channel group) items and, where those are fewer than four per thread
// (few channels, large planes: MobileNet's first layers), bands of output rows as well.
//
//   depthwise_blocked_pack_filter(dims, c_vectors * lanes, filter, packed);  // once per weights
//   depthwise_conv2d_nchwc_packed<DepthwiseConv2dConfig{...}>(dims, input, packed, output);
// Config.algorithm must be kBlocked; dims.K is ignored. Compile with -O3 -march=<target> -fopenmp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/depthwise_conv2d_blocked.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace depthwise_nchwc_detail {

using conv_detail::ceil_div;
using conv_detail::Index;
using depthwise_blocked_detail::PixelSteps;

// The input a tile of OHB x OWB output pixels reads: rows x cols pixels from (y0, x0), in image
// coordinates (negative in the padding).
struct Window {
  Index y0 = 0, x0 = 0, rows = 0, cols = 0;
  bool inside(const Conv2dDims& d) const { return y0 >= 0 && x0 >= 0 && y0 + rows <= d.H && x0 + cols <= d.W; }
};

// Vectors [0, present) of a channel group's window into scratch [CV][rows][cols][L], zero where
// the window leaves the image; the group's other vectors (blocks past the last) all zero.
template <int L, int CV>
void copy_window(const Conv2dDims& d, const float* __restrict group, Index present, const Window& win,
                 float* __restrict scratch) {
  const Index plane = d.H * d.W * L, row_floats = win.cols * L;
  const Index x_begin = std::clamp<Index>(-win.x0, 0, win.cols), x_end = std::clamp<Index>(d.W - win.x0, x_begin, win.cols);
  for (Index v = 0; v < CV; ++v) {
    for (Index i = 0; i < win.rows; ++i) {
      float* __restrict dst = scratch + (v * win.rows + i) * row_floats;
      const Index y = win.y0 + i;
      if (v >= present || y < 0 || y >= d.H) {
        std::fill_n(dst, row_floats, 0.0f);
        continue;
      }
      std::fill_n(dst, x_begin * L, 0.0f);
      std::copy_n(group + v * plane + (y * d.W + win.x0 + x_begin) * L, (x_end - x_begin) * L, dst + x_begin * L);
      std::fill_n(dst + x_end * L, (win.cols - x_end) * L, 0.0f);
    }
  }
}

// The output rows [oh_begin, oh_end) of channel group g of image n.
template <int L, int CV, int OWB, int OHB, int FixedS>
void run_band(const Conv2dDims& d, const float* input, const float* packed_filter, float* output, Index n, Index g,
              Index oh_begin, Index oh_end, float* scratch) {
  constexpr int CB = CV * L;
  const Index P = d.out_h(), Q = d.out_w(), blocks = ceil_div(d.C, L);
  const Index present = std::min<Index>(CV, blocks - g * CV);  // layout blocks of this group in memory
  const float* group_in = input + (n * blocks + g * CV) * d.H * d.W * L;
  float* group_out = output + (n * blocks + g * CV) * P * Q * L;
  const float* taps = packed_filter + g * d.R * d.S * CB;
  const PixelSteps image_steps{L, d.W * L, d.H * d.W * L}, out_steps{L, Q * L, P * Q * L};
  const PixelSteps tile_steps{L, OWB * L, OHB * OWB * L};
  alignas(64) float tile[CV * OHB * OWB * L];  // [CV][OHB][OWB][L]: edge tiles before clipping
  Window win;
  win.rows = (OHB - 1) * d.stride + (d.R - 1) * d.dilation + 1;
  win.cols = (OWB - 1) * d.stride + (d.S - 1) * d.dilation + 1;
  const PixelSteps window_steps{L, win.cols * L, win.rows * win.cols * L};
  for (Index oh = oh_begin; oh < oh_end; oh += OHB) {
    win.y0 = oh * d.stride - d.pad;
    const Index rows = std::min<Index>(OHB, P - oh);
    for (Index ow = 0; ow < Q; ow += OWB) {
      win.x0 = ow * d.stride - d.pad;
      const Index cols = std::min<Index>(OWB, Q - ow);
      const bool full = rows == OHB && cols == OWB && present == CV;
      float* out = group_out + (oh * Q + ow) * L;
      const float* in = group_in + (win.y0 * d.W + win.x0) * L;
      PixelSteps in_steps = image_steps;
      if (present < CV || !win.inside(d)) {
        copy_window<L, CV>(d, group_in, present, win, scratch);
        in = scratch;
        in_steps = window_steps;
      }
      if (full) {
        depthwise_blocked_detail::depthwise_blocked_tile<L, CV, OWB, OHB, FixedS>(
            in, in_steps, taps, d.R, d.S, d.stride, d.dilation, out, out_steps);
        continue;
      }
      depthwise_blocked_detail::depthwise_blocked_tile<L, CV, OWB, OHB, FixedS>(
          in, in_steps, taps, d.R, d.S, d.stride, d.dilation, tile, tile_steps);
      for (Index v = 0; v < present; ++v) {
        for (Index h = 0; h < rows; ++h) {
          std::copy_n(tile + (v * OHB + h) * OWB * L, cols * L, out + v * out_steps.vector + h * out_steps.row);
        }
      }
    }
  }
}

template <int L, int CV, int OWB, int OHB, int FixedS, int Threads>
void run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  const Index P = d.out_h(), groups = ceil_div(ceil_div(d.C, L), CV), planes = d.N * groups;
  // At least four items per thread where the planes allow it, so a thread the OS deschedules
  // on a shared machine does not hold up the team (dynamic shares).
  const Index row_tiles = ceil_div(P, OHB);
  const Index bands = Threads == 1 ? 1 : std::clamp<Index>(ceil_div(4 * Threads, planes), 1, row_tiles);
  const Index band_rows = ceil_div(row_tiles, bands) * OHB;
  const Index scratch_floats = CV * ((OHB - 1) * d.stride + (d.R - 1) * d.dilation + 1) *
                               ((OWB - 1) * d.stride + (d.S - 1) * d.dilation + 1) * L;
#pragma omp parallel for num_threads(Threads) schedule(dynamic, 1)
  for (Index item = 0; item < planes * bands; ++item) {
    thread_local AlignedBuffer window_buffer;  // this thread's copy of one edge tile's input
    float* scratch = window_buffer.reserve(static_cast<std::size_t>(scratch_floats));
    const Index plane = item / bands, band = item % bands;
    const Index oh_begin = band * band_rows;
    if (oh_begin >= P) continue;
    run_band<L, CV, OWB, OHB, FixedS>(d, input, packed_filter, output, plane / groups, plane % groups, oh_begin,
                                      std::min(P, oh_begin + band_rows), scratch);
  }
}

}  // namespace depthwise_nchwc_detail

// input [N][ceil(C/B)][H][W][B], output [N][ceil(C/B)][P][Q][B], B = Config.lanes (the layout
// block); packed_filter from depthwise_blocked_pack_filter(d, c_vectors * lanes, ...). FixedS as
// in depthwise_conv2d_packed: the filter width when known at compile time, -1 for run time.
template <DepthwiseConv2dConfig Config, int FixedS = -1>
void depthwise_conv2d_nchwc_packed(const Conv2dDims& d, const float* input, const float* packed_filter,
                                   float* output) {
  static_assert(depthwise_conv2d_config_error(Config) == nullptr, "invalid DepthwiseConv2dConfig");
  static_assert(Config.algorithm == DepthwiseAlgorithm::kBlocked,
                "depthwise_conv2d_nchwc needs algorithm = kBlocked: vectors along channels, as the layout holds them");
  static_assert(Config.lanes <= kMaxLanes,
                "DepthwiseConv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  constexpr int L = Config.lanes, CV = Config.c_vectors, OWB = Config.ow_block, OHB = Config.oh_block;
  if constexpr (FixedS >= 0) {
    depthwise_nchwc_detail::run<L, CV, OWB, OHB, FixedS, Config.threads>(d, input, packed_filter, output);
  } else {
    depthwise_blocked_detail::with_filter_width<Config.unroll_kw>(d.S, [&]<int S>() {
      depthwise_nchwc_detail::run<L, CV, OWB, OHB, S, Config.threads>(d, input, packed_filter, output);
    });
  }
}

// One call that packs the filter (per call, like depthwise_conv2d()) and convolves.
template <DepthwiseConv2dConfig Config>
void depthwise_conv2d_nchwc(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  constexpr std::int64_t channel_block = Config.c_vectors * Config.lanes;
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(depthwise_blocked_packed_filter_size(d, channel_block));
  depthwise_blocked_pack_filter(d, channel_block, filter, buffer);
  depthwise_conv2d_nchwc_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
