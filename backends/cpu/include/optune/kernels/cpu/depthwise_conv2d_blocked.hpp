// The channel-blocked algorithm of the depthwise conv2d kernel (DepthwiseConv2dConfig::algorithm =
// kBlocked), for layers with small planes (7x7, 14x14 outputs), where vectors along the output
// width would be mostly edge: like TVM's x86 depthwise_conv2d_NCHWc, channels are processed in
// blocks of c_vectors * lanes in the zero-padded blocked layout NCHW[c]c, with vectors along
// channels, so every tap is one vector load of input, one of filter and one FMA, with no bounds
// test; a register tile of (oh_block x ow_block) pixels accumulates all R x S taps before it is
// written, transposed, into the NCHW output. Each thread copies the channel block it is about to
// compute into its own buffer (the layout transform fused with the compute, measured in every
// call). The filter is packed to [C/cb][R][S][cb], once per set of weights.
//
// Called through depthwise_conv2d.hpp, which dispatches on the config's algorithm.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace depthwise_blocked_detail {

using conv_detail::BlockedImage;
using conv_detail::ceil_div;
using conv_detail::Index;

// Where the rows and channel vectors of a blocked image are, in floats: between rows and between
// the channel vectors of one pixel. The kernel's own padded copy (NCHW[cb]c) interleaves the
// vectors of a pixel {width * cb, lanes}; the kept layout NCHW[lanes]c holds each vector in its
// own plane {W * lanes, H * W * lanes}. The floats between neighbouring pixels of a row (cb or
// lanes) are the tile's template argument Pixel.
struct PixelSteps {
  Index row = 0, vector = 0;
};

// One register tile of OHB x OWB pixels times CV * Lanes channels over all R x S taps. `in`
// points at the input pixel of the tile's first tap, `w` at the channel block's packed taps
// ([R][S][CB]); the whole tile is stored at `out`, with out_steps between its rows and vectors
// (callers clip edge tiles). Inlined into the callers' tile loops, where the strides' arithmetic
// is hoisted out of the loops (measured 15% faster on a 7x7 layer than a call per tile).
// Pixel and FixedStride (> 0) as constants make the pixels' offsets immediates of the loads:
// with run-time steps GCC keeps one index register per tile column, and spills them on wide
// tiles (measured 5-30% slower on MobileNet's layers, the most with 12-pixel tiles).
// SkipLeft, SkipRight > 0 (with FixedS and FixedStride, dilation 1): the window's first SkipLeft
// (last SkipRight) columns lie in the padding and are never read; the taps that would read them
// are left out at compile time, so a tile at the left or right edge reads the image in place
// instead of a zero-padded copy.
template <int Lanes, int CV, int OWB, int OHB, int FixedS, int Pixel, int FixedStride = 0, int SkipLeft = 0,
          int SkipRight = 0>
[[gnu::always_inline]] inline void depthwise_blocked_tile(const float* __restrict in, const PixelSteps& in_steps,
                                                          const float* __restrict w, Index R, Index S_runtime,
                                                          Index stride_runtime, Index dilation,
                                                          float* __restrict out, const PixelSteps& out_steps) {
  using V = Simd<Lanes>;
  using Vector = typename V::Vector;
  constexpr int CB = CV * Lanes;
  Vector acc[OHB][OWB][CV];
#pragma GCC unroll 32
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
    for (int j = 0; j < OWB; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) acc[h][j][v] = Vector{};
    }
  }
  const Index S = FixedS > 0 ? FixedS : S_runtime;
  const Index stride = FixedStride > 0 ? FixedStride : stride_runtime;
  const Index col_step = stride * Pixel, row_step = stride * in_steps.row, vector_step = in_steps.vector;
  for (Index r = 0; r < R; ++r) {
    const float* row = in + r * dilation * in_steps.row;
#pragma GCC unroll 8
    for (Index s = 0; s < S; ++s) {
      const float* x = row + s * dilation * Pixel;
      Vector weights[CV];
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) {
        weights[v] = V::load(w + (r * S + s) * CB + v * Lanes);
        V::keep_in_register(weights[v]);
      }
#pragma GCC unroll 32
      for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
        for (int j = 0; j < OWB; ++j) {
          if constexpr (SkipLeft > 0 || SkipRight > 0) {
            static_assert(FixedS > 0 && FixedStride > 0, "SkipLeft/Right need a constant filter width and stride");
            constexpr Index kWindowCols = (OWB - 1) * FixedStride + FixedS;
            const Index column = j * FixedStride + s;  // in the window
            if (column < SkipLeft || column >= kWindowCols - SkipRight) continue;  // a column of the padding
          }
#pragma GCC unroll 4
          for (int v = 0; v < CV; ++v) {
            const Vector pixel = V::load(x + h * row_step + j * col_step + v * vector_step);
            acc[h][j][v] = V::fma(pixel, weights[v], acc[h][j][v]);
          }
        }
      }
    }
  }
