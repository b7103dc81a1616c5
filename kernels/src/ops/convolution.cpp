// The shared part of the convolution entries: checks, operand sizes, the direct-loop reference
// (double accumulation, written for clarity over speed but cache-friendly enough for
// ResNet-sized layers in well under a second) and shape features.
#include "convolution.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "entry_support.hpp"
#include "optune/kernels/layout.hpp"

namespace optune::kernels {
namespace {

// First and one-past-last output index o in [0, outputs) whose input o * stride + offset lies
// in [0, extent): the taps of padding are skipped instead of tested per element.
std::pair<std::int64_t, std::int64_t> valid_range(std::int64_t offset, std::int64_t stride,
                                                  std::int64_t extent, std::int64_t outputs) {
  const std::int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const std::int64_t last = extent - 1 - offset < 0 ? 0 : (extent - 1 - offset) / stride + 1;
  return {std::min(first, outputs), std::min(last, outputs)};
}

// NCHW input, OIHW filter [K, C/groups, R, S], NCHW output; any stride, pad, dilation, groups.
void reference_conv2d(const Conv2dShape& s, const double* input, const double* filter,
                      double* output) {
  const std::int64_t P = s.out_h(), Q = s.out_w();
  const std::int64_t channels_per_group = s.C / s.groups;
  const std::int64_t outputs_per_group = s.K / s.groups;
  std::vector<double> acc(static_cast<std::size_t>(P * Q));
  for (std::int64_t n = 0; n < s.N; ++n) {
    for (std::int64_t k = 0; k < s.K; ++k) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const std::int64_t group = k / outputs_per_group;
      for (std::int64_t cg = 0; cg < channels_per_group; ++cg) {
        const std::int64_t c = group * channels_per_group + cg;
        const double* plane = input + (n * s.C + c) * s.H * s.W;
        const double* taps = filter + (k * channels_per_group + cg) * s.R * s.S;
        for (std::int64_t r = 0; r < s.R; ++r) {
          const auto [p_first, p_last] = valid_range(r * s.dilation - s.pad, s.stride, s.H, P);
          for (std::int64_t t = 0; t < s.S; ++t) {
            const double weight = taps[r * s.S + t];
            const std::int64_t w_offset = t * s.dilation - s.pad;
            const auto [q_first, q_last] = valid_range(w_offset, s.stride, s.W, Q);
            for (std::int64_t p = p_first; p < p_last; ++p) {
              const double* row = plane + (p * s.stride + r * s.dilation - s.pad) * s.W;
              double* out_row = acc.data() + p * Q;
              for (std::int64_t q = q_first; q < q_last; ++q) {
                out_row[q] += weight * row[q * s.stride + w_offset];
              }
            }
          }
        }
      }
      std::copy(acc.begin(), acc.end(), output + (n * s.K + k) * P * Q);
    }
  }
}

// NHWC input, OHWI filter [K][R][S][C/groups], NHWC output: the NCHW reference between transposes
// (an OHWI filter is the NHWC tensor of K images of C/groups channels).
void reference_conv2d_nhwc(const Conv2dShape& s, const double* input, const double* filter, double* output) {
  const std::int64_t channels_per_group = s.C / s.groups, P = s.out_h(), Q = s.out_w();
  std::vector<double> nchw_input(static_cast<std::size_t>(s.N * s.C * s.H * s.W));
  std::vector<double> oihw_filter(static_cast<std::size_t>(s.K * channels_per_group * s.R * s.S));
  std::vector<double> nchw_output(static_cast<std::size_t>(s.N * s.K * P * Q));
  nhwc_to_nchw(input, s.N, s.C, s.H, s.W, nchw_input.data());
  nhwc_to_nchw(filter, s.K, channels_per_group, s.R, s.S, oihw_filter.data());
  reference_conv2d(s, nchw_input.data(), oihw_filter.data(), nchw_output.data());
  nchw_to_nhwc(nchw_output.data(), s.N, s.K, P, Q, output);
}

}  // namespace

void check_convolution_shape_kind(const Workload& workload, std::string_view context) {
  if (!std::holds_alternative<Conv2dShape>(workload.shape)) {
    fail(context, std::string(op_name(workload.op)) + " needs a Conv2dShape");
  }
}

