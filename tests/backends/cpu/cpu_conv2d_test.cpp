// The CPU conv2d and depthwise conv2d kernels (optune/kernels/cpu/conv2d.hpp,
// depthwise_conv2d.hpp) compute kernels::reference's answer for every config of a compile-time
// list that covers every value of every config field (conv2d: direct and GEMM algorithms), on
// layers with stride 2, padding, 1x1, 7x7 (ResNet's conv1), dilation 2, batch 2 and odd extents
// that no block divides.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/depthwise_conv2d.hpp"
#include "optune/kernels/cpu/tuned_conv2d.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels::cpu {
namespace {

using Order = ConvLoopOrder;
using Split = ConvParallel;

constexpr Conv2dConfig conv(int lanes, int ocv, int ib, int owb, int ohb, bool unroll, Order order,
                            int threads, Split parallel) {
  return Conv2dConfig{lanes, ocv, ib, owb, ohb, unroll, order, threads, parallel};
}

constexpr Conv2dConfig gemm(int lanes, int threads, GemmConfig schedule) {
  Conv2dConfig c;
  c.lanes = lanes;
  c.threads = threads;
  c.algorithm = ConvAlgorithm::kGemm;
  c.gemm = schedule;
  return c;
}

// lanes 4 and 8 (16 with AVX-512); oc_vectors 1..4; ic_block 1..32, dividing the channels or
// not; ow_block 1..14; oh_block 1..4; each loop order and parallel split; 1 and 2 threads.
constexpr std::array kConvConfigs = {
    Conv2dConfig{},
    conv(8, 1, 1, 14, 1, false, Order::kRowOuter, 2, Split::kFused),
    conv(8, 2, 16, 3, 2, true, Order::kOcOuter, 2, Split::kFused),
    conv(8, 3, 4, 4, 1, false, Order::kRowOuter, 1, Split::kOuter),
    conv(4, 4, 32, 2, 3, true, Order::kOcOuter, 2, Split::kOuter),
    conv(4, 2, 3, 5, 1, false, Order::kOcOuter, 2, Split::kFused),
    conv(8, 1, 8, 1, 4, true, Order::kRowOuter, 2, Split::kOuter),
    // 3 pixels x 4 vectors of 8: the hand-scheduled AVX2 tile, along the width and along the height
    conv(8, 4, 3, 3, 1, true, Order::kRowOuter, 2, Split::kFused),
    conv(8, 4, 8, 1, 3, false, Order::kOcOuter, 1, Split::kOuter),
#if defined(__AVX512F__)
    conv(16, 2, 16, 6, 2, true, Order::kOcOuter, 2, Split::kFused),
#endif
    // The GEMM path: blocks smaller than the test layers (several mc/nc/kc blocks, partial
    // micro-tiles), each parallel loop and loop order, 1 and 2 threads.
    gemm(8, 2, GemmConfig{.mc = 96, .nc = 1024, .kc = 256, .mr = 6, .nr = 16}),
    gemm(8, 2, GemmConfig{.mc = 10, .nc = 48, .kc = 7, .mr = 5, .nr = 24, .loop_order = LoopOrder::kPcJcIc,
                          .unroll = 2, .parallel = ParallelLoop::kJr}),
    gemm(4, 1, GemmConfig{.mc = 8, .nc = 8, .kc = 30, .mr = 4, .nr = 8, .loop_order = LoopOrder::kIcPcJc,
                          .unroll = 8, .parallel = ParallelLoop::kIc}),
    gemm(8, 2, GemmConfig{.mc = 12, .nc = 32, .kc = 64, .mr = 3, .nr = 8, .unroll = 1,
                          .parallel = ParallelLoop::kIc}),
};

constexpr DepthwiseConv2dConfig depthwise(int lanes, int owv, int ohb, bool unroll, int threads) {
  return DepthwiseConv2dConfig{lanes, owv, ohb, unroll, threads};
}

constexpr DepthwiseConv2dConfig blocked(int lanes, int cv, int owb, int ohb, bool unroll, int threads) {
  DepthwiseConv2dConfig c{lanes, 1, ohb, unroll, threads};
  c.algorithm = DepthwiseAlgorithm::kBlocked;
  c.c_vectors = cv;
  c.ow_block = owb;
  return c;
}

// Rows: lanes 4 and 8 (16 with AVX-512); ow_vectors 1..8 (wider and narrower than the outputs);
// oh_block 1..8; filter width constant or not; 1 and 2 threads. Blocked: c_vectors 1..4 (channel
// blocks past C), ow_block 1..13, oh_block 1..3.
constexpr std::array kDepthwiseConfigs = {
    DepthwiseConv2dConfig{},
    depthwise(8, 1, 4, false, 2),
    depthwise(4, 3, 1, true, 2),
    depthwise(8, 4, 3, true, 1),
    depthwise(4, 8, 2, false, 2),
    depthwise(8, 2, 8, true, 2),
    blocked(8, 1, 8, 1, true, 2),
    blocked(8, 2, 4, 2, false, 2),
    blocked(4, 1, 13, 1, true, 2),
    blocked(8, 4, 1, 3, true, 1),
    blocked(4, 3, 5, 2, false, 2),
#if defined(__AVX512F__)
    depthwise(16, 1, 2, true, 2),
    blocked(16, 1, 8, 2, true, 2),
#endif
};

using ConvFunction = void (*)(const Conv2dDims&, const float*, const float*, float*);

template <const auto& Configs, template <auto> typename Kernel, std::size_t... I>
constexpr auto instantiate(std::index_sequence<I...>) {
  return std::array<ConvFunction, sizeof...(I)>{&Kernel<Configs[I]>::run...};
}
template <Conv2dConfig C>
struct ConvKernel {
  static void run(const Conv2dDims& d, const float* in, const float* f, float* out) {
    conv2d<C>(d, in, f, out);
  }
};
template <DepthwiseConv2dConfig C>
struct DepthwiseKernel {
  static void run(const Conv2dDims& d, const float* in, const float* f, float* out) {
    depthwise_conv2d<C>(d, in, f, out);
  }
};

Conv2dDims dims(const Conv2dShape& s) {
  return {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.stride, s.pad, s.dilation};
}

// Runs `function` on random operands of `workload` and returns the relative L2 error against
// the reference, with the output poisoned first.
double error_of(ConvFunction function, const Workload& workload) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  std::vector<const float*> pointers;
  for (std::size_t size : input_sizes(workload)) {
    inputs.emplace_back(size);
    for (float& x : inputs.back()) x = value(rng);
    pointers.push_back(inputs.back().data());
  }
  std::vector<float> got(output_size(workload), std::nanf("")), want(output_size(workload));
  reference(workload, pointers, want.data());
  function(dims(workload.conv()), pointers[0], pointers[1], got.data());
  return relative_l2_error(got.data(), want.data(), got.size());
}

