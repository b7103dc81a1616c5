// The CPU depthwise conv2d kernel template: float32, NCHW input [N,C,H,W], filter [C,1,R,S],
// NCHW output [N,C,P,Q] (one filter per channel: groups = C), any stride, padding and dilation.
// Each (image, channel) plane is a 2D stencil computed in place in NCHW, with no channel-blocked
// layout: vectors run along the output width (`lanes` output pixels each), a register tile of
// oh_block rows x ow_vectors vectors accumulates all R x S taps (each tap one broadcast weight),
// and full vectors are stored straight into the output rows.
//
// Edges and strides without tests in the inner loop: each thread copies the plane it is about to
// compute into its own zero-padded buffer (a row copy, still in cache when the taps read it),
// split by column phase for strided layers: padded column x goes to phase x % stride at index
// x / stride. Then the input of output pixels q..q+lanes-1 at any tap is `lanes` consecutive
// floats of one phase, a plain vector load at every stride (stride 2: even and odd columns).
//
// Costs: the padded copy is inside every call and measured. The filter needs no layout;
// depthwise_conv2d_pack_filter copies it (the API of conv2d, for callers that keep packed
// weights), and depthwise_conv2d() takes the OIHW filter as it is.
//
//   depthwise_conv2d_pack_filter<DepthwiseConv2dConfig{...}>(dims, filter, packed);
//   depthwise_conv2d_packed<DepthwiseConv2dConfig{...}>(dims, input, packed, output);
// dims.K is ignored (the output has C channels). Compile with -O3 -march=<target> -fopenmp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace depthwise_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }
inline Index round_up(Index a, Index b) { return ceil_div(a, b) * b; }

// The padded, phase-split copy of one plane: [stride phases][rows][row_floats]. It covers every
// input pixel a full register tile reads, so tiles at the bottom and right edges run the same
// code and only their stores are clipped.
struct PaddedPlane {
  Index rows = 0, row_floats = 0, phases = 1;
  Index phase_floats() const { return rows * row_floats; }
  Index floats() const { return phases * phase_floats(); }
};

inline PaddedPlane padded_plane(const Conv2dDims& d, Index tile_rows, Index tile_cols) {
  const Index P = d.out_h(), Q = d.out_w();
  PaddedPlane plane;
  plane.phases = d.stride;
  plane.rows = (round_up(P, tile_rows) - 1) * d.stride + (d.R - 1) * d.dilation + 1;
  // Within one phase, output column q at tap s reads index q + (s * dilation) / stride.
  plane.row_floats = round_up(round_up(Q, tile_cols) + (d.S - 1) * d.dilation / d.stride, 16);
  return plane;
}

// Channel `image_plane` (H x W) into `dst`, zero outside the image.
inline void fill_padded_plane(const Conv2dDims& d, const PaddedPlane& plane, const float* __restrict image_plane,
                              float* __restrict dst) {
  for (Index y = 0; y < plane.rows; ++y) {
    const Index h = y - d.pad;
    const bool inside = h >= 0 && h < d.H;
    const float* __restrict src = inside ? image_plane + h * d.W : image_plane;
    for (Index phase = 0; phase < plane.phases; ++phase) {
      float* __restrict row = dst + phase * plane.phase_floats() + y * plane.row_floats;
      if (!inside) {
        std::fill_n(row, plane.row_floats, 0.0f);
        continue;
      }
      if (d.stride == 1) {
        const Index left = std::min(d.pad, plane.row_floats);
        const Index copied = std::max<Index>(0, std::min(d.W, plane.row_floats - left));
        std::fill_n(row, left, 0.0f);
        std::copy_n(src, copied, row + left);
        std::fill_n(row + left + copied, plane.row_floats - left - copied, 0.0f);
        continue;
      }
      for (Index i = 0; i < plane.row_floats; ++i) {
        const Index w = i * d.stride + phase - d.pad;
        row[i] = w >= 0 && w < d.W ? src[w] : 0.0f;
      }
    }
  }
}