void check_convolution_extents(const Conv2dShape& s, std::string_view context) {
  const std::pair<const char*, std::int64_t> extents[] = {
      {"N", s.N}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"K", s.K}, {"R", s.R}, {"S", s.S},
      {"stride", s.stride}, {"pad", s.pad}, {"dilation", s.dilation}, {"groups", s.groups}};
  for (const auto& [name, value] : extents) check_extent(name, value, context);
}

void check_convolution_geometry(const Conv2dShape& s, std::string_view context) {
  const auto geometry = [&](char side, std::int64_t in, char filter, std::int64_t taps) {
    std::string text = std::string(1, side) + "=" + std::to_string(in) + ", " + filter + "=" +
                       std::to_string(taps) + ", pad=" + std::to_string(s.pad);
    if (s.dilation != 1) text += ", dilation=" + std::to_string(s.dilation);
    return "(" + text + ")";
  };
  if (s.out_h() < 1) fail(context, "output height is not positive " + geometry('H', s.H, 'R', s.R));
  if (s.out_w() < 1) fail(context, "output width is not positive " + geometry('W', s.W, 'S', s.S));
  for (const auto& [name, value] : {std::pair{"C", s.C}, std::pair{"K", s.K}}) {
    if (value % s.groups != 0) {
      fail(context, std::string(name) + "=" + std::to_string(value) +
                        " is not divisible by groups=" + std::to_string(s.groups));
    }
  }
}

double convolution_tensor_elements(const Conv2dShape& c) {
  return double(c.N) * c.C * c.H * c.W + double(c.K) * (c.C / c.groups) * c.R * c.S +
         double(c.N) * c.K * c.out_h() * c.out_w();
}

std::vector<std::size_t> convolution_input_sizes(const Workload& workload, std::int64_t filter_elements) {
  const auto& c = workload.conv();
  const int input_block = workload.input_layout_block();
  const std::size_t input = is_blocked_layout(input_block) ? nchwc_size(c.N, c.C, c.H, c.W, input_block)
                                                            : static_cast<std::size_t>(c.N * c.C * c.H * c.W);
  return {input, static_cast<std::size_t>(filter_elements)};
}

std::size_t convolution_output_size(const Workload& workload, std::int64_t channels) {
  const auto& c = workload.conv();
  if (is_blocked_layout(workload.layout_block)) {
    return nchwc_size(c.N, channels, c.out_h(), c.out_w(), workload.layout_block);
  }
  return static_cast<std::size_t>(c.N * channels * c.out_h() * c.out_w());
}

void reference_convolution(const Workload& workload, const Conv2dShape& c,
                           const std::vector<const double*>& inputs, double* output) {
  if (workload.layout_block == kLayoutNchw) return reference_conv2d(c, inputs[0], inputs[1], output);
  if (workload.layout_block == kLayoutNhwc) return reference_conv2d_nhwc(c, inputs[0], inputs[1], output);
  // The NCHW reference between conversions: the input's padding channels are ignored, the
  // output's come out zero (what a kernel must write there).
  const int block = workload.layout_block;
  std::vector<double> input;
  if (!workload.nchw_input) {
    input.resize(static_cast<std::size_t>(c.N * c.C * c.H * c.W));
    nchwc_to_nchw(inputs[0], c.N, c.C, c.H, c.W, block, input.data());
  }
  std::vector<double> out(static_cast<std::size_t>(c.N * c.K * c.out_h() * c.out_w()));
  reference_conv2d(c, workload.nchw_input ? inputs[0] : input.data(), inputs[1], out.data());
  nchw_to_nchwc(out.data(), c.N, c.K, c.out_h(), c.out_w(), block, output);
}

// Log2 of each extent (pad: log2(1 + pad), it may be 0).
std::vector<std::pair<std::string, float>> convolution_shape_features(const Conv2dShape& conv) {
  return {{"shape.N", log2_extent(conv.N)},
          {"shape.C", log2_extent(conv.C)},
          {"shape.H", log2_extent(conv.H)},
          {"shape.W", log2_extent(conv.W)},
          {"shape.K", log2_extent(conv.K)},
          {"shape.R", log2_extent(conv.R)},
          {"shape.S", log2_extent(conv.S)},
          {"shape.stride", log2_extent(conv.stride)},
          {"shape.pad", static_cast<float>(std::log2(
                            1.0 + static_cast<double>(std::max<std::int64_t>(conv.pad, 0))))},
          {"shape.dilation", log2_extent(conv.dilation)},
          {"shape.groups", log2_extent(conv.groups)}};
}

}  // namespace optune::kernels