// Layers named by what they exercise; small enough that the whole list runs in seconds.
const std::vector<std::pair<std::string, Conv2dShape>>& conv_layers() {
  static const std::vector<std::pair<std::string, Conv2dShape>> layers = {
      {"3x3 pad 1", {1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1}},
      {"3x3 stride 2", {1, 24, 15, 15, 40, 3, 3, 2, 1, 1, 1}},
      {"1x1", {1, 64, 7, 9, 48, 1, 1, 1, 0, 1, 1}},
      {"1x1 stride 2", {1, 32, 13, 13, 24, 1, 1, 2, 0, 1, 1}},
      {"7x7 stride 2 pad 3 (resnet conv1)", {1, 3, 32, 32, 64, 7, 7, 2, 3, 1, 1}},
      {"3x3 dilation 2", {1, 8, 17, 19, 16, 3, 3, 1, 2, 2, 1}},
      {"odd: 5x3 filter, C 5, K 11, no pad", {1, 5, 11, 23, 11, 5, 3, 1, 0, 1, 1}},
      {"batch 2, 2x2 stride 3 pad 2", {2, 7, 10, 9, 9, 2, 2, 3, 2, 1, 1}},
      {"1x1 stride 2, wide rows", {1, 6, 9, 70, 10, 1, 1, 2, 0, 1, 1}},
      {"3x3 stride 2 pad 1, 3 channels, wide rows", {1, 3, 11, 70, 8, 3, 3, 2, 1, 1, 1}},
  };
  return layers;
}

