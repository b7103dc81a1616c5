// conv2d_dot.hpp (conv2d in int8 and bf16 on the dot-product GEMMs) against a direct reference
// over layers that exercise its im2col columns: padding on every side, strides 2 and 3, dilation,
// a 1x1 layer that reads the image in place, a batch of two, depths of whole and partial groups;
// configs with A packed and read in place, one and two threads splitting N or M. int8 is exact; bf16 within
// 2u(bf16) + CRS u(f32). Compiled with -march=native: this machine's path.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conv_dot_reference.hpp"
#include "optune/kernels/cpu/conv2d_dot.hpp"

namespace optune::kernels::cpu {
namespace {

const std::vector<Conv2dDims> kLayers = {
    {.N = 1, .C = 16, .H = 14, .W = 14, .K = 32, .R = 3, .S = 3, .stride = 1, .pad = 1},
    {.N = 2, .C = 5, .H = 11, .W = 13, .K = 19, .R = 3, .S = 3, .stride = 2, .pad = 1},
    {.N = 1, .C = 7, .H = 12, .W = 9, .K = 8, .R = 3, .S = 2, .stride = 3, .pad = 2, .dilation = 2},
    {.N = 2, .C = 12, .H = 6, .W = 7, .K = 33, .R = 1, .S = 1},
    {.N = 1, .C = 3, .H = 20, .W = 17, .K = 16, .R = 7, .S = 7, .stride = 2, .pad = 3},
    {.N = 1, .C = 9, .H = 5, .W = 5, .K = 4, .R = 5, .S = 5, .stride = 1, .pad = 0},
    // Rows as long as the input's (one copy per tap and padding columns zeroed after), dilated.
    {.N = 2, .C = 4, .H = 9, .W = 8, .K = 5, .R = 3, .S = 3, .stride = 1, .pad = 2, .dilation = 2},
    // Taps that read no input row or column at all (a filter larger than the padded image's edge).
    {.N = 1, .C = 2, .H = 3, .W = 2, .K = 3, .R = 3, .S = 3, .stride = 1, .pad = 2, .dilation = 2},
};

template <typename Config>
constexpr std::array<Config, 5> conv_configs() {
  auto config = [](int mc, int nc, int kc, int mr, int nr, int threads, bool pack_a, bool split_rows = false) {
    return Config{.mc = mc, .nc = nc, .kc = kc, .mr = mr, .nr = nr, .threads = threads, .pack_a = pack_a,
                  .split_rows = split_rows};
  };
  return {config(96, 512, 512, 6, 32, 2, true),  config(96, 512, 512, 6, 32, 2, false),
          config(28, 48, 7, 14, 16, 1, true),    config(12, 64, 132, 6, 64, 2, false),
          config(12, 64, 132, 6, 32, 2, false, true)};
}
constexpr auto kInt8Configs = conv_configs<GemmInt8Config>();
constexpr auto kBf16Configs = conv_configs<GemmBf16Config>();

template <const auto& Configs, typename Check, std::size_t... I>
void for_each_config(Check&& check, std::index_sequence<I...>) {
  (check.template operator()<Configs[I]>(), ...);
}

TEST(CpuConv2dDot, Int8IsExactOnEveryLayerAndConfig) {
  std::mt19937 random(21);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  for (const Conv2dDims& d : kLayers) {
    std::vector<std::uint8_t> input(d.N * d.C * d.H * d.W);
    std::vector<std::int8_t> filter(d.K * d.C * d.R * d.S);
    for (auto& x : input) x = static_cast<std::uint8_t>(u8(random));
    for (auto& x : filter) x = static_cast<std::int8_t>(s8(random));
    const std::vector<double> expected = conv_dot_reference(d, input, filter);
    auto check = [&]<GemmInt8Config Cfg>() {
      std::vector<std::int32_t> out(expected.size(), 0x5a5a5a5a);
      conv2d_dot<Cfg>(d, input.data(), filter.data(), out.data());
      std::int64_t wrong = 0;
      for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != expected[i];
      EXPECT_EQ(wrong, 0) << describe_layer(d) << " mr " << Cfg.mr << " nr " << Cfg.nr << " pack_a " << Cfg.pack_a;
    };
    for_each_config<kInt8Configs>(check, std::make_index_sequence<kInt8Configs.size()>());
  }
}

TEST(CpuConv2dDot, Bf16IsWithinItsBoundOnEveryLayerAndConfig) {
  std::mt19937 random(22);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  for (const Conv2dDims& d : kLayers) {
    std::vector<bfloat16> input(d.N * d.C * d.H * d.W), filter(d.K * d.C * d.R * d.S);
    for (auto& x : input) x = narrow<bfloat16>(values(random));
    for (auto& x : filter) x = narrow<bfloat16>(values(random));
    const std::vector<double> expected = conv_dot_reference(d, input, filter);
    const double bound = 2 * std::ldexp(1.0, -8) + double(d.C * d.R * d.S) * std::ldexp(1.0, -24);
    auto check = [&]<GemmBf16Config Cfg>() {
      std::vector<bfloat16> out(expected.size(), bfloat16{0x7e11});
      conv2d_dot<Cfg>(d, input.data(), filter.data(), out.data());
      double error = 0, norm = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double got = widen(out[i]);
        error += (got - expected[i]) * (got - expected[i]);
        norm += expected[i] * expected[i];
      }
      EXPECT_LE(std::sqrt(error / norm), bound) << describe_layer(d) << " mr " << Cfg.mr << " nr " << Cfg.nr;
    };
    for_each_config<kBf16Configs>(check, std::make_index_sequence<kBf16Configs.size()>());
  }
}

}  // namespace
}  // namespace optune::kernels::cpu
