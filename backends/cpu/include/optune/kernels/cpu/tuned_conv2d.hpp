// Build-time consumption of tuned conv2d and depthwise conv2d configs: `optune apply-best` writes
// a header with constexpr tables of TunedConv2d / TunedDepthwiseConv2d rows (one per tuned shape,
// and one per leaf of a measured dispatch, holding a box of shapes) and each template's default
// config; an application includes it and calls conv2d_tuned<table, default>(...), which runs the
// config of the first row that holds the shape, instantiated from the same kernel header the
// tuner measured, and the default config for any other shape. These calls pack the filter in every call (conv2d() / depthwise_conv2d()); an
// application that keeps packed weights calls conv2d_pack_filter / conv2d_packed with the
// table's config itself.
//
// Rows tuned on a kept NCHW[b]c layout (layout_block = b) serve conv2d_nchwc_tuned<..., b> and
// depthwise_conv2d_nchwc_tuned<..., b>, whose shapes without such a row run the default config
// moved onto that layout (nchwc_default); rows of a first layer reading NCHW into it
// (nchw_input) serve conv2d_nchw_to_nchwc_tuned<..., b>.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/conv2d_nchwc.hpp"
#include "optune/kernels/cpu/depthwise_conv2d.hpp"
#include "optune/kernels/cpu/depthwise_conv2d_nchwc.hpp"

namespace optune::kernels::cpu {

// A row holds the shape of its dims, or, a leaf of a measured dispatch (optune dispatch), every
// shape from dims to upper (upper.C = 0: dims alone).
inline constexpr Conv2dDims kExactDims{0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

struct TunedConv2d {
  Conv2dDims dims;
  Conv2dConfig config;
  int layout_block = 0;     // 0: NCHW; b: NCHW[b]c kept between layers (the output's, at least)
  bool nchw_input = false;  // NCHW input, NCHW[b]c output: a network's first layer
  Conv2dDims upper = kExactDims;
};

struct TunedDepthwiseConv2d {
  Conv2dDims dims;  // K = C
  DepthwiseConv2dConfig config;
  int layout_block = 0;
  Conv2dDims upper = kExactDims;
};

constexpr bool holds(const Conv2dDims& low, const Conv2dDims& upper, const Conv2dDims& dims) {
  if (upper.C == 0) return low == dims;
  auto within = [](std::int64_t a, std::int64_t value, std::int64_t b) { return a <= value && value <= b; };
  return within(low.N, dims.N, upper.N) && within(low.C, dims.C, upper.C) && within(low.H, dims.H, upper.H) &&
         within(low.W, dims.W, upper.W) && within(low.K, dims.K, upper.K) && within(low.R, dims.R, upper.R) &&
         within(low.S, dims.S, upper.S) && within(low.stride, dims.stride, upper.stride) &&
         within(low.pad, dims.pad, upper.pad) && within(low.dilation, dims.dilation, upper.dilation);
}

namespace tuned_detail {
constexpr bool nchw_input(const TunedConv2d& row) { return row.nchw_input; }
constexpr bool nchw_input(const TunedDepthwiseConv2d&) { return false; }

// Calls run.operator()<config>() for the first row of Table that holds these dims on layout Block
// (0: NCHW; NchwInput: reading NCHW into it) and returns true, or returns false. Rows of other
// layouts are not instantiated: an NCHW row's config (the GEMM path, say) may not suit the
// blocked kernels.
template <const auto& Table, int Block, bool NchwInput = false, typename Run>
bool run_tuned_row(const Conv2dDims& dims, Run&& run) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto one = [&]<std::size_t J>() {
      constexpr auto entry = Table[J];
      if constexpr (entry.layout_block != Block || nchw_input(entry) != NchwInput) {
        return false;
      } else {
        if (!holds(entry.dims, entry.upper, dims)) return false;
        run.template operator()<entry.config>();
        return true;
      }
    };
    return (one.template operator()<I>() || ...);
  }(std::make_index_sequence<Table.size()>{});
}
}  // namespace tuned_detail