const std::vector<std::pair<std::string, Conv2dShape>>& depthwise_layers() {
  static const std::vector<std::pair<std::string, Conv2dShape>> layers = {
      {"3x3 pad 1", {1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 32}},
      {"3x3 stride 2", {1, 40, 15, 15, 40, 3, 3, 2, 1, 1, 40}},
      {"5x5 dilation 2", {1, 12, 17, 19, 12, 5, 5, 1, 4, 2, 12}},
      {"odd: 7 channels, 3x1 filter, no pad", {1, 7, 9, 11, 7, 3, 1, 1, 0, 1, 7}},
      {"batch 2, 7x7 stride 2 pad 3", {2, 19, 20, 21, 19, 7, 7, 2, 3, 1, 19}},
      {"stride 3, 4x4 dilation 2, pad 2", {1, 5, 23, 29, 5, 4, 4, 3, 2, 2, 5}},
      {"wide odd rows, 3x3 stride 2", {1, 3, 9, 45, 3, 3, 3, 2, 1, 1, 3}},
      {"1x1 stride 2", {1, 6, 8, 10, 6, 1, 1, 2, 0, 1, 6}},
  };
  return layers;
}

TEST(CpuConv2dKernel, EveryConfigMatchesTheReferenceOnEveryLayer) {
  constexpr auto functions = instantiate<kConvConfigs, ConvKernel>(
      std::make_index_sequence<kConvConfigs.size()>{});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const auto& [name, shape] : conv_layers()) {
      const Workload workload{Op::kConv2d, DataType::kF32, shape};
      EXPECT_LE(error_of(functions[i], workload), 1e-5) << "config " << i << ", layer " << name;
    }
  }
}

TEST(CpuDepthwiseConv2dKernel, EveryConfigMatchesTheReferenceOnEveryLayer) {
  constexpr auto functions = instantiate<kDepthwiseConfigs, DepthwiseKernel>(
      std::make_index_sequence<kDepthwiseConfigs.size()>{});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (const auto& [name, shape] : depthwise_layers()) {
      const Workload workload{Op::kDepthwiseConv2d, DataType::kF32, shape};
      EXPECT_LE(error_of(functions[i], workload), 1e-5) << "config " << i << ", layer " << name;
    }
  }
}

TEST(CpuConv2dKernel, PackedFilterIsReusedAcrossCalls) {
  constexpr Conv2dConfig config{.oc_vectors = 1, .ic_block = 4, .ow_block = 4};
  const Conv2dShape shape{1, 6, 9, 9, 10, 3, 3, 1, 1, 1, 1};
  const Workload workload{Op::kConv2d, DataType::kF32, shape};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> input(input_sizes(workload)[0]), filter(input_sizes(workload)[1]);
  for (float& x : filter) x = value(rng);
  std::vector<float> packed(conv2d_packed_filter_size<config>(dims(shape)));
  conv2d_pack_filter<config>(dims(shape), filter.data(), packed.data());
  for (int call = 0; call < 2; ++call) {  // new input, same packed weights
    for (float& x : input) x = value(rng);
    std::vector<float> got(output_size(workload), std::nanf("")), want(output_size(workload));
    reference(workload, {input.data(), filter.data()}, want.data());
    conv2d_packed<config>(dims(shape), input.data(), packed.data(), got.data());
    EXPECT_LE(relative_l2_error(got.data(), want.data(), got.size()), 1e-5) << "call " << call;
  }
}

// Tables as `optune apply-best` writes them: one tuned row each.
constexpr std::array<TunedConv2d, 2> kTunedConv2d = {{
    {Conv2dDims{.N = 1, .C = 8, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1},
     Conv2dConfig{.lanes = 4, .oc_vectors = 1, .ic_block = 4, .ow_block = 3}},
    {Conv2dDims{.N = 1, .C = 8, .H = 9, .W = 9, .K = 16, .R = 1, .S = 1, .stride = 2, .pad = 0},
     Conv2dConfig{.lanes = 8, .threads = 2, .algorithm = ConvAlgorithm::kGemm,
                  .gemm = GemmConfig{.mc = 12, .nc = 16, .kc = 8, .mr = 4, .nr = 8, .parallel = ParallelLoop::kIc}}},
}};
constexpr std::array<TunedDepthwiseConv2d, 2> kTunedDepthwise = {{
    {Conv2dDims{.N = 1, .C = 8, .H = 9, .W = 9, .K = 8, .R = 3, .S = 3, .stride = 2, .pad = 1},
     DepthwiseConv2dConfig{.lanes = 4, .ow_vectors = 2, .oh_block = 3}},
    {Conv2dDims{.N = 1, .C = 12, .H = 9, .W = 9, .K = 12, .R = 3, .S = 3, .stride = 1, .pad = 1},
     DepthwiseConv2dConfig{.lanes = 8, .oh_block = 2, .threads = 2, .algorithm = DepthwiseAlgorithm::kBlocked,
                           .c_vectors = 1, .ow_block = 5}},
}};