#pragma GCC unroll 32
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 32
    for (int j = 0; j < OWB; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) {
        V::store(out + h * out_steps.row + j * Pixel + v * out_steps.vector, acc[h][j][v]);
      }
    }
  }
}

template <int L, int CV, int OWB, int OHB, int FixedS, int Threads>
void depthwise_blocked_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int CB = CV * L;
  const Index P = d.out_h(), Q = d.out_w();
  const BlockedImage b = conv_detail::blocked_image(d, CB, OHB, OWB);
  // The output store is NCHW with C channels; store_tile reads the channel count from K.
  Conv2dDims out_dims = d;
  out_dims.K = d.C;
  const Index items = d.N * b.channel_blocks;
  const Index row_tiles = ceil_div(P, OHB), col_tiles = ceil_div(Q, OWB);
#pragma omp parallel for num_threads(Threads) schedule(dynamic, 1)
  for (Index item = 0; item < items; ++item) {
    thread_local AlignedBuffer plane_buffer;  // this thread's copy of one blocked channel block
    float* plane = plane_buffer.reserve(static_cast<std::size_t>(b.plane_floats()));
    const Index n = item / b.channel_blocks, cb = item % b.channel_blocks;
    const float* image = input + n * d.C * d.H * d.W;
    for (Index hp = 0; hp < b.height; ++hp) {
      conv_detail::fill_blocked_row<CB>(d, b, image, cb, hp, plane + hp * b.row_floats());
    }
    const float* taps = packed_filter + cb * d.R * d.S * CB;
    float* out_image = output + n * d.C * P * Q;
    const PixelSteps plane_steps{b.row_floats(), L}, tile_steps{OWB * CB, L};
    alignas(64) float tile[OHB * OWB * CB];  // pixel-major, as store_tile reads it
    for (Index rt = 0; rt < row_tiles; ++rt) {
      const float* band = plane + rt * OHB * d.stride * b.row_floats();
      for (Index ct = 0; ct < col_tiles; ++ct) {
        depthwise_blocked_tile<L, CV, OWB, OHB, FixedS, CB>(band + ct * OWB * d.stride * CB, plane_steps, taps, d.R,
                                                        d.S, d.stride, d.dilation, tile, tile_steps);
        conv_detail::store_tile<CB, OWB, OHB>(tile, out_dims, cb * CB, rt * OHB, ct * OWB, out_image);
      }
    }
  }
}

}  // namespace depthwise_blocked_detail

// Floats of the packed filter: [ceil(C/cb)][R][S][cb], zero-padded (cb = channel block).
inline std::size_t depthwise_blocked_packed_filter_size(const Conv2dDims& d, std::int64_t channel_block) {
  return static_cast<std::size_t>(conv_detail::round_up(d.C, channel_block) * d.R * d.S);
}

inline void depthwise_blocked_pack_filter(const Conv2dDims& d, std::int64_t channel_block,
                                          const float* __restrict filter, float* __restrict packed) {
  using conv_detail::Index;
  const Index blocks = conv_detail::ceil_div(d.C, channel_block);
  for (Index cb = 0; cb < blocks; ++cb) {
    for (Index t = 0; t < d.R * d.S; ++t) {
      for (Index c = 0; c < channel_block; ++c) {
        const Index channel = cb * channel_block + c;
        *packed++ = channel < d.C ? filter[channel * d.R * d.S + t] : 0.0f;
      }
    }
  }
}

}  // namespace optune::kernels::cpu
