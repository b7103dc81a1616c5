// Reference results against naive loops and hand-computed values, operand sizes, and the
// relative L2 error the runner's correctness check uses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "optune/kernels/reference.hpp"

namespace optune::kernels {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (auto& v : values) v = value(generator);
  return values;
}

Workload gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Workload w;
  w.shape = GemmShape{m, n, k};
  return w;
}

TEST(Reference, OperandSizes) {
  const Workload g = gemm(17, 33, 65);
  EXPECT_EQ(input_sizes(g), (std::vector<std::size_t>{17 * 65, 65 * 33}));
  EXPECT_EQ(output_size(g), 17u * 33u);

  const Workload c =
      parse_workload(Op::kConv2d, "N=2,C=8,H=10,W=12,K=6,R=3,S=3,stride=2,pad=1,groups=2");
  EXPECT_EQ(input_sizes(c), (std::vector<std::size_t>{2 * 8 * 10 * 12, 6 * 4 * 3 * 3}));
  EXPECT_EQ(output_size(c), 2u * 6u * 5u * 6u);

  const Workload d = parse_workload(Op::kDepthwiseConv2d, "C=8,H=10,W=12,R=3,S=3,pad=1");
  EXPECT_EQ(input_sizes(d), (std::vector<std::size_t>{8 * 10 * 12, 8 * 3 * 3}));
  EXPECT_EQ(output_size(d), 8u * 10u * 12u);
}

TEST(Reference, GemmMatchesNaiveLoops) {
  const std::int64_t M = 17, N = 33, K = 65;
  const auto a = random_values(M * K, 1), b = random_values(K * N, 2);
  std::vector<float> got(M * N, std::numeric_limits<float>::quiet_NaN()), want(M * N);
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += double(a[i * K + k]) * b[k * N + j];
      want[i * N + j] = float(sum);
    }
  }
  reference(gemm(M, N, K), {a.data(), b.data()}, got.data());
  EXPECT_LT(relative_l2_error(got.data(), want.data(), got.size()), 1e-6);
}

TEST(Reference, LargeGemmInFloatIsAccurate) {
  // Past the double threshold: 1024 x 1024 x 1025 multiply-adds; checked on a few entries.
  const std::int64_t M = 1024, N = 1024, K = 1025;
  const auto a = random_values(M * K, 3), b = random_values(K * N, 4);
  std::vector<float> got(M * N);
  reference(gemm(M, N, K), {a.data(), b.data()}, got.data());
  for (std::int64_t i : {0, 511, 1023}) {
    for (std::int64_t j : {0, 700, 1023}) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += double(a[i * K + k]) * b[k * N + j];
      EXPECT_NEAR(got[i * N + j], sum, 1e-4 * std::sqrt(double(K)));
    }
  }
}

TEST(Reference, ConvMatchesAHandComputedCase) {
  // One 3x3 input, a 2x2 filter, pad 1, stride 2: outputs at corners (-1,-1), (-1,1), (1,-1),
  // (1,1) of the padded input.
  const Workload w = parse_workload(Op::kConv2d, "C=1,H=3,W=3,K=1,R=2,S=2,stride=2,pad=1");
  ASSERT_EQ(output_size(w), 4u);
  const std::vector<float> input = {1, 2, 3,
                                    4, 5, 6,
                                    7, 8, 9};
  const std::vector<float> filter = {1, 10,
                                     100, 1000};
  std::vector<float> out(4);
  reference(w, {input.data(), filter.data()}, out.data());
  // (0,0): only tap (1,1) sees input(0,0)=1; (0,1): taps (1,0),(1,1) see 2,3;
  // (1,0): taps (0,1),(1,1) see 4,7; (1,1): all four see 5,6,8,9.
  EXPECT_EQ(out, (std::vector<float>{1000, 100 * 2 + 1000 * 3, 10 * 4 + 1000 * 7,
                                     1 * 5 + 10 * 6 + 100 * 8 + 1000 * 9}));
}

TEST(Reference, DilatedGroupedConvMatchesHandComputedCase) {
  // Two groups of one channel each; dilation 2 makes a 2x2 filter span a 3x3 window.
  const Workload w = parse_workload(Op::kConv2d, "C=2,H=3,W=3,K=2,R=2,S=2,dilation=2,groups=2");
  ASSERT_EQ(output_size(w), 2u);
  std::vector<float> input(18);
  for (int i = 0; i < 18; ++i) input[i] = float(i + 1);
  const std::vector<float> filter = {1, 2, 3, 4,  // group 0, over channel 0
                                     1, 0, 0, 1};  // group 1, over channel 1
  std::vector<float> out(2);
  reference(w, {input.data(), filter.data()}, out.data());
  EXPECT_EQ(out[0], 1 * 1 + 2 * 3 + 3 * 7 + 4 * 9);
  EXPECT_EQ(out[1], 10 + 18);
}

