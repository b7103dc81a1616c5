// conv2d_dot_nchwc.hpp (direct int8 and bf16 conv2d on the kept NCHW16c layout) against a direct
// reference, over layers that exercise its edges: channels that are not whole blocks of 16 (input
// and output), padding as wide as the stride (its taps skipped, the input read in place) and wider
// (read through the zero-padded copy), strides 2 and 3 and dilation, output widths and heights
// that are not whole tiles, a batch of two; configs of one to four output vectors, one to three rows, one and two threads, both loop orders and splits. int8 is
// exact (u8 x s8 as VNNI runs it, s8 x s8 as Arm does); bf16 within 2u(bf16) + CRS u(f32); the
// output's channels past K are zeros. Built twice: -march=native (this machine's path: VNNI and
// AVX-512 BF16 where it has them) and, on x86, without AVX-512 (the plain C++ path).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conv_dot_reference.hpp"
#include "optune/kernels/cpu/conv2d_dot_nchwc.hpp"

namespace optune::kernels::cpu {
namespace {

constexpr std::int64_t L = kDotNchwcBlock;

const std::vector<Conv2dDims> kLayers = {
    {.N = 1, .C = 32, .H = 14, .W = 14, .K = 32, .R = 3, .S = 3, .stride = 1, .pad = 1},
    {.N = 2, .C = 20, .H = 11, .W = 13, .K = 37, .R = 3, .S = 3, .stride = 2, .pad = 1},
    {.N = 1, .C = 7, .H = 12, .W = 9, .K = 8, .R = 3, .S = 2, .stride = 3, .pad = 2, .dilation = 2},
    {.N = 1, .C = 24, .H = 10, .W = 10, .K = 20, .R = 1, .S = 1, .stride = 2},  // in place, strided
    {.N = 2, .C = 16, .H = 9, .W = 7, .K = 48, .R = 3, .S = 3, .stride = 1, .dilation = 2},  // in place
    {.N = 1, .C = 48, .H = 7, .W = 7, .K = 64, .R = 3, .S = 3, .stride = 1, .pad = 1},
    // Padding no wider than the stride, read nowhere (its taps skipped, the input read in place):
    // dilated, and as wide as a stride of 2.
    {.N = 1, .C = 16, .H = 10, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1, .dilation = 2},
    {.N = 2, .C = 20, .H = 13, .W = 12, .K = 24, .R = 5, .S = 5, .stride = 2, .pad = 2},
    // Wider padding than the stride, read from the zero-padded copy.
    {.N = 1, .C = 16, .H = 8, .W = 9, .K = 16, .R = 5, .S = 5, .stride = 1, .pad = 2},
};

constexpr std::array<Conv2dDotNchwcConfig, 9> kConfigs = {
    Conv2dDotNchwcConfig{},
    Conv2dDotNchwcConfig{.oc_vectors = 1, .ow_block = 5, .oh_block = 3, .threads = 2},
    Conv2dDotNchwcConfig{.oc_vectors = 4, .ow_block = 6, .oh_block = 1, .threads = 2,
                         .loop_order = ConvLoopOrder::kRowOuter},
    Conv2dDotNchwcConfig{.oc_vectors = 3, .ow_block = 4, .oh_block = 2, .threads = 2,
                         .parallel = ConvParallel::kFused},
    Conv2dDotNchwcConfig{.oc_vectors = 2, .ow_block = 14, .oh_block = 1, .threads = 1},
    Conv2dDotNchwcConfig{.oc_vectors = 1, .ow_block = 1, .oh_block = 1, .threads = 2,
                         .loop_order = ConvLoopOrder::kRowOuter, .parallel = ConvParallel::kFused},
    // On AMX's tiles where the CPU has them (CPUs without on the vector path's fallback tile).
    Conv2dDotNchwcConfig{.oc_vectors = 2, .ow_block = 16, .oh_block = 2, .threads = 2, .amx = true},
    Conv2dDotNchwcConfig{.oc_vectors = 3, .ow_block = 16, .oh_block = 1, .threads = 1,
                         .loop_order = ConvLoopOrder::kRowOuter, .amx = true},
    Conv2dDotNchwcConfig{.oc_vectors = 1, .ow_block = 16, .oh_block = 2, .threads = 2,
                         .parallel = ConvParallel::kFused, .amx = true},
};

template <typename Check, std::size_t... I>
void for_each_config(Check&& check, std::index_sequence<I...>) {
  (check.template operator()<kConfigs[I]>(), ...);
}

// NCHW -> NCHW16c, the padding channels holding `fill` (any finite value: the packed filter is
// zero there).
template <typename T>
std::vector<T> blocked(const std::vector<T>& nchw, std::int64_t N, std::int64_t C, std::int64_t pixels, T fill) {
  const std::int64_t blocks = (C + L - 1) / L;
  std::vector<T> out(N * blocks * pixels * L, fill);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t p = 0; p < pixels; ++p)
        out[((n * blocks + c / L) * pixels + p) * L + c % L] = nchw[(n * C + c) * pixels + p];
  return out;
}

// The reference of an NCHW16c output: the NCHW one blocked (channels past K zero).
template <typename TIn, typename TW>
std::vector<double> reference(const Conv2dDims& d, const std::vector<TIn>& input, const std::vector<TW>& filter) {
  return blocked(conv_dot_reference(d, input, filter), d.N, d.K, d.out_h() * d.out_w(), 0.0);
}

std::string describe(const Conv2dDims& d, const Conv2dDotNchwcConfig& c) {
  return describe_layer(d) + " | oc_vectors " + std::to_string(c.oc_vectors) + " ow " + std::to_string(c.ow_block) +
         " oh " + std::to_string(c.oh_block) + " threads " + std::to_string(c.threads) + (c.amx ? " amx" : "");
}

template <typename TIn>
void expect_int8_exact(std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> activations(std::is_signed_v<TIn> ? -128 : 0, std::is_signed_v<TIn> ? 127 : 255);
  std::uniform_int_distribution<int> weights(-128, 127);
  for (const Conv2dDims& d : kLayers) {
    std::vector<TIn> input(d.N * d.C * d.H * d.W);
    std::vector<std::int8_t> filter(d.K * d.C * d.R * d.S);
    for (auto& x : input) x = static_cast<TIn>(activations(random));
    for (auto& x : filter) x = static_cast<std::int8_t>(weights(random));
    const std::vector<double> expected = reference(d, input, filter);
    const std::vector<TIn> in = blocked(input, d.N, d.C, d.H * d.W, static_cast<TIn>(77));
    auto check = [&]<Conv2dDotNchwcConfig Config>() {
      std::vector<std::int32_t> out(expected.size(), 0x5a5a5a5a);
      conv2d_dot_nchwc<Config>(d, in.data(), filter.data(), out.data());
      std::int64_t wrong = 0;
      for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != expected[i];
      EXPECT_EQ(wrong, 0) << describe(d, Config);
    };
    for_each_config(check, std::make_index_sequence<kConfigs.size()>());
  }
}

TEST(CpuConv2dDotNchwc, Int8WithUnsignedActivationsIsExactOnEveryLayerAndConfig) {
  expect_int8_exact<std::uint8_t>(31);
}

TEST(CpuConv2dDotNchwc, Int8WithSignedActivationsIsExactOnEveryLayerAndConfig) {
  expect_int8_exact<std::int8_t>(32);
}

TEST(CpuConv2dDotNchwc, Bf16IsWithinItsBoundOnEveryLayerAndConfig) {
  std::mt19937 random(33);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  for (const Conv2dDims& d : kLayers) {
    std::vector<bfloat16> input(d.N * d.C * d.H * d.W), filter(d.K * d.C * d.R * d.S);
    for (auto& x : input) x = narrow<bfloat16>(values(random));
    for (auto& x : filter) x = narrow<bfloat16>(values(random));
    const std::vector<double> expected = reference(d, input, filter);
    const std::vector<bfloat16> in = blocked(input, d.N, d.C, d.H * d.W, narrow<bfloat16>(3.5f));
    const double bound = 2 * std::ldexp(1.0, -8) + double(d.C * d.R * d.S) * std::ldexp(1.0, -24);
    auto check = [&]<Conv2dDotNchwcConfig Config>() {
      std::vector<bfloat16> out(expected.size(), bfloat16{0x7e11});
      conv2d_dot_nchwc<Config>(d, in.data(), filter.data(), out.data());
      double error = 0, norm = 0;
      std::int64_t nonzero_padding = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double got = widen(out[i]);
        error += (got - expected[i]) * (got - expected[i]);
        norm += expected[i] * expected[i];
        nonzero_padding += expected[i] == 0 && got != 0;
      }
      EXPECT_LE(std::sqrt(error / norm), bound) << describe(d, Config);
      EXPECT_EQ(nonzero_padding, 0) << describe(d, Config);
    };
    for_each_config(check, std::make_index_sequence<kConfigs.size()>());
  }
}

