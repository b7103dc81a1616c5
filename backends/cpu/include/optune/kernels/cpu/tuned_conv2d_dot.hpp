// Build-time consumption of tuned int8 and bf16 conv2d configs (conv2d_int8.cpu, conv2d_bf16.cpu:
// the GEMM configs of conv2d_dot.hpp): `optune apply-best` writes a table of TunedConv2dDot rows
// per dtype, and the entry point optune::conv2d(...) overloaded on the element types, which runs
// the config of the first row that holds the layer (tuned_conv2d.hpp's `holds`), else the default.
// NCHW input and output, OIHW filter.
#pragma once

#include <cstddef>
#include <utility>

#include "optune/kernels/cpu/conv2d_dot.hpp"
#include "optune/kernels/cpu/tuned_conv2d.hpp"

namespace optune::kernels::cpu {

template <typename Config>
struct TunedConv2dDot {
  Conv2dDims dims;
  Config config;
  Conv2dDims upper = kExactDims;  // a leaf of a measured dispatch: every layer from dims to upper
};
using TunedConv2dInt8 = TunedConv2dDot<GemmInt8Config>;
using TunedConv2dBf16 = TunedConv2dDot<GemmBf16Config>;

// int8: u8 (or s8) input, s8 filter, int32 output; bf16: bf16 all three. Returns whether a tuned
// row ran.
template <const auto& Table, auto Fallback, typename TIn, typename TW, typename TOut>
bool conv2d_dot_tuned(const Conv2dDims& dims, const TIn* input, const TW* filter, TOut* output) {
  const bool tuned = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto one = [&]<std::size_t J>() {
      constexpr auto entry = Table[J];
      if (!holds(entry.dims, entry.upper, dims)) return false;
      conv2d_dot<entry.config>(dims, input, filter, output);
      return true;
    };
    return (one.template operator()<I>() || ...);
  }(std::make_index_sequence<Table.size()>{});
  if (!tuned) conv2d_dot<Fallback>(dims, input, filter, output);
  return tuned;
}

}  // namespace optune::kernels::cpu