TEST(Reference, PointwiseConvEqualsGemm) {
  // A 1x1 conv with N=1 is filter[K,C] x input[C,H*W].
  const std::int64_t C = 19, HW = 7 * 9, K = 13;
  const Workload w = parse_workload(Op::kConv2d, "C=19,H=7,W=9,K=13,R=1,S=1");
  const auto input = random_values(C * HW, 5), filter = random_values(K * C, 6);
  std::vector<float> conv_out(output_size(w)), gemm_out(K * HW);
  reference(w, {input.data(), filter.data()}, conv_out.data());
  reference(gemm(K, HW, C), {filter.data(), input.data()}, gemm_out.data());
  EXPECT_LT(relative_l2_error(conv_out.data(), gemm_out.data(), gemm_out.size()), 1e-6);
}

TEST(Reference, DepthwiseEqualsGroupedConv) {
  const Workload d =
      parse_workload(Op::kDepthwiseConv2d, "N=2,C=6,H=9,W=8,R=3,S=3,stride=2,pad=1,dilation=1");
  const Workload c =
      parse_workload(Op::kConv2d, "N=2,C=6,H=9,W=8,K=6,R=3,S=3,stride=2,pad=1,groups=6");
  ASSERT_EQ(input_sizes(d), input_sizes(c));
  const auto input = random_values(input_sizes(d)[0], 7);
  const auto filter = random_values(input_sizes(d)[1], 8);
  std::vector<float> depthwise_out(output_size(d)), conv_out(output_size(c));
  reference(d, {input.data(), filter.data()}, depthwise_out.data());
  reference(c, {input.data(), filter.data()}, conv_out.data());
  EXPECT_EQ(depthwise_out, conv_out);
}

// On a kept NCHW[b]c layout the operands are blocked: the reference is the NCHW one between
// layout conversions, whatever the input's padding channels hold, with zero padding channels out.
TEST(Reference, BlockedLayoutIsTheNchwResultBlocked) {
  for (const char* op_and_shape : {"conv2d:N=2,C=5,H=7,W=6,K=11,R=3,S=3,stride=2,pad=1",
                                   "depthwise_conv2d:C=13,H=6,W=9,R=3,S=3,pad=1"}) {
    const std::string text = op_and_shape;
    const Op op = parse_op(text.substr(0, text.find(':')));
    const Workload nchw = parse_workload(op, text.substr(text.find(':') + 1));
    const Workload blocked = parse_workload(op, text.substr(text.find(':') + 1) + ",layout=nchw4c");
    const Conv2dShape& s = nchw.conv();
    const std::int64_t C4 = (s.C + 3) / 4 * 4, K4 = (s.K + 3) / 4 * 4;
    ASSERT_EQ(input_sizes(blocked)[0], static_cast<std::size_t>(s.N * C4 * s.H * s.W)) << text;
    ASSERT_EQ(input_sizes(blocked)[1], input_sizes(nchw)[1]) << text;
    ASSERT_EQ(output_size(blocked), static_cast<std::size_t>(s.N * K4 * s.out_h() * s.out_w())) << text;

    const auto input = random_values(input_sizes(nchw)[0], 3);
    const auto filter = random_values(input_sizes(nchw)[1], 4);
    std::vector<float> want(output_size(nchw));
    reference(nchw, {input.data(), filter.data()}, want.data());

    // Blocked by hand: [n][c / 4][h][w][c % 4], the padding channels of the input garbage.
    std::vector<float> blocked_input(input_sizes(blocked)[0], 1e3f);
    const std::int64_t plane = s.H * s.W, out_plane = s.out_h() * s.out_w();
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t c = 0; c < s.C; ++c)
        for (std::int64_t i = 0; i < plane; ++i)
          blocked_input[((n * C4 / 4 + c / 4) * plane + i) * 4 + c % 4] = input[(n * s.C + c) * plane + i];
    std::vector<float> got(output_size(blocked), NAN);
    reference(blocked, {blocked_input.data(), filter.data()}, got.data());
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t k = 0; k < K4; ++k)
        for (std::int64_t i = 0; i < out_plane; ++i) {
          const float value = got[((n * K4 / 4 + k / 4) * out_plane + i) * 4 + k % 4];
          ASSERT_EQ(value, k < s.K ? want[(n * s.K + k) * out_plane + i] : 0.0f) << text << " n" << n << " k" << k;
        }
  }
}