// Calls on one geometry, one after another with other inputs, each get their own input's answer:
// an amx config's threads keep their padded copies between calls (its rows copied once a call),
// and a call between them on other dims changes the copies' geometry.
TEST(CpuConv2dDotNchwc, CallsOnOneGeometryReadTheirOwnInputs) {
  constexpr Conv2dDotNchwcConfig kAmx{.oc_vectors = 2, .ow_block = 16, .oh_block = 2, .threads = 2, .amx = true};
  const Conv2dDims d{.N = 1, .C = 32, .H = 14, .W = 14, .K = 32, .R = 3, .S = 3, .stride = 1, .pad = 1};
  const Conv2dDims other{.N = 1, .C = 16, .H = 9, .W = 7, .K = 16, .R = 3, .S = 3, .stride = 2, .pad = 1};
  std::mt19937 random(34);
  std::uniform_int_distribution<int> bytes(0, 255), weights(-128, 127);
  std::vector<std::int8_t> filter(d.K * d.C * d.R * d.S);
  for (auto& x : filter) x = static_cast<std::int8_t>(weights(random));
  std::vector<std::vector<std::uint8_t>> inputs(2, std::vector<std::uint8_t>(d.N * d.C * d.H * d.W));
  for (auto& input : inputs)
    for (auto& x : input) x = static_cast<std::uint8_t>(bytes(random));
  for (const int which : {0, 1, 0, -1, 1}) {
    if (which < 0) {  // another layer between
      std::vector<std::uint8_t> small(other.N * other.C * other.H * other.W, 1);
      std::vector<std::int8_t> ones(other.K * other.C * other.R * other.S, 1);
      std::vector<std::int32_t> out(other.N * other.K * other.out_h() * other.out_w());
      conv2d_dot_nchwc<kAmx>(other, small.data(), ones.data(), out.data());
      continue;
    }
    const std::vector<double> expected = reference(d, inputs[which], filter);
    const auto in = blocked(inputs[which], d.N, d.C, d.H * d.W, std::uint8_t{5});
    std::vector<std::int32_t> out(expected.size(), 0x5a5a5a5a);
    conv2d_dot_nchwc<kAmx>(d, in.data(), filter.data(), out.data());
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != expected[i];
    EXPECT_EQ(wrong, 0) << "input " << which;
  }
}

