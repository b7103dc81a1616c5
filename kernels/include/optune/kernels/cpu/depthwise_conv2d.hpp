// The CPU depthwise conv2d kernel template: float32, NCHW input [N,C,H,W], filter [C,1,R,S],
// NCHW output [N,C,P,Q] (one filter per channel: groups = C), any stride, padding and dilation.
// Like TVM's x86 depthwise_conv2d_NCHWc: channels are processed in blocks of c_vectors * lanes,
// in the zero-padded blocked layout NCHW[c]c, with vectors along channels, so every tap is one
// vector load of input, one of filter and one FMA, with no bounds test; a register tile of
// (oh_block x ow_block) pixels accumulates all R x S taps before it is written, transposed, into
// the NCHW output.
//
// Costs: the input layout transform runs inside every call and is measured. Each thread copies
// the channel block it is about to compute into its own buffer (transform fused with compute,
// so the block is still in cache when the taps read it). The filter is packed apart
// (depthwise_conv2d_pack_filter), once per set of weights; depthwise_conv2d() packs every call.
//
//   depthwise_conv2d_pack_filter<DepthwiseConv2dConfig{...}>(dims, filter, packed);
//   depthwise_conv2d_packed<DepthwiseConv2dConfig{...}>(dims, input, packed, output);
// dims.K is ignored (the output has C channels). Compile with -O3 -march=<target> -fopenmp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace depthwise_detail {

using conv_detail::BlockedImage;
using conv_detail::ceil_div;
using conv_detail::Index;

// One register tile of OHB x OWB pixels times CV * Lanes channels over all R x S taps. `in`
// points at the tile's first input pixel in the channel block's blocked plane, `w` at the block's
// packed taps ([R][S][CB]); the tile is written pixel-major ([OHB][OWB][CB]).
template <int Lanes, int CV, int OWB, int OHB, int FixedS>
void depthwise_tile(const float* __restrict in, const float* __restrict w, Index R, Index S_runtime,
                    Index stride, Index dilation, Index row_floats, float* __restrict tile) {
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
  const Index col_step = stride * CB, row_step = stride * row_floats;
  for (Index r = 0; r < R; ++r) {
    const float* row = in + r * dilation * row_floats;
#pragma GCC unroll 8
    for (Index s = 0; s < S; ++s) {
      const float* x = row + s * dilation * CB;
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
#pragma GCC unroll 4
          for (int v = 0; v < CV; ++v) {
            const Vector pixel = V::load(x + h * row_step + j * col_step + v * Lanes);
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
      for (int v = 0; v < CV; ++v) V::store(tile + ((h * OWB + j) * CV + v) * Lanes, acc[h][j][v]);
    }
  }
}

template <DepthwiseConv2dConfig Config, int FixedS>
void depthwise_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, CV = Config.c_vectors, CB = CV * L;
  constexpr int OWB = Config.ow_block, OHB = Config.oh_block;
  const Index P = d.out_h(), Q = d.out_w();
  const BlockedImage b = conv_detail::blocked_image(d, CB, OHB, OWB);
  // The output store is NCHW with C channels; store_tile reads the channel count from K.
  Conv2dDims out_dims = d;
  out_dims.K = d.C;
  const Index items = d.N * b.channel_blocks;
  const Index row_tiles = ceil_div(P, OHB), col_tiles = ceil_div(Q, OWB);
#pragma omp parallel for num_threads(Config.threads) schedule(dynamic, 1)
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
    alignas(64) float tile[OHB * OWB * CB];
    for (Index rt = 0; rt < row_tiles; ++rt) {
      const float* band = plane + rt * OHB * d.stride * b.row_floats();
      for (Index ct = 0; ct < col_tiles; ++ct) {
        depthwise_tile<L, CV, OWB, OHB, FixedS>(band + ct * OWB * d.stride * CB, taps, d.R, d.S,
                                                d.stride, d.dilation, b.row_floats(), tile);
        conv_detail::store_tile<CB, OWB, OHB>(tile, out_dims, cb * CB, rt * OHB, ct * OWB, out_image);
      }
    }
  }
}

}  // namespace depthwise_detail

// Floats of the packed filter: [ceil(C/cb)][R][S][cb], zero-padded.
template <DepthwiseConv2dConfig Config>
std::size_t depthwise_conv2d_packed_filter_size(const Conv2dDims& d) {
  return static_cast<std::size_t>(conv_detail::round_up(d.C, Config.c_vectors * Config.lanes) * d.R * d.S);
}

template <DepthwiseConv2dConfig Config>
void depthwise_conv2d_pack_filter(const Conv2dDims& d, const float* __restrict filter,
                                  float* __restrict packed) {
  using conv_detail::Index;
  constexpr Index CB = Config.c_vectors * Config.lanes;
  const Index blocks = conv_detail::ceil_div(d.C, CB);
  for (Index cb = 0; cb < blocks; ++cb) {
    for (Index t = 0; t < d.R * d.S; ++t) {
      for (Index c = 0; c < CB; ++c) {
        const Index channel = cb * CB + c;
        *packed++ = channel < d.C ? filter[channel * d.R * d.S + t] : 0.0f;
      }
    }
  }
}

// FixedS as in conv2d_packed: the filter width when known at compile time, -1 for run time.
template <DepthwiseConv2dConfig Config, int FixedS = -1>
void depthwise_conv2d_packed(const Conv2dDims& d, const float* input, const float* packed_filter,
                             float* output) {
  static_assert(depthwise_conv2d_config_error(Config) == nullptr, "invalid DepthwiseConv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "DepthwiseConv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  using depthwise_detail::depthwise_run;
  if constexpr (FixedS >= 0) {
    return depthwise_run<Config, FixedS>(d, input, packed_filter, output);
  } else {
    switch (Config.unroll_kw ? d.S : 0) {
      case 1: return depthwise_run<Config, 1>(d, input, packed_filter, output);
      case 3: return depthwise_run<Config, 3>(d, input, packed_filter, output);
      case 5: return depthwise_run<Config, 5>(d, input, packed_filter, output);
      case 7: return depthwise_run<Config, 7>(d, input, packed_filter, output);
      default: return depthwise_run<Config, 0>(d, input, packed_filter, output);
    }
  }
}

template <DepthwiseConv2dConfig Config>
void depthwise_conv2d(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(depthwise_conv2d_packed_filter_size<Config>(d));
  depthwise_conv2d_pack_filter<Config>(d, filter, buffer);
  depthwise_conv2d_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