// Channels last: NHWC input, OHWI filter, NHWC output. The reference is the NCHW one on the same
// operands transposed (here by hand), transposed back: equal to the bit, the same double sums.
TEST(Reference, ChannelsLastIsTheNchwResultTransposed) {
  for (const std::string shape : {"N=2,C=8,H=7,W=6,K=5,R=3,S=3,stride=2,pad=1",
                                  "N=2,C=8,H=7,W=6,K=5,R=3,S=3,pad=2,dilation=2"}) {
    const Workload nchw = parse_workload(Op::kConv2d, shape);
    const Workload nhwc = parse_workload(Op::kConv2d, shape + ",layout=nhwc");
    const Conv2dShape& s = nchw.conv();
    const std::int64_t P = s.out_h(), Q = s.out_w();
    ASSERT_EQ(input_sizes(nhwc), (std::vector<std::size_t>{2 * 7 * 6 * 8, 5 * 3 * 3 * 8})) << shape;
    ASSERT_EQ(output_size(nhwc), static_cast<std::size_t>(s.N * P * Q * s.K)) << shape;

    const auto input_values = random_values(input_sizes(nhwc)[0], 11);
    const auto filter_values = random_values(input_sizes(nhwc)[1], 12);
    const std::vector<double> input(input_values.begin(), input_values.end());     // [N][H][W][C]
    const std::vector<double> filter(filter_values.begin(), filter_values.end());  // [K][R][S][C]
    std::vector<double> nchw_input(input.size()), oihw_filter(filter.size());
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t h = 0; h < s.H; ++h)
        for (std::int64_t w = 0; w < s.W; ++w)
          for (std::int64_t c = 0; c < s.C; ++c)
            nchw_input[((n * s.C + c) * s.H + h) * s.W + w] = input[((n * s.H + h) * s.W + w) * s.C + c];
    for (std::int64_t k = 0; k < s.K; ++k)
      for (std::int64_t r = 0; r < s.R; ++r)
        for (std::int64_t t = 0; t < s.S; ++t)
          for (std::int64_t c = 0; c < s.C; ++c)
            oihw_filter[((k * s.C + c) * s.R + r) * s.S + t] = filter[((k * s.R + r) * s.S + t) * s.C + c];

    std::vector<double> want(output_size(nchw)), got(output_size(nhwc), NAN);
    reference(nchw, {nchw_input.data(), oihw_filter.data()}, want.data());
    reference(nhwc, {input.data(), filter.data()}, got.data());
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q)
          for (std::int64_t k = 0; k < s.K; ++k)
            ASSERT_EQ(got[((n * P + p) * Q + q) * s.K + k], want[((n * s.K + k) * P + p) * Q + q])
                << shape << " n" << n << " p" << p << " q" << q << " k" << k;
  }
}

TEST(Reference, RelativeL2Error) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const std::vector<float> want = {3, 4};
  const std::vector<float> same = {3, 4};
  const std::vector<float> off = {3, 4.5};
  EXPECT_EQ(relative_l2_error(same.data(), want.data(), 2), 0.0);
  EXPECT_DOUBLE_EQ(relative_l2_error(off.data(), want.data(), 2), 0.5 / 5.0);
  EXPECT_EQ(relative_l2_error(static_cast<const float*>(nullptr), nullptr, 0), 0.0);

  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::vector<float>& got : {std::vector<float>{nan, 4}, std::vector<float>{3, inf},
                                        std::vector<float>{3, -inf}}) {
    EXPECT_EQ(relative_l2_error(got.data(), want.data(), 2), kInfinity);
  }
  const std::vector<float> zeros = {0, 0};
  EXPECT_EQ(relative_l2_error(zeros.data(), zeros.data(), 2), 0.0);
  EXPECT_EQ(relative_l2_error(want.data(), zeros.data(), 2), kInfinity);
}

// In parts, the same error as at once; a NaN in any part makes it infinite.
TEST(Reference, RelativeL2InPartsIsTheSameAsAtOnce) {
  const std::vector<double> want = {1, -2, 3, 4, 0.5};
  const std::vector<double> got = {1.1, -2, 2.9, 4, 0.5};
  RelativeL2 parts;
  parts.add(got.data(), want.data(), 2);
  parts.add(got.data() + 2, want.data() + 2, 3);
  EXPECT_DOUBLE_EQ(parts.error(), relative_l2_error(got.data(), want.data(), got.size()));
  std::vector<double> bad = got;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  RelativeL2 with_nan;
  with_nan.add(bad.data(), want.data(), 2);
  with_nan.add(bad.data() + 2, want.data() + 2, 3);
  with_nan.add(got.data(), want.data(), 2);  // later finite parts do not hide it
  EXPECT_EQ(with_nan.error(), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace optune::kernels