TEST(TunedConv2d, RunsTheTunedRowForItsShapeAndTheFallbackElsewhere) {
  const std::vector<std::pair<Conv2dShape, bool>> cases = {
      {{1, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1}, true}, {{1, 8, 9, 9, 16, 3, 3, 2, 1, 1, 1}, false},
      {{1, 8, 9, 9, 16, 1, 1, 2, 0, 1, 1}, true}};  // a GEMM-path row
  for (const auto& [shape, tuned] : cases) {
    const Workload workload{Op::kConv2d, DataType::kF32, shape};
    bool ran_tuned = false;
    const double error = error_of(
        [](const Conv2dDims& d, const float* in, const float* f, float* out) {
          conv2d_tuned<kTunedConv2d, Conv2dConfig{}>(d, in, f, out);
        },
        workload);
    EXPECT_LE(error, 1e-5);
    std::vector<float> input(input_sizes(workload)[0], 1.0f), filter(input_sizes(workload)[1], 1.0f);
    std::vector<float> output(output_size(workload));
    ran_tuned = conv2d_tuned<kTunedConv2d, Conv2dConfig{}>(dims(shape), input.data(), filter.data(),
                                                           output.data());
    EXPECT_EQ(ran_tuned, tuned) << shape.stride;
  }
  // A rows row and a blocked row (whose filter the call packs).
  for (const Conv2dShape& dw_shape : {Conv2dShape{1, 8, 9, 9, 8, 3, 3, 2, 1, 1, 8},
                                      Conv2dShape{1, 12, 9, 9, 12, 3, 3, 1, 1, 1, 12}}) {
    const Workload dw{Op::kDepthwiseConv2d, DataType::kF32, dw_shape};
    EXPECT_LE(error_of(
                  [](const Conv2dDims& d, const float* in, const float* f, float* out) {
                    EXPECT_TRUE((depthwise_conv2d_tuned<kTunedDepthwise, DepthwiseConv2dConfig{}>(
                        d, in, f, out)));
                  },
                  dw),
              1e-5)
        << dw_shape.C;
  }
}

// A leaf of a measured dispatch: one row holding batch 2 to 16 of a layer (and nothing else).
constexpr std::array<TunedConv2d, 1> kBatchRange = {{
    {Conv2dDims{.N = 2, .C = 8, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1},
     Conv2dConfig{.lanes = 4, .oc_vectors = 1, .ic_block = 4, .ow_block = 3}, 0, false,
     Conv2dDims{.N = 16, .C = 8, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1}},
}};

TEST(TunedConv2d, ARangeRowRunsEveryShapeOfItsBoxAndNoOther) {
  for (const auto& [batch, held] : std::vector<std::pair<std::int64_t, bool>>{{1, false}, {2, true}, {7, true},
                                                                              {16, true}, {17, false}}) {
    const Conv2dShape shape{batch, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1};
    const Workload workload{Op::kConv2d, DataType::kF32, shape};
    EXPECT_LE(error_of([](const Conv2dDims& d, const float* in, const float* f,
                          float* out) { conv2d_tuned<kBatchRange, Conv2dConfig{}>(d, in, f, out); },
                       workload),
              1e-5);
    std::vector<float> input(input_sizes(workload)[0], 1.0f), filter(input_sizes(workload)[1], 1.0f);
    std::vector<float> output(output_size(workload));
    EXPECT_EQ((conv2d_tuned<kBatchRange, Conv2dConfig{}>(dims(shape), input.data(), filter.data(), output.data())),
              held)
        << "batch " << batch;
  }
  // Another channel count within no box.
  EXPECT_FALSE(holds(kBatchRange[0].dims, kBatchRange[0].upper,
                     Conv2dDims{.N = 4, .C = 9, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3, .stride = 1, .pad = 1}));
}

}  // namespace
}  // namespace optune::kernels::cpu
