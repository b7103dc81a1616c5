// Depthwise conv2d on the kept NCHW[lanes]c layout (optune/kernels/cpu/depthwise_conv2d_nchwc.hpp)
// computes kernels::reference's answer for every config of a compile-time list (lanes 4 and 8,
// c_vectors 1..4, ow_block 1..13 (wider than some outputs), oh_block 1..3, filter width constant
// or not, 1 and 2 threads) on layers with stride 1, 2 and 3, padding 0..2, 3x3, 5x5 and 4x4 filters,
// dilation 2, odd extents, batch 2, channel counts that no block divides (13, and 3: less than
// one block), and planes small (every tile an edge) and large (most tiles read in place). The
// operands are converted with layout.hpp; the input's padding channels hold garbage, and the
// output's must come out exactly zero.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/depthwise_conv2d_nchwc.hpp"
#include "optune/kernels/layout.hpp"
#include "optune/kernels/cpu/tuned_conv2d.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"
#include "../../support/nchwc_check.hpp"

namespace optune::kernels::cpu {
namespace {

constexpr DepthwiseConv2dConfig blocked(int lanes, int cv, int owb, int ohb, bool unroll, int threads) {
  DepthwiseConv2dConfig c{.lanes = lanes, .oh_block = ohb, .unroll_kw = unroll, .threads = threads};
  c.algorithm = DepthwiseAlgorithm::kBlocked;
  c.c_vectors = cv;
  c.ow_block = owb;
  return c;
}

constexpr std::array kConfigs = {
    blocked(8, 1, 8, 1, true, 2),   blocked(8, 2, 4, 2, false, 2), blocked(4, 1, 13, 1, true, 2),
    blocked(8, 4, 1, 3, true, 1),   blocked(4, 3, 5, 2, false, 2), blocked(4, 4, 2, 3, true, 2),
    blocked(8, 1, 6, 2, false, 1),  blocked(8, 3, 3, 1, true, 2),
#if defined(__AVX512F__)
    blocked(16, 1, 8, 2, true, 2),
#endif
};

using NchwcFunction = void (*)(const Conv2dDims&, const float*, const float*, float*);

template <std::size_t... I>
constexpr auto instantiate(std::index_sequence<I...>) {
  return std::array<NchwcFunction, sizeof...(I)>{&depthwise_conv2d_nchwc<kConfigs[I]>...};
}

const std::vector<std::pair<std::string, Conv2dShape>>& layers() {
  static const std::vector<std::pair<std::string, Conv2dShape>> list = {
      {"3x3 pad 1", {1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 32}},
      {"3x3 stride 2 pad 1, odd", {1, 40, 15, 15, 40, 3, 3, 2, 1, 1, 40}},
      {"3x3 stride 2 pad 1, even (no bottom padding read)", {1, 16, 16, 18, 16, 3, 3, 2, 1, 1, 16}},
      {"5x5 pad 2, C 13", {1, 13, 11, 9, 13, 5, 5, 1, 2, 1, 13}},
      {"3x3 dilation 2 pad 2, odd", {1, 12, 17, 19, 12, 3, 3, 1, 2, 2, 12}},
      {"batch 2, 5x5 stride 2 pad 2, C 13", {2, 13, 20, 21, 13, 5, 5, 2, 2, 1, 13}},
      {"3x3 no pad, C 3 (under one block)", {1, 3, 9, 11, 3, 3, 3, 1, 0, 1, 3}},
      {"3x3 stride 2 no pad, wide odd rows", {1, 6, 9, 45, 6, 3, 3, 2, 0, 1, 6}},
      {"3x3 pad 1, 7x7 planes", {1, 64, 7, 7, 64, 3, 3, 1, 1, 1, 64}},
      {"1x1 stride 2", {1, 10, 8, 10, 10, 1, 1, 2, 0, 1, 10}},
      {"stride 3 (at run time), 4x4 dilation 2, pad 2", {1, 5, 23, 29, 5, 4, 4, 3, 2, 2, 5}},
      // Planes large enough that most tiles read in place and only edge tiles copy their window.
      {"5x5 pad 2, large planes, C 13", {1, 13, 30, 45, 13, 5, 5, 1, 2, 1, 13}},
      {"3x3 stride 2 pad 1, large planes", {1, 16, 40, 41, 16, 3, 3, 2, 1, 1, 16}},
      // Pad 1 on large planes: tiles at the left and right edges read the image in place.
      {"3x3 pad 1, large planes, C 20", {1, 20, 30, 48, 20, 3, 3, 1, 1, 1, 20}},
      {"3x3 stride 2 pad 1, large even planes", {1, 16, 40, 48, 16, 3, 3, 2, 1, 1, 16}},
  };
  return list;
}

using Result = test_support::Outcome;
Result run(const test_support::NchwcKernel& function, const Conv2dShape& shape, int block) {
  return test_support::run_blocked(Op::kDepthwiseConv2d, function, shape, block);
}

TEST(CpuDepthwiseNchwcKernel, EveryConfigMatchesTheReferenceOnEveryLayer) {
  constexpr auto functions = instantiate(std::make_index_sequence<kConfigs.size()>{});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const auto& [name, shape] : layers()) {
      const Result result = run(functions[i], shape, kConfigs[i].lanes);
      EXPECT_LE(result.error, 1e-5) << "config " << i << ", layer " << name;
      EXPECT_EQ(result.nonzero_padding, 0) << "config " << i << ", layer " << name;
    }
  }
}

