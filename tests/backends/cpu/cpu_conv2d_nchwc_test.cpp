// conv2d on the kept NCHW[b]c layout (optune/kernels/cpu/conv2d_nchwc.hpp) computes
// kernels::reference's answer for every config of a compile-time list (lanes 4 and 8, oc_vectors
// 1..4, tiles narrower and wider than the outputs, each loop order and split, 1 and 2 threads,
// filter width constant or not) on layers with stride 2, padding, 1x1 (stride 1 read in place,
// stride 2 and 3 from a subsampled copy), 3x3 without padding (in place), 7x7, dilation 2, batch 2
// and odd extents, with C and K not multiples of the block. The input's padding channels hold
// junk, the output's must come back exactly zero, and both tensors end at a page that faults when
// touched, so a read or write past either one crashes the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/conv2d_nchwc.hpp"
#include "optune/kernels/layout.hpp"
#include "optune/kernels/cpu/tuned_conv2d.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"
#include "../../support/nchwc_check.hpp"

namespace optune::kernels::cpu {
namespace {

using test_support::Outcome;
Outcome run_blocked(const test_support::NchwcKernel& function, const Conv2dShape& shape, int block) {
  return test_support::run_blocked(Op::kConv2d, function, shape, block);
}

using Order = ConvLoopOrder;
using Split = ConvParallel;

constexpr Conv2dConfig conv(int lanes, int ocv, int owb, int ohb, bool unroll, Order order, int threads,
                            Split parallel, int ic_chunk = 0) {
  return Conv2dConfig{lanes, ocv, lanes, owb, ohb, unroll, order, threads, parallel, ic_chunk};
}

// ow_block 1..14 (wider than some layers' whole output), oh_block 1..4, oc_vectors 1..4 (blocks
// past K), each loop order and parallel split, 1 and 2 threads, unroll_kw on and off; ic_chunk
// (reduction passes, over bands of pixels on pointwise layers and of rows on the others) of one
// block, two blocks (a partial last pass at C = 40) and past C (one pass), on whole tiles, on the
// row's last tile of fewer columns and on tiles clipped through a scratch tile.
constexpr std::array kConfigs = {
    conv(8, 2, 6, 1, true, Order::kOcOuter, 1, Split::kOuter),
    conv(8, 1, 14, 1, false, Order::kRowOuter, 2, Split::kFused),
    conv(8, 2, 3, 2, true, Order::kOcOuter, 2, Split::kFused),
    conv(8, 3, 4, 1, false, Order::kRowOuter, 1, Split::kOuter),
    conv(8, 4, 2, 3, true, Order::kRowOuter, 2, Split::kOuter),
    conv(4, 4, 2, 3, true, Order::kOcOuter, 2, Split::kOuter),
    conv(4, 2, 5, 1, false, Order::kOcOuter, 2, Split::kFused),
    conv(4, 1, 1, 4, true, Order::kRowOuter, 2, Split::kFused),
    conv(4, 3, 7, 1, true, Order::kRowOuter, 1, Split::kFused),
    conv(8, 4, 3, 1, true, Order::kOcOuter, 2, Split::kFused),  // the hand-scheduled AVX2 tile
    conv(8, 4, 1, 3, false, Order::kRowOuter, 2, Split::kOuter),
    conv(8, 2, 6, 1, true, Order::kRowOuter, 2, Split::kOuter, 16),
    conv(8, 3, 4, 1, false, Order::kOcOuter, 2, Split::kFused, 8),
    conv(8, 1, 13, 1, true, Order::kOcOuter, 1, Split::kOuter, 64),
    conv(4, 4, 3, 1, true, Order::kRowOuter, 2, Split::kFused, 8),
    conv(8, 4, 3, 1, true, Order::kOcOuter, 2, Split::kFused, 16),  // kept 3x3 layers' default
    conv(8, 2, 4, 2, true, Order::kRowOuter, 1, Split::kOuter, 8),
#if defined(__AVX512F__)
    conv(16, 2, 6, 2, true, Order::kOcOuter, 2, Split::kFused),
#endif
};

using ConvFunction = void (*)(const Conv2dDims&, const float*, const float*, float*);
template <std::size_t... I>
constexpr auto instantiate(std::index_sequence<I...>) {
  return std::array<ConvFunction, sizeof...(I)>{&conv2d_nchwc<kConfigs[I]>...};
}

// N, C, H, W, K, R, S, stride, pad, dilation, groups; small enough that the list runs in seconds.
const std::vector<std::pair<std::string, Conv2dShape>>& layers() {
  static const std::vector<std::pair<std::string, Conv2dShape>> list = {
      {"3x3 pad 1", {1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1}},
      {"3x3 stride 2 pad 1, C 5, K 13", {1, 5, 15, 15, 13, 3, 3, 2, 1, 1, 1}},
      {"3x3 pad 1, C 40 (a partial last pass), K 35, 12x13", {1, 40, 12, 13, 35, 3, 3, 1, 1, 1, 1}},
      {"batch 2, 3x3 pad 1, C 64, K 64, 7x7 (resnet layer4-like)", {2, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1}},
      {"1x1 (in place, rows of whole tiles)", {1, 64, 7, 9, 48, 1, 1, 1, 0, 1, 1}},
      {"1x1 stride 2 (subsampled), C 13, K 5", {1, 13, 13, 13, 5, 1, 1, 2, 0, 1, 1}},
      {"1x1 stride 2 (subsampled), even extents", {1, 32, 14, 14, 24, 1, 1, 2, 0, 1, 1}},
      {"batch 2, 1x1 stride 3 (subsampled), C 9", {2, 9, 11, 10, 16, 1, 1, 3, 0, 1, 1}},
      {"batch 2, 1x1 (in place), K 21", {2, 16, 5, 5, 21, 1, 1, 1, 0, 1, 1}},
      {"7x7 stride 2 pad 3 (resnet conv1)", {1, 3, 32, 32, 64, 7, 7, 2, 3, 1, 1}},
      {"3x3 dilation 2 pad 2", {1, 8, 17, 19, 16, 3, 3, 1, 2, 2, 1}},
      {"5x3 no pad (in place), C 5, K 13", {1, 5, 11, 23, 13, 5, 3, 1, 0, 1, 1}},
      {"batch 2, 3x3 stride 2 no pad (in place)", {2, 12, 10, 9, 20, 3, 3, 2, 0, 1, 1}},
      {"batch 2, 2x2 stride 3 pad 2", {2, 7, 10, 9, 9, 2, 2, 3, 2, 1, 1}},
      {"output smaller than a tile, 1x1 (in place)", {1, 9, 3, 2, 17, 1, 1, 1, 0, 1, 1}},
      {"1x1, C 40 (5 blocks), K 35, plane 11x13", {1, 40, 11, 13, 35, 1, 1, 1, 0, 1, 1}},
      {"batch 2, 1x1 stride 2 (subsampled), C 37, K 24, plane 9x10", {2, 37, 17, 19, 24, 1, 1, 2, 0, 1, 1}},
      {"1x1, C 64, K 64, plane 10x10 (bands of 64 pixels, a partial band)", {1, 64, 10, 10, 64, 1, 1, 1, 0, 1, 1}},
      {"1x1, plane 40x40 (the fused split hands out runs of items)", {1, 16, 40, 40, 64, 1, 1, 1, 0, 1, 1}},
  };
  return list;
}

TEST(CpuConv2dNchwcKernel, EveryConfigMatchesTheReferenceOnEveryLayer) {
  constexpr auto functions = instantiate(std::make_index_sequence<kConfigs.size()>{});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const auto& [name, shape] : layers()) {
      const Outcome outcome = run_blocked(functions[i], shape, kConfigs[i].lanes);
      EXPECT_LE(outcome.error, 1e-5) << "config " << i << ", layer " << name;
      EXPECT_EQ(outcome.nonzero_padding, 0) << "config " << i << ", layer " << name;
    }
  }
}

