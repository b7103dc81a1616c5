// The CPU depthwise conv2d kernel template: float32, NCHW input [N,C,H,W], filter [C,1,R,S],
// NCHW output [N,C,P,Q] (one filter per channel: groups = C), any stride, padding and dilation.
// Each (image, channel) plane is a 2D stencil computed in place in NCHW, with no channel-blocked
// layout: vectors run along the output width (`lanes` output pixels each), a register tile of
// oh_block rows x ow_vectors vectors accumulates all R x S taps (each tap one broadcast weight),
// and full vectors are stored straight into the output rows.
//
// Edges and strides without tests in the inner loop: each thread copies the plane it is about to
// compute into its own zero-padded buffer (the pixels only: the padding is zeroed once per call;
// still in cache when the taps read it), split by column phase for strided layers: padded column x goes to phase x % stride at index
// x / stride. Then the input of output pixels q..q+lanes-1 at any tap is `lanes` consecutive
// floats of one phase, a plain vector load at every stride (stride 2: even and odd columns).
//
// Costs: the padded copy is inside every call and measured. The filter needs no layout;
// depthwise_conv2d_pack_filter copies it (the API of conv2d, for callers that keep packed
// weights), and depthwise_conv2d() takes the OIHW filter as it is.
//
// That is the "rows" algorithm; Config.algorithm = kBlocked runs the channel-blocked kernel of
// depthwise_conv2d_blocked.hpp instead (small planes), behind the same functions. For networks
// that keep activations in NCHW[lanes]c between layers, depthwise_conv2d_nchwc.hpp (which
// includes this header) runs that kernel on the kept layout, with no transform.
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
#include "optune/kernels/cpu/depthwise_conv2d_blocked.hpp"
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