// One register tile: OHB output rows x OWV vectors of output pixels, all R x S taps. `in` points
// at the tile's first input row and output column (phase 0), `taps` at the channel's R x S taps;
// tap column s reads at in + tap_columns[s] (its phase's offset plus its index in the phase).
template <int Lanes, int OWV, int OHB, int FixedS>
void depthwise_tile(const float* __restrict in, const float* __restrict taps, const Index* __restrict tap_columns,
                    Index R, Index S_runtime, Index row_step, Index tap_row_step, float* __restrict out,
                    Index out_row_floats, Index rows, Index cols) {
  using V = Simd<Lanes>;
  using Vector = typename V::Vector;
  Vector acc[OHB][OWV];
#pragma GCC unroll 8
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 8
    for (int j = 0; j < OWV; ++j) acc[h][j] = Vector{};
  }
  const Index S = FixedS > 0 ? FixedS : S_runtime;
  for (Index r = 0; r < R; ++r) {
    const float* row = in + r * tap_row_step;
#pragma GCC unroll 8
    for (Index s = 0; s < S; ++s) {
      const Vector weight = V::broadcast(taps + r * S + s);
      const float* x = row + tap_columns[s];
#pragma GCC unroll 8
      for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 8
        for (int j = 0; j < OWV; ++j) acc[h][j] = V::fma(V::load(x + h * row_step + j * Lanes), weight, acc[h][j]);
      }
    }
  }
  // Full tiles store straight into the output rows; edge tiles only their valid part.
  if (rows == OHB && cols == OWV * Lanes) {
#pragma GCC unroll 8
    for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 8
      for (int j = 0; j < OWV; ++j) V::store(out + h * out_row_floats + j * Lanes, acc[h][j]);
    }
    return;
  }
  alignas(64) float tile[OHB][OWV * Lanes];
#pragma GCC unroll 8
  for (int h = 0; h < OHB; ++h) {
#pragma GCC unroll 8
    for (int j = 0; j < OWV; ++j) V::store(&tile[h][j * Lanes], acc[h][j]);
  }
  for (Index h = 0; h < rows; ++h) std::copy_n(tile[h], cols, out + h * out_row_floats);
}

template <DepthwiseConv2dConfig Config, int FixedS>
void depthwise_run(const Conv2dDims& d, const float* input, const float* taps, float* output) {
  constexpr int L = Config.lanes, OWV = Config.ow_vectors, OHB = Config.oh_block;
  const Index P = d.out_h(), Q = d.out_w();
  const PaddedPlane plane = padded_plane(d, OHB, OWV * L);
  std::vector<Index> tap_columns(static_cast<std::size_t>(d.S));
  for (Index s = 0; s < d.S; ++s) {
    tap_columns[s] = (s * d.dilation) % d.stride * plane.phase_floats() + s * d.dilation / d.stride;
  }
  const Index planes = d.N * d.C;
#pragma omp parallel for num_threads(Config.threads) schedule(dynamic, 1)
  for (Index item = 0; item < planes; ++item) {
    thread_local AlignedBuffer buffer;  // this thread's padded copy of one plane
    float* padded = buffer.reserve(static_cast<std::size_t>(plane.floats()));
    fill_padded_plane(d, plane, input + item * d.H * d.W, padded);
    const float* channel_taps = taps + item % d.C * d.R * d.S;
    float* out_plane = output + item * P * Q;
    for (Index oh = 0; oh < P; oh += OHB) {
      const float* band = padded + oh * d.stride * plane.row_floats;
      for (Index ow = 0; ow < Q; ow += OWV * L) {
        depthwise_tile<L, OWV, OHB, FixedS>(band + ow, channel_taps, tap_columns.data(), d.R, d.S,
                                            d.stride * plane.row_floats, d.dilation * plane.row_floats,
                                            out_plane + oh * Q + ow, Q, std::min<Index>(OHB, P - oh),
                                            std::min<Index>(OWV * L, Q - ow));
      }
    }
  }
}

}  // namespace depthwise_detail

// Floats of the packed filter: the taps as they are, [C][R][S].
template <DepthwiseConv2dConfig Config>
std::size_t depthwise_conv2d_packed_filter_size(const Conv2dDims& d) {
  return static_cast<std::size_t>(d.C * d.R * d.S);
}

template <DepthwiseConv2dConfig Config>
void depthwise_conv2d_pack_filter(const Conv2dDims& d, const float* __restrict filter, float* __restrict packed) {
  std::copy_n(filter, depthwise_conv2d_packed_filter_size<Config>(d), packed);
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

// The filter needs no packing: one call on the OIHW filter as it is.
template <DepthwiseConv2dConfig Config>
void depthwise_conv2d(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  depthwise_conv2d_packed<Config>(d, input, filter, output);
}

}  // namespace optune::kernels::cpu