// NCHW output = conv2d(NCHW input, OIHW filter). Returns true when a tuned entry ran, false when
// the shape has none and `Fallback` ran.
template <const auto& Table, Conv2dConfig Fallback>
bool conv2d_tuned(const Conv2dDims& dims, const float* input, const float* filter, float* output) {
  const bool tuned = tuned_detail::run_tuned_row<Table, 0>(
      dims, [&]<Conv2dConfig C>() { conv2d<C>(dims, input, filter, output); });
  if (!tuned) conv2d<Fallback>(dims, input, filter, output);
  return tuned;
}

// The NCHW default config moved onto a kept NCHW[Block]c layout: the direct kernel (the one that
// reads the layout), with Block lanes and input-channel blocks, the rest of its schedule kept.
template <Conv2dConfig Default, int Block>
constexpr Conv2dConfig nchwc_default() {
  Conv2dConfig c = Default;
  c.algorithm = ConvAlgorithm::kDirect;
  c.gemm = {};
  c.lanes = Block;
  c.ic_block = Block;
  return c;
}

// NCHW[Block]c output = conv2d(NCHW[Block]c input, OIHW filter): the row of Table tuned on that
// layout for these dims, else nchwc_default<Fallback, Block>. Returns whether a tuned row ran.
template <const auto& Table, Conv2dConfig Fallback, int Block>
bool conv2d_nchwc_tuned(const Conv2dDims& dims, const float* input, const float* filter, float* output) {
  const bool tuned = tuned_detail::run_tuned_row<Table, Block>(
      dims, [&]<Conv2dConfig C>() { conv2d_nchwc<C>(dims, input, filter, output); });
  if (!tuned) conv2d_nchwc<nchwc_default<Fallback, Block>()>(dims, input, filter, output);
  return tuned;
}

// NCHW[Block]c output = conv2d(NCHW input, OIHW filter), a network's first layer: the row of Table
// tuned for that, else nchwc_default<Fallback, Block> with Fallback's input-channel block.
template <const auto& Table, Conv2dConfig Fallback, int Block>
bool conv2d_nchw_to_nchwc_tuned(const Conv2dDims& dims, const float* input, const float* filter, float* output) {
  const bool tuned = tuned_detail::run_tuned_row<Table, Block, true>(
      dims, [&]<Conv2dConfig C>() { conv2d_nchw_to_nchwc<C>(dims, input, filter, output); });
  if (!tuned) {
    constexpr Conv2dConfig moved = [] {
      Conv2dConfig c = nchwc_default<Fallback, Block>();
      c.ic_block = Fallback.algorithm == ConvAlgorithm::kDirect ? Fallback.ic_block : Block;
      return c;
    }();
    conv2d_nchw_to_nchwc<moved>(dims, input, filter, output);
  }
  return tuned;
}

// dims.K must equal dims.C (as in the table's rows).
template <const auto& Table, DepthwiseConv2dConfig Fallback>
bool depthwise_conv2d_tuned(const Conv2dDims& dims, const float* input, const float* filter,
                            float* output) {
  const bool tuned = tuned_detail::run_tuned_row<Table, 0>(
      dims, [&]<DepthwiseConv2dConfig C>() { depthwise_conv2d<C>(dims, input, filter, output); });
  if (!tuned) depthwise_conv2d<Fallback>(dims, input, filter, output);
  return tuned;
}

// The depthwise default moved onto a kept NCHW[Block]c layout: the channel-blocked kernel with
// Block lanes (its tile: one vector of channels, ow_block pixels, the default's rows).
template <DepthwiseConv2dConfig Default, int Block>
constexpr DepthwiseConv2dConfig nchwc_default() {
  DepthwiseConv2dConfig c = Default;
  c.algorithm = DepthwiseAlgorithm::kBlocked;
  c.lanes = Block;
  c.c_vectors = 1;
  c.oh_block = std::min(c.oh_block, 32 / c.ow_block);
  return c;
}

template <const auto& Table, DepthwiseConv2dConfig Fallback, int Block>
bool depthwise_conv2d_nchwc_tuned(const Conv2dDims& dims, const float* input, const float* filter,
                                  float* output) {
  const bool tuned = tuned_detail::run_tuned_row<Table, Block>(
      dims, [&]<DepthwiseConv2dConfig C>() { depthwise_conv2d_nchwc<C>(dims, input, filter, output); });
  if (!tuned) depthwise_conv2d_nchwc<nchwc_default<Fallback, Block>()>(dims, input, filter, output);
  return tuned;
}

}  // namespace optune::kernels::cpu
