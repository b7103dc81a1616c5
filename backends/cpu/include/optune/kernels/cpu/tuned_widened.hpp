// Build-time consumption of the tables of the convolutions that run on the float32 kernels with
// widened operands (conv2d.cpu and conv2d_gemm.cpu in f16 and bf16, depthwise_conv2d.cpu in f16,
// bf16 and int8): the operands widened to float32, the float32 dispatch of tuned_conv2d.hpp on
// them (the table's rows are float32 configs), the result rounded into the output's type, as the
// tuner's candidates did (widened_operands.hpp). NCHW input and output.
#pragma once

#include <cstddef>

#include "optune/kernels/cpu/tuned_conv2d.hpp"
#include "optune/kernels/cpu/widened_operands.hpp"

namespace optune::kernels::cpu {

// run(input, filter, output) on float32 copies of the layer's operands (a depthwise layer's filter
// [C, 1, R, S] and output of C channels); returns what run returns (whether a tuned row ran).
template <typename TIn, typename TW, typename TOut, typename Run>
bool run_widened(const Conv2dDims& d, bool depthwise, const TIn* input, const TW* filter, TOut* output, Run&& run) {
  thread_local AlignedBuffer wide_input, wide_filter, wide_output;
  const std::int64_t channels = depthwise ? d.C : d.K;
  const auto inputs = static_cast<std::size_t>(d.N * d.C * d.H * d.W);
  const auto weights = static_cast<std::size_t>(channels * (depthwise ? 1 : d.C) * d.R * d.S);
  const auto outputs = static_cast<std::size_t>(d.N * channels * d.out_h() * d.out_w());
  float* result = wide_output.reserve(outputs);
  const bool tuned = run(widened(input, inputs, wide_input, 1), widened(filter, weights, wide_filter, 1), result);
  narrowed(result, outputs, output, 1);
  return tuned;
}

}  // namespace optune::kernels::cpu