TEST(CpuConv2dDotNchwc, TheConfigRulesNameWhatIsWrong) {
  EXPECT_EQ(conv2d_dot_nchwc_config_error(Conv2dDotNchwcConfig{}), nullptr);
  EXPECT_STREQ(conv2d_dot_nchwc_config_error({.oc_vectors = 4, .ow_block = 7}), "the tile needs more than 32 registers");
  EXPECT_STREQ(conv2d_dot_nchwc_config_error({.oc_vectors = 0}), "oc_vectors must be in 1..8");
  EXPECT_STREQ(conv2d_dot_nchwc_config_error({.threads = 0}), "threads must be in 1..1024");
  EXPECT_EQ(conv2d_dot_nchwc_config_error({.oc_vectors = 2, .ow_block = 16, .oh_block = 2, .amx = true}), nullptr);
  EXPECT_STREQ(conv2d_dot_nchwc_config_error({.oc_vectors = 2, .ow_block = 12, .amx = true}),
               "amx: ow_block must be 16 (a tile's rows)");
  EXPECT_STREQ(conv2d_dot_nchwc_config_error({.oc_vectors = 3, .ow_block = 16, .oh_block = 2, .amx = true}),
               "amx: oh_block x oc_vectors takes more than AMX's 8 tiles");
}

}  // namespace
}  // namespace optune::kernels::cpu
