// A network's first layer on a kept layout (conv2d_nchw_to_nchwc, conv2d_nchwc.hpp): an NCHW input
// (the image) copied into input-channel blocks of any size, the output written in NCHW[lanes]c.
// Every config of a compile-time list (ic_block 1, 2, 4 and 8 on 3 channels, lanes 4 and 8,
// oc_vectors 1..4, tiles narrower and wider than the outputs, each loop order and split, 1 and 2
// threads, filter width constant or not) on stem-like layers with stride 2, padding, 7x7 and 3x3
// filters, odd extents and K not a multiple of the block computes kernels::reference's answer;
// the output's padding channels come back exactly zero and both tensors end at a page that
// faults when touched. The tuned dispatch runs the row tuned for a first layer on its layout.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/conv2d_nchwc.hpp"
#include "optune/kernels/cpu/tuned_conv2d.hpp"
#include "optune/kernels/workload.hpp"
#include "../../support/nchwc_check.hpp"

namespace optune::kernels::cpu {
namespace {

using test_support::Outcome;
using Order = ConvLoopOrder;
using Split = ConvParallel;

Outcome run_first_layer(const test_support::NchwcKernel& function, const Conv2dShape& shape, int block) {
  return test_support::run_blocked(Op::kConv2d, function, shape, block, /*nchw_input=*/true);
}

constexpr Conv2dConfig conv(int lanes, int ocv, int ib, int owb, int ohb, bool unroll, Order order, int threads,
                            Split parallel) {
  return Conv2dConfig{lanes, ocv, ib, owb, ohb, unroll, order, threads, parallel};
}

constexpr std::array kConfigs = {
    conv(8, 2, 1, 6, 1, true, Order::kRowOuter, 2, Split::kFused),
    conv(8, 2, 4, 6, 1, true, Order::kOcOuter, 1, Split::kOuter),
    conv(8, 4, 1, 3, 1, false, Order::kRowOuter, 2, Split::kOuter),
    conv(8, 1, 2, 12, 1, true, Order::kOcOuter, 2, Split::kFused),
    conv(8, 3, 8, 2, 2, false, Order::kRowOuter, 1, Split::kFused),
    conv(4, 2, 1, 5, 2, true, Order::kOcOuter, 2, Split::kFused),
    conv(4, 4, 4, 1, 3, true, Order::kRowOuter, 2, Split::kOuter),
};

using ConvFunction = void (*)(const Conv2dDims&, const float*, const float*, float*);
template <std::size_t... I>
constexpr auto instantiate(std::index_sequence<I...>) {
  return std::array<ConvFunction, sizeof...(I)>{&conv2d_nchw_to_nchwc<kConfigs[I]>...};
}

// N, C, H, W, K, R, S, stride, pad, dilation, groups.
const std::vector<std::pair<std::string, Conv2dShape>>& layers() {
  static const std::vector<std::pair<std::string, Conv2dShape>> list = {
      {"7x7 stride 2 pad 3 (resnet conv1)", {1, 3, 30, 32, 64, 7, 7, 2, 3, 1, 1}},
      {"3x3 stride 2 pad 1 (mobilenet conv0), odd extents", {1, 3, 27, 25, 32, 3, 3, 2, 1, 1, 1}},
      {"batch 2, 3x3 pad 1, K 13", {2, 3, 9, 11, 13, 3, 3, 1, 1, 1, 1}},
      {"C 5, 5x5 stride 3 no pad, K 6", {1, 5, 17, 16, 6, 5, 5, 3, 0, 1, 1}},
      {"output smaller than a tile", {1, 3, 4, 5, 9, 3, 3, 2, 1, 1, 1}},
  };
  return list;
}

TEST(CpuConv2dNchwToNchwcKernel, EveryConfigMatchesTheReferenceOnEveryLayer) {
  constexpr auto functions = instantiate(std::make_index_sequence<kConfigs.size()>{});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const auto& [name, shape] : layers()) {
      const Outcome outcome = run_first_layer(functions[i], shape, kConfigs[i].lanes);
      EXPECT_LE(outcome.error, 1e-5) << "config " << i << ", layer " << name;
      EXPECT_EQ(outcome.nonzero_padding, 0) << "config " << i << ", layer " << name;
    }
  }
}

// A table as `optune apply-best` writes it: a first-layer row (NCHW into nchw8c) and a kept-layout
// row of the same shape, whose config (ic_block 8 on the layout) is not the first layer's.
constexpr Conv2dDims kStemDims{.N = 1, .C = 3, .H = 19, .W = 17, .K = 24, .R = 3, .S = 3, .stride = 2, .pad = 1};
constexpr std::array<TunedConv2d, 2> kTunedTable = {{
    {kStemDims, Conv2dConfig{.lanes = 8, .oc_vectors = 3, .ic_block = 8, .ow_block = 4, .threads = 2}, 8},
    {kStemDims, Conv2dConfig{.lanes = 8, .oc_vectors = 1, .ic_block = 1, .ow_block = 5, .threads = 2}, 8, true},
}};

TEST(TunedConv2dNchwToNchwc, RunsTheFirstLayerRowForItsShapeAndTheMovedDefaultElsewhere) {
  bool ran_tuned = false;
  const auto tuned = [&ran_tuned](const Conv2dDims& d, const float* in, const float* f, float* out) {
    ran_tuned = conv2d_nchw_to_nchwc_tuned<kTunedTable, Conv2dConfig{.algorithm = ConvAlgorithm::kGemm}, 8>(
        d, in, f, out);
  };
  for (const auto& [shape, want_tuned] : {std::pair{Conv2dShape{1, 3, 19, 17, 24, 3, 3, 2, 1, 1, 1}, true},
                                          std::pair{Conv2dShape{1, 3, 19, 17, 24, 3, 3, 1, 1, 1, 1}, false}}) {
    const Outcome outcome = run_first_layer(tuned, shape, 8);
    EXPECT_LE(outcome.error, 1e-5) << shape.stride;
    EXPECT_EQ(outcome.nonzero_padding, 0) << shape.stride;
    EXPECT_EQ(ran_tuned, want_tuned) << shape.stride;
  }
}

}  // namespace
}  // namespace optune::kernels::cpu