constexpr DepthwiseConv2dConfig kPackedConfig = blocked(8, 2, 5, 2, true, 2);

// As the tuner's candidates call it: the filter packed apart, the filter width a constant.
TEST(CpuDepthwiseNchwcKernel, PackedFilterWithConstantWidthMatchesTheReference) {
  const auto packed_run = [](const Conv2dDims& d, const float* in, const float* filter, float* out) {
    std::vector<float> packed(depthwise_conv2d_packed_filter_size<kPackedConfig>(d));
    depthwise_conv2d_pack_filter<kPackedConfig>(d, filter, packed.data());
    depthwise_conv2d_nchwc_packed<kPackedConfig, 3>(d, in, packed.data(), out);
  };
  const Result result = run(packed_run, {1, 40, 15, 15, 40, 3, 3, 2, 1, 1, 40}, 8);
  EXPECT_LE(result.error, 1e-5);
  EXPECT_EQ(result.nonzero_padding, 0);
}

// A table as `optune apply-best` writes it: a row tuned on nchw8c, and an NCHW row (the rows
// algorithm, which the blocked layout cannot run) of the same shape.
constexpr Conv2dDims kTunedDims{.N = 1, .C = 16, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1};
constexpr std::array<TunedDepthwiseConv2d, 2> kTunedTable = {{
    {kTunedDims, blocked(8, 2, 3, 2, true, 2), 8},
    {kTunedDims, DepthwiseConv2dConfig{}, 0},
}};
bool ran_tuned = false;
void run_tuned(const Conv2dDims& d, const float* in, const float* filter, float* out) {
  ran_tuned = depthwise_conv2d_nchwc_tuned<kTunedTable, DepthwiseConv2dConfig{}, 8>(d, in, filter, out);
}

TEST(TunedDepthwiseConv2dNchwc, RunsTheKeptLayoutRowForItsShapeAndTheMovedDefaultElsewhere) {
  for (const auto& [shape, want_tuned] : {std::pair{Conv2dShape{1, 16, 9, 9, 16, 3, 3, 1, 1, 1, 16}, true},
                                          std::pair{Conv2dShape{1, 16, 9, 9, 16, 3, 3, 2, 1, 1, 16}, false}}) {
    const Result result = run(run_tuned, shape, 8);
    EXPECT_LE(result.error, 1e-5) << shape.stride;
    EXPECT_EQ(result.nonzero_padding, 0) << shape.stride;
    EXPECT_EQ(ran_tuned, want_tuned) << shape.stride;
  }
}

}  // namespace
}  // namespace optune::kernels::cpu
