// Operand sizes and reference results of every op, for the runner's correctness check.
// GEMM goes through Eigen (in double while that is cheap); convolutions are direct loops with
// double accumulation, written for clarity over speed but cache-friendly enough for ResNet-sized
// layers in well under a second.
#include "optune/kernels/reference.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/kernels/layout.hpp"

namespace optune::kernels {
namespace {

// Up to this many multiply-adds, GEMM runs in double (about a second of Eigen on one core);
// beyond, float keeps time and memory in check at a relative error near sqrt(K) * 6e-8.
constexpr double kMaxDoubleGemmMacs = double(std::int64_t{1} << 30);

template <typename Scalar>
using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void reference_gemm(const GemmShape& s, const float* a, const float* b, float* c) {
  const Eigen::Map<const RowMajor<float>> A(a, s.M, s.K), B(b, s.K, s.N);
  Eigen::Map<RowMajor<float>> C(c, s.M, s.N);
  if (double(s.M) * double(s.N) * double(s.K) <= kMaxDoubleGemmMacs) {
    const RowMajor<double> product = A.cast<double>() * B.cast<double>();
    C = product.cast<float>();
  } else {
    C.noalias() = A * B;
  }
}

// First and one-past-last output index o in [0, outputs) whose input o * stride + offset lies
// in [0, extent): the taps of padding are skipped instead of tested per element.
std::pair<std::int64_t, std::int64_t> valid_range(std::int64_t offset, std::int64_t stride,
                                                  std::int64_t extent, std::int64_t outputs) {
  const std::int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const std::int64_t last = extent - 1 - offset < 0 ? 0 : (extent - 1 - offset) / stride + 1;
  return {std::min(first, outputs), std::min(last, outputs)};
}

// NCHW input, OIHW filter [K, C/groups, R, S], NCHW output; any stride, pad, dilation, groups.
void reference_conv2d(const Conv2dShape& s, const float* input, const float* filter,
                      float* output) {
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
        const float* plane = input + (n * s.C + c) * s.H * s.W;
        const float* taps = filter + (k * channels_per_group + cg) * s.R * s.S;
        for (std::int64_t r = 0; r < s.R; ++r) {
          const auto [p_first, p_last] = valid_range(r * s.dilation - s.pad, s.stride, s.H, P);
          for (std::int64_t t = 0; t < s.S; ++t) {
            const double weight = taps[r * s.S + t];
            const std::int64_t w_offset = t * s.dilation - s.pad;
            const auto [q_first, q_last] = valid_range(w_offset, s.stride, s.W, Q);
            for (std::int64_t p = p_first; p < p_last; ++p) {
              const float* row = plane + (p * s.stride + r * s.dilation - s.pad) * s.W;
              double* out_row = acc.data() + p * Q;
              for (std::int64_t q = q_first; q < q_last; ++q) {
                out_row[q] += weight * row[q * s.stride + w_offset];
              }
            }
          }
        }
      }
      float* out = output + (n * s.K + k) * P * Q;
      for (std::int64_t i = 0; i < P * Q; ++i) out[i] = static_cast<float>(acc[i]);
    }
  }
}

// Depthwise is conv2d with one channel per group; the shape says so whatever it was built with.
Conv2dShape depthwise_as_conv(Conv2dShape s) {
  s.K = s.C;
  s.groups = s.C;
  return s;
}

}  // namespace

std::vector<std::size_t> input_sizes(const Workload& workload) {
  if (workload.op == Op::kGemm) {
    const auto& g = workload.gemm();
    return {static_cast<std::size_t>(g.M * g.K), static_cast<std::size_t>(g.K * g.N)};
  }
  const auto& c = workload.conv();
  const std::int64_t filter = workload.op == Op::kDepthwiseConv2d
                                  ? c.C * c.R * c.S
                                  : c.K * (c.C / c.groups) * c.R * c.S;
  const int input_block = workload.input_layout_block();
  const std::size_t input = input_block == kLayoutNchw ? static_cast<std::size_t>(c.N * c.C * c.H * c.W)
                                                       : nchwc_size(c.N, c.C, c.H, c.W, input_block);
  return {input, static_cast<std::size_t>(filter)};
}

std::size_t output_size(const Workload& workload) {
  if (workload.op == Op::kGemm) {
    const auto& g = workload.gemm();
    return static_cast<std::size_t>(g.M * g.N);
  }
  const auto& c = workload.conv();
  const std::int64_t channels = workload.op == Op::kDepthwiseConv2d ? c.C : c.K;
  if (workload.layout_block != kLayoutNchw) {
    return nchwc_size(c.N, channels, c.out_h(), c.out_w(), workload.layout_block);
  }
  return static_cast<std::size_t>(c.N * channels * c.out_h() * c.out_w());
}

void reference(const Workload& workload, const std::vector<const float*>& inputs, float* output) {
  if (inputs.size() != 2) {
    throw std::invalid_argument("reference: " + std::string(op_name(workload.op)) +
                                " takes 2 inputs, got " + std::to_string(inputs.size()));
  }
  if (workload.layout_block != kLayoutNchw) {
    // The NCHW reference between conversions: the input's padding channels are ignored, the
    // output's come out zero (what a kernel must write there).
    const auto& c = workload.conv();
    const int block = workload.layout_block;
    std::vector<float> input;
    if (!workload.nchw_input) {
      input.resize(static_cast<std::size_t>(c.N * c.C * c.H * c.W));
      nchwc_to_nchw(inputs[0], c.N, c.C, c.H, c.W, block, input.data());
    }
    std::vector<float> out(static_cast<std::size_t>(c.N * c.K * c.out_h() * c.out_w()));
    Workload nchw = workload;
    nchw.layout_block = kLayoutNchw;
    nchw.nchw_input = false;
    reference(nchw, {workload.nchw_input ? inputs[0] : input.data(), inputs[1]}, out.data());
    nchw_to_nchwc(out.data(), c.N, c.K, c.out_h(), c.out_w(), block, output);
    return;
  }
  switch (workload.op) {
    case Op::kGemm:
      return reference_gemm(workload.gemm(), inputs[0], inputs[1], output);
    case Op::kConv2d:
      return reference_conv2d(workload.conv(), inputs[0], inputs[1], output);
    case Op::kDepthwiseConv2d:
      return reference_conv2d(depthwise_as_conv(workload.conv()), inputs[0], inputs[1], output);
  }
}

double relative_l2_error(const float* got, const float* want, std::size_t n) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(want[i])) {
      return std::numeric_limits<double>::infinity();
    }
    const double d = double(got[i]) - double(want[i]);
    difference += d * d;
    norm += double(want[i]) * double(want[i]);
  }
  if (difference == 0.0) return 0.0;
  return norm == 0.0 ? std::numeric_limits<double>::infinity() : std::sqrt(difference / norm);
}

}  // namespace optune::kernels
