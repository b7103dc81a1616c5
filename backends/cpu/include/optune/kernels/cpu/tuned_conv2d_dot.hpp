// Build-time consumption of tuned int8 and bf16 conv2d configs: `optune apply-best` writes a table
// of TunedConv2dDot rows per dtype and layout, and an entry point overloaded on the element types,
// which runs the config of the first row that holds the layer (tuned_conv2d.hpp's `holds`), else
// the default. OIHW filter.
//   - NCHW input and output: optune::conv2d(...), conv2d_int8.cpu's and conv2d_bf16.cpu's GEMM
//     configs (conv2d_dot.hpp).
//   - NCHW16c input and output: optune::conv2d_nchw16c(...), conv2d_int8_direct.cpu's and
//     conv2d_bf16_direct.cpu's configs (conv2d_dot_nchwc.hpp); optune::Conv2dNchw16cInt8Filter and
//     optune::Conv2dNchw16cBf16Filter pack a layer's filter once and convolve with it.
//   - u7 on NCHW8c or NCHW16c: optune::conv2d_nchwc_u7<Block>(...) and
//     optune::Conv2dNchwcU7Filter<Block>, on the rows whose config has that block.
#pragma once

#include <cstddef>
#include <utility>

#include "optune/kernels/cpu/conv2d_dot.hpp"
#include "optune/kernels/cpu/conv2d_dot_nchwc.hpp"
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
using TunedConv2dDotNchwc = TunedConv2dDot<Conv2dDotNchwcConfig>;

// A direct convolution's config on the layout of Block channels (0: as it is): a table's default
// serves either layout.
template <auto Config, int Block>
constexpr auto on_block() {
  if constexpr (Block == 0) {
    return Config;
  } else {
    Conv2dDotNchwcConfig config = Config;
    config.block = Block;
    config.amx = config.amx && Block == kDotNchwcBlock;  // AMX's tiles take 16-channel blocks
    return config;
  }
}

// The first row of Table that holds the layer (Block > 0: among the rows of that layout's block),
// run(config) with it as a compile-time constant; else run(Fallback). Returns whether a tuned row
// ran.
template <const auto& Table, auto Fallback, int Block, typename Run>
bool run_tuned_conv2d_dot(const Conv2dDims& dims, const Run& run) {
  const bool tuned = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto one = [&]<std::size_t J>() {
      constexpr auto entry = Table[J];
      if constexpr (Block != 0) {
        if constexpr (entry.config.block != Block) return false;
      }
      if (!holds(entry.dims, entry.upper, dims)) return false;
      run.template operator()<entry.config>();
      return true;
    };
    return (one.template operator()<I>() || ...);
  }(std::make_index_sequence<Table.size()>{});
  if (!tuned) run.template operator()<on_block<Fallback, Block>()>();
  return tuned;
}

// int8: u8 (or s8) input, s8 filter, int32 output; bf16: bf16 all three. NCHW.
template <const auto& Table, auto Fallback, typename TIn, typename TW, typename TOut>
bool conv2d_dot_tuned(const Conv2dDims& dims, const TIn* input, const TW* filter, TOut* output) {
  return run_tuned_conv2d_dot<Table, Fallback, 0>(
      dims, [&]<auto Config>() { conv2d_dot<Config>(dims, input, filter, output); });
}

// The same on NCHW16c input and output (Block > 0: NCHW[Block]c, the rows of that block).
template <const auto& Table, auto Fallback, int Block = 0, typename TIn, typename TW, typename TOut>
bool conv2d_dot_nchwc_tuned(const Conv2dDims& dims, const TIn* input, const TW* filter, TOut* output) {
  return run_tuned_conv2d_dot<Table, Fallback, Block>(
      dims, [&]<auto Config>() { conv2d_dot_nchwc<Config>(dims, input, filter, output); });
}

// A filter packed once with the config Table holds for its layer (else Fallback), for a layer run
// again and again: conv2d_dot_nchwc_tuned packs the filter in every call, which on deep layers
// costs more than the convolution. Convolves NCHW16c tensors of that layer with it (Block > 0:
// NCHW[Block]c, with the rows of that block).
template <const auto& Table, auto Fallback, typename TW, int Block = 0>
class TunedNchwcFilter {
 public:
  TunedNchwcFilter(const Conv2dDims& dims, const TW* filter) : dims_(dims) {
    tuned_ = run_tuned_conv2d_dot<Table, Fallback, Block>(dims, [&]<auto Config>() {
      const auto bytes = conv2d_dot_nchwc_packed_filter_size<Config>(dims) * static_cast<std::int64_t>(sizeof(TW));
      packed_ = reinterpret_cast<TW*>(buffer_.reserve(static_cast<std::size_t>((bytes + 3) / 4)));
      conv2d_dot_nchwc_pack_filter<Config>(dims, filter, packed_);
    });
  }
  // Returns whether a tuned config runs (the one the filter was packed for).
  template <typename TIn, typename TOut>
  bool operator()(const TIn* input, TOut* output) const {
    return run_tuned_conv2d_dot<Table, Fallback, Block>(
        dims_, [&]<auto Config>() { conv2d_dot_nchwc_packed<Config>(dims_, input, packed_, output); });
  }
  bool tuned() const { return tuned_; }
  const Conv2dDims& dims() const { return dims_; }

 private:
  Conv2dDims dims_;
  AlignedBuffer buffer_;
  TW* packed_ = nullptr;
  bool tuned_ = false;
};

}  // namespace optune::kernels::cpu