constexpr Conv2dConfig kPackedConfig = conv(8, 2, 4, 2, true, Order::kOcOuter, 2, Split::kFused);

TEST(CpuConv2dNchwcKernel, PackedFilterWithAFixedWidthMatchesTheReference) {
  constexpr const Conv2dConfig& config = kPackedConfig;
  const auto with_packed = [](const Conv2dDims& d, const float* in, const float* f, float* out) {
    std::vector<float> packed(conv2d_packed_filter_size<config>(d));
    conv2d_pack_filter<config>(d, f, packed.data());
    for (int call = 0; call < 2; ++call) {  // the same packed weights twice
      if (d.S == 3) {
        conv2d_nchwc_packed<config, 3>(d, in, packed.data(), out);
      } else {
        conv2d_nchwc_packed<config, 0>(d, in, packed.data(), out);  // width read at run time
      }
    }
  };
  for (const Conv2dShape& shape : {Conv2dShape{1, 12, 9, 11, 20, 3, 3, 1, 1, 1, 1},
                                   Conv2dShape{1, 20, 8, 8, 12, 1, 1, 2, 0, 1, 1}}) {
    const Outcome outcome = run_blocked(with_packed, shape, config.lanes);
    EXPECT_LE(outcome.error, 1e-5) << shape.S;
    EXPECT_EQ(outcome.nonzero_padding, 0) << shape.S;
  }
}

// A table as `optune apply-best` writes it: a row tuned on nchw8c, and an NCHW row (a GEMM config,
// which the blocked kernel cannot run) of the same shape.
constexpr Conv2dDims kTunedDims{.N = 1, .C = 12, .H = 9, .W = 7, .K = 20, .R = 1, .S = 1, .stride = 1, .pad = 0};
constexpr std::array<TunedConv2d, 2> kTunedTable = {{
    {kTunedDims, Conv2dConfig{.lanes = 8, .oc_vectors = 1, .ic_block = 8, .ow_block = 5, .threads = 2}, 8},
    {kTunedDims, Conv2dConfig{.lanes = 8, .algorithm = ConvAlgorithm::kGemm}, 0},
}};

TEST(TunedConv2dNchwc, RunsTheKeptLayoutRowForItsShapeAndTheMovedDefaultElsewhere) {
  bool ran_tuned = false;
  const auto tuned = [&ran_tuned](const Conv2dDims& d, const float* in, const float* f, float* out) {
    ran_tuned = conv2d_nchwc_tuned<kTunedTable, Conv2dConfig{.algorithm = ConvAlgorithm::kGemm}, 8>(d, in, f, out);
  };
  for (const auto& [shape, want_tuned] : {std::pair{Conv2dShape{1, 12, 9, 7, 20, 1, 1, 1, 0, 1, 1}, true},
                                          std::pair{Conv2dShape{1, 12, 9, 7, 20, 3, 3, 1, 1, 1, 1}, false}}) {
    const Outcome outcome = run_blocked(tuned, shape, 8);
    EXPECT_LE(outcome.error, 1e-5) << shape.R;
    EXPECT_EQ(outcome.nonzero_padding, 0) << shape.R;
    EXPECT_EQ(ran_tuned, want_tuned) << shape.R;
  }
}

}  // namespace
}  // namespace optune::kernels::cpu