// Stride 2: the even and odd pixels of one image row (`count` of each at least) into two rows,
// a vector pair at a time (two loads, two shuffles, two stores) where a scalar gather would
// dominate the layer's time.
template <int Lanes>
void deinterleave_row(const float* __restrict src, Index even_count, Index odd_count, float* __restrict even,
                      float* __restrict odd) {
  Index k = 0;
  if constexpr (Lanes == 8 || Lanes == 16) {
    using V = Simd<Lanes>;
    using Vector = typename V::Vector;
    const Index vector_count = std::min(even_count, odd_count);
    for (; k + Lanes <= vector_count; k += Lanes) {
      const Vector a = V::load(src + 2 * k), b = V::load(src + 2 * k + Lanes);
      if constexpr (Lanes == 8) {
        V::store(even + k, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
        V::store(odd + k, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15));
      } else {
        V::store(even + k, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
        V::store(odd + k, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
      }
    }
  }
  for (Index i = k; i < even_count; ++i) even[i] = src[2 * i];
  for (Index i = k; i < odd_count; ++i) odd[i] = src[2 * i + 1];
}

// The pixels of channel `image_plane` (H x W) into their places in `dst`. Everything else in
// `dst` (the padding) is the same for every plane: the caller zeroes it once per call.
template <int Lanes>
void copy_into_padded_plane(const Conv2dDims& d, const PaddedPlane& plane, const float* __restrict image_plane,
                            float* __restrict dst) {
  const Index rows = std::min(d.H, plane.rows - d.pad);  // image rows a tile reads
  // Phase p holds image columns w0[p], w0[p] + stride, ... from index i0[p] of its rows.
  Index w0[2] = {0, 0}, i0[2] = {0, 0}, count[2] = {0, 0};
  for (Index phase = 0; phase < plane.phases; ++phase) {
    const Index w = ((phase - d.pad) % d.stride + d.stride) % d.stride;  // (w + pad) % stride == phase
    const Index i = (w + d.pad) / d.stride;
    const Index n = std::min(w < d.W ? (d.W - w + d.stride - 1) / d.stride : 0, plane.row_floats - i);
    float* __restrict phase_dst = dst + phase * plane.phase_floats() + d.pad * plane.row_floats + i;
    if (d.stride == 2) {  // both phases in one pass below
      w0[w] = w;
      i0[w] = phase * plane.phase_floats() + d.pad * plane.row_floats + i;
      count[w] = n;
      continue;
    }
    for (Index h = 0; h < rows; ++h) {
      const float* __restrict src = image_plane + h * d.W + w;
      float* __restrict row = phase_dst + h * plane.row_floats;
      if (d.stride == 1) {
        for (Index k = 0; k < n; ++k) row[k] = src[k];
      } else {
        for (Index k = 0; k < n; ++k) row[k] = src[k * d.stride];
      }
    }
  }
  if (d.stride != 2) return;
  for (Index h = 0; h < rows; ++h) {
    deinterleave_row<Lanes>(image_plane + h * d.W, count[0], count[1], dst + i0[0] + h * plane.row_floats,
                            dst + i0[1] + h * plane.row_floats);
  }
}

// One register tile: OHB output rows x OWV vectors of output pixels, all R x S taps. `in` points
// at the tile's first input row and output column (phase 0), `taps` at the channel's R x S taps;
// tap column s reads at in + tap_columns[s] (its phase's offset plus its index in the phase).
template <int Lanes, int OWV, int OHB, int FixedS>
[[gnu::always_inline]] inline void depthwise_tile(const float* __restrict in, const float* __restrict taps, const Index* __restrict tap_columns,
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
  for (Index h = 0; h < rows; ++h) {
    for (Index j = 0; j < cols; ++j) out[h * out_row_floats + j] = tile[h][j];
  }
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
  // Dynamic shares (a descheduled thread on a shared machine does not hold up the team), in
  // chunks of several planes where planes are many and small.
  const Index chunk = std::max<Index>(1, planes / (16 * Config.threads));
#pragma omp parallel num_threads(Config.threads)
  {
    thread_local AlignedBuffer buffer;  // this thread's padded copy of one plane
    float* padded = buffer.reserve(static_cast<std::size_t>(plane.floats()));
    std::fill_n(padded, plane.floats(), 0.0f);  // the padding, once for all the thread's planes
#pragma omp for schedule(dynamic, chunk)
    for (Index item = 0; item < planes; ++item) {
      copy_into_padded_plane<L>(d, plane, input + item * d.H * d.W, padded);
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
}

}  // namespace depthwise_detail

// Floats of the packed filter: the taps as they are, [C][R][S] (kBlocked: channel blocks).
template <DepthwiseConv2dConfig Config>
std::size_t depthwise_conv2d_packed_filter_size(const Conv2dDims& d) {
  if constexpr (Config.algorithm == DepthwiseAlgorithm::kBlocked) {
    return depthwise_blocked_packed_filter_size(d, Config.c_vectors * Config.lanes);
  }
  return static_cast<std::size_t>(d.C * d.R * d.S);
}

template <DepthwiseConv2dConfig Config>
void depthwise_conv2d_pack_filter(const Conv2dDims& d, const float* __restrict filter, float* __restrict packed) {
  if constexpr (Config.algorithm == DepthwiseAlgorithm::kBlocked) {
    return depthwise_blocked_pack_filter(d, Config.c_vectors * Config.lanes, filter, packed);
  }
  std::copy_n(filter, depthwise_conv2d_packed_filter_size<Config>(d), packed);
}

namespace depthwise_detail {
// The config's algorithm with the filter width FixedS (0: at run time).
template <DepthwiseConv2dConfig Config, int FixedS>
void run_algorithm(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  if constexpr (Config.algorithm == DepthwiseAlgorithm::kBlocked) {
    depthwise_blocked_detail::depthwise_blocked_run<Config.lanes, Config.c_vectors, Config.ow_block, Config.oh_block,
                                                    FixedS, Config.threads>(d, input, packed_filter, output);
  } else {
    depthwise_run<Config, FixedS>(d, input, packed_filter, output);
  }
}
}  // namespace depthwise_detail

// FixedS as in conv2d_packed: the filter width when known at compile time, -1 for run time.
template <DepthwiseConv2dConfig Config, int FixedS = -1>
void depthwise_conv2d_packed(const Conv2dDims& d, const float* input, const float* packed_filter,
                             float* output) {
  static_assert(depthwise_conv2d_config_error(Config) == nullptr, "invalid DepthwiseConv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "DepthwiseConv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  using depthwise_detail::run_algorithm;
  conv_detail::with_filter_width<Config.unroll_kw, FixedS>(
      d.S, [&]<int S>() { run_algorithm<Config, S>(d, input, packed_filter, output); });
}

// One call that packs the filter where the algorithm needs it (kBlocked) and convolves.
template <DepthwiseConv2dConfig Config>
void depthwise_conv2d(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  if constexpr (Config.algorithm == DepthwiseAlgorithm::kRows) {
    return depthwise_conv2d_packed<Config>(d, input, filter, output);
  }
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(depthwise_conv2d_packed_filter_size<Config>(d));
  depthwise_conv2d_pack_filter<Config>(d, filter, buffer);
  depthwise_conv2d_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
