// The "conv2d.cpu" and "depthwise_conv2d.cpu" templates: they are registered, their spaces hold
// valid configs the sampler finds, every valid config is a kernel that can be instantiated, the
// default config is valid for any shape and device, and emitted candidates (the default and a
// random sample per layer) compile with the builder's flags, load and compute the reference's
// answer on layers with stride 2, padding, 1x1, 7x7, dilation 2 and odd extents.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "optune/kernels/cpu/conv2d_config_view.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/reference.hpp"
#include "../../support/test_devices.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
namespace fs = std::filesystem;

using test_support::avx2_device;
using test_support::avx512_device;
using test_support::neon_device;

// The ISA this test is compiled for (-march=native), which the emitted candidates also get.
DeviceInfo this_device() {
  DeviceInfo device = avx2_device(2);
#if defined(__AVX512F__)
  device.isa.push_back("avx512f");
#elif !defined(__AVX2__)
  device.isa = {"sse4_2"};
#endif
  return device;
}

Workload conv(Conv2dShape shape) { return Workload{Op::kConv2d, DataType::kF32, shape}; }
Workload depthwise(Conv2dShape shape) {
  shape.K = shape.C;
  shape.groups = shape.C;
  return Workload{Op::kDepthwiseConv2d, DataType::kF32, shape};
}

const KernelTemplate& cpu_conv2d() { return backends::find_template("conv2d.cpu"); }
const KernelTemplate& cpu_conv2d_gemm() { return backends::find_template("conv2d_gemm.cpu"); }
// The conv2d template a layer gets by default: conv2d_gemm.cpu on the layers it applies to (1x1
// filters and few input channels on NCHW), else conv2d.cpu.
const KernelTemplate& cpu_conv2d(const Workload& workload, const DeviceInfo& device) {
  return backends::default_template(workload, "cpu", device);
}
const KernelTemplate& cpu_depthwise() { return backends::find_template("depthwise_conv2d.cpu"); }

// ResNet-18 and MobileNet layers, and small layers that exercise every edge.
std::vector<Workload> conv_layers() {
  return {conv({1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1}),   conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}),
          conv({1, 64, 56, 56, 128, 1, 1, 2, 0, 1, 1}),   conv({1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1}),
          conv({1, 1024, 7, 7, 1024, 1, 1, 1, 0, 1, 1}),  conv({1, 3, 224, 224, 32, 3, 3, 2, 1, 1, 1}),
          conv({1, 5, 11, 23, 11, 5, 3, 1, 0, 1, 1}),     conv({2, 7, 10, 9, 9, 2, 2, 3, 2, 1, 1}),
          conv({1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1})};
}
std::vector<Workload> depthwise_layers() {
  return {depthwise({1, 32, 112, 112, 0, 3, 3, 1, 1, 1, 1}), depthwise({1, 512, 14, 14, 0, 3, 3, 2, 1, 1, 1}),
          depthwise({1, 1024, 7, 7, 0, 3, 3, 1, 1, 1, 1}), depthwise({1, 7, 9, 11, 0, 3, 1, 1, 0, 1, 1}),
          depthwise({1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1})};
}

TEST(CpuConv2dTemplate, BothAreFoundByOpAndBackend) {
  EXPECT_EQ(cpu_conv2d().name(), "conv2d.cpu");
  EXPECT_EQ(cpu_depthwise().name(), "depthwise_conv2d.cpu");
  EXPECT_EQ(cpu_depthwise().op(), Op::kDepthwiseConv2d);
  EXPECT_EQ(cpu_conv2d().backend(), "cpu");
}

TEST(CpuConv2dTemplate, GroupedConvolutionIsRejectedWithAReason) {
  const Workload grouped = conv({1, 8, 14, 14, 8, 3, 3, 1, 1, 1, 2});
  try {
    cpu_conv2d(grouped, avx2_device(2)).space(grouped, avx2_device(2));
    FAIL() << "groups = 2 accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("groups"), std::string::npos) << error.what();
  }
}

TEST(CpuConv2dTemplate, DefaultConfigIsValidForAnyShapeAndDevice) {
  for (const DeviceInfo& device : {avx2_device(1), avx2_device(2), avx512_device(), neon_device()}) {
    for (const Workload& workload : conv_layers()) {
      const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
      const ss::Config config = cpu_conv2d(workload, device).default_config(workload, device, space);
      EXPECT_EQ(space.first_violation(config), "") << workload.key() << " " << device.arch;
      const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, config));
      EXPECT_EQ(cpu::conv2d_config_error(c), nullptr) << workload.key();
      EXPECT_EQ(c.threads, device.cores);
      EXPECT_EQ(c.lanes, device.simd_f32_lanes());
    }
    for (const Workload& workload : depthwise_layers()) {
      const ss::ConfigSpace space = cpu_depthwise().space(workload, device);
      const ss::Config config = cpu_depthwise().default_config(workload, device, space);
      EXPECT_EQ(space.first_violation(config), "") << workload.key() << " " << device.arch;
      const auto c = cpu::depthwise_conv2d_config_from_view(ss::ConfigView(space, config));
      EXPECT_EQ(cpu::depthwise_conv2d_config_error(c), nullptr) << workload.key();
    }
  }
}

TEST(CpuConv2dTemplate, SamplerFindsManyValidConfigsAndEachIsAnInstantiableKernel) {
  for (const DeviceInfo& device : {avx2_device(2), avx512_device(), neon_device()}) {
    const Workload workload = conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1});
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    std::mt19937_64 rng(11);
    const auto configs = space.sample_valid_distinct(rng, 1000);
    EXPECT_EQ(configs.size(), 1000u) << device.arch;
    for (const ss::Config& config : configs) {
      const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, config));
      EXPECT_EQ(cpu::conv2d_config_error(c), nullptr) << space.to_json(config).dump();
      EXPECT_LE(c.lanes, std::max(4, device.simd_f32_lanes()));
    }
    const Workload dw = depthwise({1, 128, 56, 56, 0, 3, 3, 1, 1, 1, 1});
    const ss::ConfigSpace dw_space = cpu_depthwise().space(dw, device);
    const auto dw_configs = dw_space.sample_valid_distinct(rng, 200);
    EXPECT_EQ(dw_configs.size(), 200u) << device.arch;
    for (const ss::Config& config : dw_configs) {
      const auto c = cpu::depthwise_conv2d_config_from_view(ss::ConfigView(dw_space, config));
      EXPECT_EQ(cpu::depthwise_conv2d_config_error(c), nullptr) << dw_space.to_json(config).dump();
    }
  }
}

TEST(CpuConv2dTemplate, OneByOneAndFewChannelLayersRunAsGemmsOthersDirect) {
  const DeviceInfo device = avx2_device(2);
  const std::vector<std::pair<Workload, cpu::ConvAlgorithm>> cases = {
      {conv({1, 64, 56, 56, 128, 1, 1, 2, 0, 1, 1}), cpu::ConvAlgorithm::kGemm},     // downsample
      {conv({1, 512, 14, 14, 512, 1, 1, 1, 0, 1, 1}), cpu::ConvAlgorithm::kGemm},    // pointwise
      {conv({1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1}), cpu::ConvAlgorithm::kGemm},     // RGB stem
      {conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}), cpu::ConvAlgorithm::kDirect},
      {conv({1, 8, 17, 19, 16, 3, 3, 1, 2, 2, 1}), cpu::ConvAlgorithm::kDirect}};
  for (const auto& [workload, algorithm] : cases) {
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    const ss::Config config = cpu_conv2d(workload, device).default_config(workload, device, space);
    const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, config));
    EXPECT_EQ(c.algorithm, algorithm) << workload.key();
    const bool gemm = algorithm == cpu::ConvAlgorithm::kGemm;
    EXPECT_EQ(space.to_json(config).at("algorithm"), gemm ? "gemm" : "direct") << workload.key();
    // Each space holds only its algorithm's knobs (lanes and threads are shared).
    EXPECT_EQ(space.to_json(config).contains("gemm_mr"), gemm) << workload.key();
    EXPECT_EQ(space.to_json(config).contains("oc_vectors"), !gemm) << workload.key();
    if (gemm) {
      EXPECT_EQ(c.gemm.threads, 2);
      EXPECT_EQ(c.gemm.lanes, 8);
      EXPECT_TRUE(c.gemm.pack_a && c.gemm.pack_b);
    }
  }
  // Few output pixels to share: the default splits the output channels instead.
  const Workload small = conv({1, 1024, 7, 7, 1024, 1, 1, 1, 0, 1, 1});
  const ss::ConfigSpace space = cpu_conv2d(small, device).space(small, device);
  const auto c = cpu::conv2d_config_from_view(ss::ConfigView(space, cpu_conv2d(small, device).default_config(small, device, space)));
  EXPECT_EQ(c.gemm.parallel, cpu::ParallelLoop::kIc);
}

TEST(CpuConv2dTemplate, DepthwiseLayersWithNarrowOutputsRunBlockedOthersOnRows) {
  const DeviceInfo device = avx2_device(2);
  const std::vector<std::pair<Workload, cpu::DepthwiseAlgorithm>> cases = {
      {depthwise({1, 32, 112, 112, 0, 3, 3, 1, 1, 1, 1}), cpu::DepthwiseAlgorithm::kRows},
      {depthwise({1, 256, 28, 28, 0, 3, 3, 1, 1, 1, 1}), cpu::DepthwiseAlgorithm::kRows},      // Q = 28
      {depthwise({1, 256, 28, 28, 0, 3, 3, 2, 1, 1, 1}), cpu::DepthwiseAlgorithm::kBlocked},   // Q = 14
      {depthwise({1, 1024, 7, 7, 0, 3, 3, 1, 1, 1, 1}), cpu::DepthwiseAlgorithm::kBlocked}};
  for (const auto& [workload, algorithm] : cases) {
    const ss::ConfigSpace space = cpu_depthwise().space(workload, device);
    const ss::Config config = cpu_depthwise().default_config(workload, device, space);
    const auto c = cpu::depthwise_conv2d_config_from_view(ss::ConfigView(space, config));
    EXPECT_EQ(c.algorithm, algorithm) << workload.key();
    const bool rows = algorithm == cpu::DepthwiseAlgorithm::kRows;
    EXPECT_EQ(space.to_json(config).at("algorithm"), rows ? "rows" : "blocked") << workload.key();
    EXPECT_EQ(space.to_json(config).contains("ow_vectors"), rows) << workload.key();
    EXPECT_EQ(space.to_json(config).contains("c_vectors"), !rows) << workload.key();
    const std::string literal = cpu_depthwise().config_literal(ss::ConfigView(space, config));
    EXPECT_EQ(literal.find("DepthwiseAlgorithm::kBlocked") != std::string::npos, !rows) << literal;
  }
}

Workload kept(Workload workload, int block) {
  workload.layout_block = block;
  return workload;
}

// The direct default cuts the output's rows into tiles of equal width, as wide as the registers
// allow (14 with 32 registers and two vectors of output channels, 6 on AVX2): a short last tile
// costs nearly a whole one (docs/performance/cpu-conv.md, 2026-12-01).
TEST(CpuConv2dTemplate, DirectDefaultCutsRowsIntoTilesOfEqualWidth) {
  const std::vector<std::tuple<DeviceInfo, Conv2dShape, int>> cases = {
      {avx512_device(), {1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1}, 14},  // 2 x 14, not 12 + 12 + 4
      {avx512_device(), {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}, 14},    // 4 x 14
      {avx512_device(), {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1}, 7},     // the whole row
      {avx512_device(), {1, 32, 17, 17, 40, 3, 3, 1, 1, 1, 1}, 9},     // 9 + 8
      {avx2_device(2), {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1}, 5},    // 5 + 5 + 4, not 6 + 6 + 2
      {avx2_device(2), {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1}, 4}};     // 4 + 3
  for (const auto& [device, shape, ow_block] : cases) {
    const Workload workload = conv(shape);
    const KernelTemplate& direct = cpu_conv2d();
    const ss::ConfigSpace space = direct.space(workload, device);
    const auto c = cpu::conv2d_config_from_view(ss::ConfigView(space, direct.default_config(workload, device, space)));
    EXPECT_EQ(c.ow_block, ow_block) << workload.key() << " on " << device.name;
  }
}

// The blocked default tiles the output's width without a partial column tile where a width of
// 4..8 pixels divides it (MobileNet's widths are multiples of 7), else takes 8 pixels.
TEST(CpuConv2dTemplate, BlockedDepthwiseDefaultTileDividesTheOutputWidth) {
  const DeviceInfo device = avx2_device(2);
  const std::vector<std::pair<Workload, int>> cases = {
      {kept(depthwise({1, 128, 56, 56, 0, 3, 3, 1, 1, 1, 1}), 8), 8},    // Q = 56
      {kept(depthwise({1, 128, 56, 56, 0, 3, 3, 2, 1, 1, 1}), 8), 7},    // Q = 28
      {kept(depthwise({1, 512, 14, 14, 0, 3, 3, 1, 1, 1, 1}), 8), 7},    // Q = 14
      {depthwise({1, 1024, 7, 7, 0, 3, 3, 1, 1, 1, 1}), 7},              // NCHW, Q = 7
      {kept(depthwise({1, 64, 30, 30, 0, 3, 3, 1, 1, 1, 1}), 8), 6},     // Q = 30
      {kept(depthwise({1, 64, 13, 13, 0, 3, 3, 1, 1, 1, 1}), 8), 8},     // Q = 13: none divides
      {kept(depthwise({1, 64, 3, 3, 0, 3, 3, 1, 1, 1, 1}), 8), 3}};      // the whole row
  for (const auto& [workload, ow_block] : cases) {
    const ss::ConfigSpace space = cpu_depthwise().space(workload, device);
    const auto c = cpu::depthwise_conv2d_config_from_view(
        ss::ConfigView(space, cpu_depthwise().default_config(workload, device, space)));
    EXPECT_EQ(c.algorithm, cpu::DepthwiseAlgorithm::kBlocked) << workload.key();
    EXPECT_EQ(c.ow_block, ow_block) << workload.key();
  }
}

// On a kept NCHW[b]c layout the layout is the kernels' blocked image: lanes and ic_block are b,
// conv2d runs direct (1x1 layers too) and depthwise blocked; a block wider than the device's
// vectors, and the OpenCL templates (NCHW only), refuse the workload with a reason.
TEST(CpuConv2dTemplate, KeptLayoutSpacesTakeTheLayoutsBlock) {
  const DeviceInfo device = avx2_device(2);
  for (const Workload& workload : {kept(conv({1, 64, 56, 56, 128, 1, 1, 2, 0, 1, 1}), 8),
                                   kept(conv({1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1}), 8),
                                   kept(conv({1, 13, 9, 9, 5, 3, 3, 1, 1, 1, 1}), 4)}) {
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    const ss::Config config = cpu_conv2d(workload, device).default_config(workload, device, space);
    EXPECT_EQ(space.first_violation(config), "") << workload.key();
    std::mt19937_64 rng(3);
    auto configs = space.sample_valid_distinct(rng, 50);
    configs.push_back(config);
    for (const ss::Config& sample : configs) {
      const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, sample));
      EXPECT_EQ(c.algorithm, cpu::ConvAlgorithm::kDirect) << workload.key();
      EXPECT_EQ(c.lanes, workload.layout_block) << workload.key();
      EXPECT_EQ(c.ic_block, workload.layout_block) << workload.key();
    }
    EXPECT_NE(cpu_conv2d(workload, device).emit_source(workload, device, ss::ConfigView(space, config)).find("conv2d_nchwc_packed<"),
              std::string::npos);
  }
  const Workload dw = kept(depthwise({1, 32, 112, 112, 0, 3, 3, 1, 1, 1, 1}), 8);  // rows on NCHW
  const ss::ConfigSpace dw_space = cpu_depthwise().space(dw, device);
  const auto c = cpu::depthwise_conv2d_config_from_view(
      ss::ConfigView(dw_space, cpu_depthwise().default_config(dw, device, dw_space)));
  EXPECT_EQ(c.algorithm, cpu::DepthwiseAlgorithm::kBlocked);
  EXPECT_EQ(c.lanes, 8);

  const Workload wide = kept(conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}), 16);
  EXPECT_NO_THROW(cpu_conv2d(wide, avx512_device()).space(wide, avx512_device()));
  for (const KernelTemplate* kernel : backends::all_templates()) {
    if (kernel->op() != Op::kConv2d) continue;
    try {
      kernel->space(wide, device);
      FAIL() << kernel->name() << " took nchw16c on AVX2";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("nchw16c"), std::string::npos) << error.what();
    }
  }
}

Workload first_layer(Workload workload, int block) {
  workload.layout_block = block;
  workload.nchw_input = true;
  return workload;
}

// A first layer reading NCHW into a kept layout runs direct with the layout's lanes, copying its
// input into blocks of any size as on NCHW (1, 2 or 4 for 3 channels: none past next_pow2(C)); the
// default's blocks hold no zero channels (1 for 3 channels).
TEST(CpuConv2dTemplate, FirstLayersReadNchwIntoTheLayoutsVectors) {
  const DeviceInfo device = avx2_device(2);
  const Workload stem = first_layer(conv({1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1}), 8);
  const ss::ConfigSpace space = cpu_conv2d(stem, device).space(stem, device);
  const ss::Config config = cpu_conv2d(stem, device).default_config(stem, device, space);
  EXPECT_EQ(space.first_violation(config), "");
  EXPECT_EQ(cpu::conv2d_config_from_view(ss::ConfigView(space, config)).ic_block, 1);
  std::set<int> ic_blocks;
  std::mt19937_64 rng(5);
  for (const ss::Config& sample : space.sample_valid_distinct(rng, 200)) {
    const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, sample));
    EXPECT_EQ(c.algorithm, cpu::ConvAlgorithm::kDirect);
    EXPECT_EQ(c.lanes, 8);
    ic_blocks.insert(c.ic_block);
  }
  EXPECT_EQ(ic_blocks, (std::set<int>{1, 2, 4}));
  const std::string source = cpu_conv2d(stem, device).emit_source(stem, device, ss::ConfigView(space, config));
  EXPECT_NE(source.find("conv2d_nchw_to_nchwc_packed<kConfig, 7, 2>"), std::string::npos) << source;
  EXPECT_NE(cpu_conv2d(stem, device).table_row(stem, device, ss::ConfigView(space, config)).find(", 8, true}"), std::string::npos);
}

// Pointwise layers on a kept layout (1x1, no pad, any stride) run the pointwise kernel: their
// spaces have ic_chunk (input channels per reduction pass, shorter than C, or all) and oh_block
// fixed to 1; the chunk reaches the config and its literal. Other spaces (a first layer reading
// NCHW into the layout too: another kernel) have no ic_chunk, so
// their records read back as before. The default walks bands of pixels outermost, split as
// whole bands where a plane has 4 per thread (112x112), else on the fused loop (14x14).
// conv2d.cpu's default config of `workload` on `device`, as the kernel reads it.
cpu::Conv2dConfig default_of(const Workload& workload, const DeviceInfo& device) {
  const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
  return cpu::conv2d_config_from_view(ss::ConfigView(space, cpu_conv2d(workload, device).default_config(workload, device, space)));
}

TEST(CpuConv2dTemplate, KeptPointwiseSpacesHaveReductionPassesAndOneRowTiles) {
  const DeviceInfo device = avx2_device(2);
  for (const Workload& workload : {kept(conv({1, 256, 28, 28, 256, 1, 1, 1, 0, 1, 1}), 8),
                                   kept(conv({1, 128, 28, 28, 256, 1, 1, 2, 0, 1, 1}), 8)}) {
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    std::set<int> chunks;
    std::mt19937_64 rng(11);
    for (const ss::Config& config : space.sample_valid_distinct(rng, 400)) {
      const ss::ConfigView view(space, config);
      const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(view);
      chunks.insert(c.ic_chunk);
      EXPECT_EQ(c.oh_block, 1) << workload.key();
      EXPECT_EQ(cpu::conv2d_config_error(c), nullptr) << space.to_json(config).dump();
      const std::string literal = cpu_conv2d(workload, device).config_literal(view);
      EXPECT_EQ(literal.find(".ic_chunk = " + std::to_string(c.ic_chunk)) != std::string::npos, c.ic_chunk > 0)
          << literal;
    }
    const std::set<int> below_c = workload.conv().C == 256 ? std::set<int>{0, 32, 64, 128} : std::set<int>{0, 32, 64};
    EXPECT_EQ(chunks, below_c) << workload.key();
  }
  for (const Workload& workload : {first_layer(conv({1, 64, 14, 14, 24, 1, 1, 1, 0, 1, 1}), 8),
                                   conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1})}) {
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    EXPECT_THROW(space.knob_index("ic_chunk"), std::out_of_range) << workload.key();
    const ss::Config config = cpu_conv2d(workload, device).default_config(workload, device, space);
    EXPECT_EQ(cpu::conv2d_config_from_view(ss::ConfigView(space, config)).ic_chunk, 0) << workload.key();
  }
  const cpu::Conv2dConfig large = default_of(kept(conv({1, 32, 112, 112, 64, 1, 1, 1, 0, 1, 1}), 8), device);
  const cpu::Conv2dConfig small = default_of(kept(conv({1, 512, 14, 14, 512, 1, 1, 1, 0, 1, 1}), 8), device);
  EXPECT_EQ(large.loop_order, cpu::ConvLoopOrder::kRowOuter);
  EXPECT_EQ(large.parallel, cpu::ConvParallel::kOuter);
  EXPECT_EQ(small.loop_order, cpu::ConvLoopOrder::kRowOuter);
  EXPECT_EQ(small.parallel, cpu::ConvParallel::kFused);
  EXPECT_EQ(large.ic_chunk, 0);
}

// The other layers that read a kept layout (3x3, padded 1x1) have reduction passes over bands of
// rows, up to C's padded channels (a chunk of all of them: one pass, items bands of rows), and
// their default is the hand-scheduled 3 x 4 tile with passes of 64 channels (32 where C is 32),
// 4 x 3 on planes 7 columns wide.
TEST(CpuConv2dTemplate, KeptLayersWithTapsHaveReductionPassesOverBandsOfRows) {
  const DeviceInfo device = avx2_device(2);
  for (const auto& [workload, chunks] :
       std::vector<std::pair<Workload, std::set<int>>>{{kept(conv({1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1}), 8), {0, 32, 64}},
                                                       {kept(conv({1, 16, 14, 14, 24, 3, 3, 1, 1, 1, 1}), 8), {0}},
                                                       {kept(conv({1, 64, 14, 14, 24, 1, 1, 1, 1, 1, 1}), 8), {0, 32, 64}},
                                                       {kept(conv({1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1}), 8),
                                                        {0, 32, 64, 128, 256}}}) {
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    std::set<int> seen;
    std::mt19937_64 rng(3);
    for (const ss::Config& config : space.sample_valid_distinct(rng, 600)) {
      seen.insert(cpu::conv2d_config_from_view(ss::ConfigView(space, config)).ic_chunk);
    }
    EXPECT_EQ(seen, chunks) << workload.key();
  }
  for (const auto& [C, chunk] : std::vector<std::pair<std::int64_t, int>>{{64, 64}, {512, 64}, {32, 32}}) {
    const Workload workload = kept(conv({1, C, 14, 14, 64, 3, 3, 1, 1, 1, 1}), 8);
    const cpu::Conv2dConfig c = default_of(workload, device);
    EXPECT_EQ(c.ic_chunk, chunk) << workload.key();
    EXPECT_EQ(c.oc_vectors, 4) << workload.key();
    EXPECT_EQ(c.ow_block * c.oh_block, 3) << workload.key();
    EXPECT_EQ(c.loop_order, cpu::ConvLoopOrder::kOcOuter) << workload.key();
  }
  const cpu::Conv2dConfig c = default_of(kept(conv({1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1}), 8), device);
  EXPECT_EQ(c.oc_vectors, 3);
  EXPECT_EQ(c.ow_block, 4);
  EXPECT_EQ(c.ic_chunk, 64);
}

TEST(CpuConv2dTemplate, GemmSpacesSampleValidConfigsWithinTheRegisters) {
  for (const DeviceInfo& device : {avx2_device(2), avx512_device(), neon_device()}) {
    const Workload workload = conv({1, 256, 14, 14, 512, 1, 1, 2, 0, 1, 1});
    const ss::ConfigSpace space = cpu_conv2d(workload, device).space(workload, device);
    std::mt19937_64 rng(5);
    const auto configs = space.sample_valid_distinct(rng, 300);
    EXPECT_EQ(configs.size(), 300u) << device.arch;
    const int registers = device.has_isa("avx512f") || device.arch == "aarch64" ? 32 : 16;
    for (const ss::Config& config : configs) {
      const cpu::Conv2dConfig c = cpu::conv2d_config_from_view(ss::ConfigView(space, config));
      EXPECT_EQ(cpu::conv2d_config_error(c), nullptr) << space.to_json(config).dump();
      const int vectors = c.gemm.nr / c.gemm.lanes;
      EXPECT_LE(c.gemm.mr * vectors + vectors + 1, registers) << space.to_json(config).dump();
    }
  }
}

TEST(CpuConv2dTemplate, DerivedFeaturesHaveStableNamesAndFiniteValues) {
  for (const KernelTemplate* kernel : {&cpu_conv2d(), &cpu_conv2d_gemm(), &cpu_depthwise()}) {
    std::vector<std::string> names;
    const auto layers = kernel == &cpu_depthwise() ? depthwise_layers() : conv_layers();
    for (const Workload& workload : layers) {
      if (!kernel->applies(workload, avx2_device(2))) continue;
      const ss::ConfigSpace space = kernel->space(workload, avx2_device(2));
      std::mt19937_64 rng(9);
      for (const ss::Config& config : space.sample_valid_distinct(rng, 20)) {
        std::vector<std::string> these;
        for (const auto& [name, value] :
             kernel->derived_features(workload, avx2_device(2), ss::ConfigView(space, config))) {
          these.push_back(name);
          EXPECT_TRUE(std::isfinite(value)) << kernel->name() << " " << name;
        }
        if (names.empty()) names = these;
        EXPECT_EQ(these, names);
      }
    }
    EXPECT_FALSE(names.empty());
  }
}

// The direct kernels' threads, loop order and split are run-time knobs (conv2d.cpu's, and the
// dot-product kernels' on nchw16c): configs that differ only in them emit one source (compiled
// once), each with its own values for optune_set_knobs; a table row still compiles its schedule
// in. (That each schedule computes the layer right: EmittedCandidatesCompileLoadAndMatchTheReference,
// which passes every candidate its values, and the dtype CLI test's nchw16c tunes.)
TEST(CpuConv2dTemplate, DirectSchedulesAreRunTimeKnobsOfOneSource) {
  Workload int8_kept = kept(conv({1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1}), 16);
  int8_kept.dtype = DataType::kI8;
  const struct {
    const KernelTemplate& direct;
    Workload workload;
    DeviceInfo device;
  } cases[] = {{cpu_conv2d(), conv({1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1}), avx2_device(2)},
               {cpu_conv2d(), kept(conv({1, 16, 14, 14, 24, 3, 3, 1, 1, 1, 1}), 8), avx2_device(2)},
               {backends::find_template("conv2d_int8_direct.cpu"), int8_kept, avx512_device()}};
  for (const auto& [direct, workload, device] : cases) {
    EXPECT_EQ(direct.run_time_knobs(), (std::vector<std::string>{"threads", "loop_order", "parallel"}));
    const ss::ConfigSpace space = direct.space(workload, device);
    const ss::Config config = direct.default_config(workload, device, space);
    const std::string source = direct.emit_source(workload, device, ss::ConfigView(space, config));
    EXPECT_NE(source.find(std::string("extern \"C\" void ") + kSetKnobsSymbol), std::string::npos);
    EXPECT_NE(source.find(".run_time_schedule = true"), std::string::npos);
    std::set<std::vector<long long>> schedules;
    for (long long threads : {1, 2})
      for (const char* order : {"oc_outer", "row_outer"})
        for (const char* split : {"outer", "fused"}) {
          ss::Config sibling = config;
          sibling.options[space.knob_index("threads")] = static_cast<std::uint32_t>(threads - 1);
          sibling.options[space.knob_index("loop_order")] = order == std::string("oc_outer") ? 0 : 1;
          sibling.options[space.knob_index("parallel")] = split == std::string("outer") ? 0 : 1;
          if (!space.is_valid(sibling)) continue;
          const ss::ConfigView view(space, sibling);
          EXPECT_EQ(direct.emit_source(workload, device, view), source) << space.to_json(sibling).dump();
          schedules.insert(direct.run_time_knob_values(workload, device, view));
          EXPECT_EQ(direct.table_row(workload, device, view).find("run_time_schedule"), std::string::npos);
        }
    EXPECT_EQ(schedules.size(), 6u) << direct.name() << ": one thread splits no loop, so 2 + 4 schedules";
  }
  // The GEMM algorithm compiles its schedule in.
  EXPECT_TRUE(cpu_conv2d_gemm().run_time_knobs().empty());
}

// On a CPU with AMX tiles for the type, the direct int8 and bf16 templates offer `amx` and take
// it by default: 2 slabs of 16 pixels x 2 output vectors. Sampled amx configs keep to 16-pixel
// slabs within AMX's 8 tiles; a CPU without the tiles has no such knob.
TEST(CpuConv2dTemplate, DirectLowPrecisionLayersRunOnAmxTilesWhereTheDeviceHasThem) {
  for (const DataType dtype : {DataType::kI8, DataType::kBF16}) {
    const bool int8 = dtype == DataType::kI8;
    const KernelTemplate& direct = backends::find_template(int8 ? "conv2d_int8_direct.cpu" : "conv2d_bf16_direct.cpu");
    DeviceInfo vectors = avx512_device();
    vectors.isa.insert(vectors.isa.end(), {"avx512bw", "avx512_vnni", "avx512_bf16"});
    DeviceInfo tiles = vectors;
    tiles.isa.insert(tiles.isa.end(), {"amx_tile", int8 ? "amx_int8" : "amx_bf16"});
    for (const Conv2dShape& shape : {Conv2dShape{1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},
                                     Conv2dShape{1, 128, 28, 28, 256, 3, 3, 2, 1, 1, 1},
                                     Conv2dShape{1, 32, 7, 7, 40, 1, 1, 1, 0, 1, 1},
                                     Conv2dShape{1, 32, 14, 14, 32, 3, 3, 1, 2, 2, 1}}) {  // dilated
      Workload workload = kept(conv(shape), 16);
      workload.dtype = dtype;
      const auto space = direct.space(workload, tiles);
      const auto config = direct.default_config(workload, tiles, space);
      ASSERT_TRUE(space.is_valid(config)) << space.first_violation(config);
      const auto json = space.to_json(config);
      EXPECT_EQ(json.at("amx"), true) << workload.key();
      EXPECT_EQ(json.at("ow_block"), 16);
      EXPECT_EQ(json.at("oh_block"), 2);
      EXPECT_NE(direct.config_literal(ss::ConfigView(space, config)).find(".amx = true"), std::string::npos);
      std::mt19937_64 rng(5);
      std::size_t on_tiles = 0;
      for (const ss::Config& sampled : space.sample_valid_distinct(rng, 60)) {
        const ss::ConfigView v(space, sampled);
        if (!v.flag("amx")) continue;
        ++on_tiles;
        EXPECT_EQ(v.integer("ow_block"), 16) << space.to_json(sampled);
        EXPECT_LE((v.integer("oh_block") + 1) * (v.integer("oc_vectors") + 1), 9) << space.to_json(sampled);
      }
      EXPECT_GT(on_tiles, 0u) << workload.key();
      const auto plain = direct.space(workload, vectors);
      EXPECT_FALSE(ss::ConfigView(plain, direct.default_config(workload, vectors, plain)).has("amx"));
    }
  }
}

TEST(CpuConv2dTemplate, TableRowsAndLiteralsNameEveryField) {
  const Workload workload = conv({1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1});
  const ss::ConfigSpace space = cpu_conv2d(workload, avx2_device(2)).space(workload, avx2_device(2));
  const ss::Config config = cpu_conv2d(workload, avx2_device(2)).default_config(workload, avx2_device(2), space);
  const std::string row = cpu_conv2d(workload, avx2_device(2)).table_row(workload, avx2_device(2), ss::ConfigView(space, config));
  for (const char* field : {".N = 1", ".C = 64", ".K = 64", ".R = 3", ".stride = 1", ".pad = 1",
                            ".dilation = 1", ".lanes", ".oc_vectors", ".ic_block", ".ow_block",
                            ".oh_block", ".unroll_kw", ".loop_order", ".threads", ".parallel"}) {
    EXPECT_NE(row.find(field), std::string::npos) << field << " in " << row;
  }
  const Workload pointwise = conv({1, 64, 56, 56, 128, 1, 1, 1, 0, 1, 1});
  const ss::ConfigSpace gemm_space = cpu_conv2d(pointwise, avx2_device(2)).space(pointwise, avx2_device(2));
  const std::string gemm_row = cpu_conv2d(pointwise, avx2_device(2)).table_row(pointwise, avx2_device(2), ss::ConfigView(gemm_space, cpu_conv2d(pointwise, avx2_device(2)).default_config(pointwise, avx2_device(2), gemm_space)));
  for (const char* field : {".K = 128", ".lanes = 8", ".threads = 2", "ConvAlgorithm::kGemm", ".gemm = ",
                            "GemmConfig{.mc = 96, .nc = 1024, .kc = 128, .mr = 6, .nr = 16"}) {
    EXPECT_NE(gemm_row.find(field), std::string::npos) << field << " in " << gemm_row;
  }
  ASSERT_FALSE(cpu_depthwise().table_forms().empty());
  EXPECT_EQ(cpu_depthwise().table_forms().front().include, "optune/kernels/cpu/tuned_conv2d.hpp");
}

// One candidate to check: its workload and its emitted source.
struct Candidate {
  Workload workload;
  std::string source;
  std::vector<long long> run_time_knobs;  // passed to its optune_set_knobs before it runs
};

// Each candidate of a translation unit holding several gets its symbols renamed by the
// preprocessor (optune_kernel_<i>, optune_set_knobs_<i>) in a namespace of its own.
std::string renamed(const std::string& source, std::size_t i) {
  std::string out = "namespace candidate_" + std::to_string(i) + " {\n";
  for (const char* symbol : {kCandidateSymbol, kSetKnobsSymbol})
    out += "#define " + std::string(symbol) + " " + symbol + "_" + std::to_string(i) + "\n";
  out += source;
  for (const char* symbol : {kCandidateSymbol, kSetKnobsSymbol}) out += "#undef " + std::string(symbol) + "\n";
  return out + "}\n";
}

// The default and `samples` random valid configs of every layer, as emitted sources.
// The template of a layer: a fixed one, or the default conv2d template of each layer.
using TemplateOf = std::function<const KernelTemplate&(const Workload&, const DeviceInfo&)>;
std::vector<Candidate> candidates(const TemplateOf& template_of, const std::vector<Workload>& layers,
                                  int samples) {
  const DeviceInfo device = this_device();
  std::vector<Candidate> out;
  std::mt19937_64 rng(23);
  for (const Workload& workload : layers) {
    const KernelTemplate& kernel = template_of(workload, device);
    const ss::ConfigSpace space = kernel.space(workload, device);
    std::vector<ss::Config> configs = space.sample_valid_distinct(rng, samples);
    configs.push_back(kernel.default_config(workload, device, space));
    for (const ss::Config& config : configs) {
      const ss::ConfigView view(space, config);
      out.push_back(
          {workload, kernel.emit_source(workload, device, view), kernel.run_time_knob_values(workload, device, view)});
    }
  }
  return out;
}

// Each emitted source goes into a namespace of its own, its symbol renamed by the preprocessor,
// so that a few translation units hold all candidates (one compile per candidate would take
// minutes on a busy 2-core machine). The source itself is untouched: its #include of the kernel
// header is a no-op after the first (#pragma once).
TEST(CpuConv2dTemplate, EmittedCandidatesCompileLoadAndMatchTheReference) {
  const TemplateOf default_conv2d = [](const Workload& w, const DeviceInfo& d) -> const KernelTemplate& {
    return cpu_conv2d(w, d);
  };
  const TemplateOf direct = [](const Workload&, const DeviceInfo&) -> const KernelTemplate& { return cpu_conv2d(); };
  const TemplateOf depthwise_template = [](const Workload&, const DeviceInfo&) -> const KernelTemplate& {
    return cpu_depthwise();
  };
  std::vector<Candidate> all = candidates(default_conv2d, conv_layers(), 3);
  for (Candidate& c : candidates(depthwise_template, depthwise_layers(), 3)) all.push_back(std::move(c));
  // The direct kernel on the layers whose default is the GEMM (1x1 filters, few input channels).
  std::vector<Workload> gemm_layers;
  for (const Workload& workload : conv_layers())
    if (cpu_conv2d_gemm().applies(workload, this_device())) gemm_layers.push_back(workload);
  for (Candidate& c : candidates(direct, gemm_layers, 1)) all.push_back(std::move(c));
  // Kept layouts: padded, strided 1x1 and pointwise convolutions, strided depthwise, ragged blocks.
  const std::vector<Workload> kept_conv = {kept(conv({1, 16, 14, 14, 24, 3, 3, 1, 1, 1, 1}), 8),
                                           kept(conv({1, 24, 9, 9, 16, 1, 1, 2, 0, 1, 1}), 8),
                                           kept(conv({1, 13, 7, 9, 5, 1, 1, 1, 0, 1, 1}), 4),
                                           kept(conv({1, 72, 6, 7, 20, 1, 1, 1, 0, 1, 1}), 8)};
  const std::vector<Workload> kept_depthwise = {kept(depthwise({1, 24, 15, 13, 0, 3, 3, 2, 1, 1, 1}), 8),
                                                kept(depthwise({1, 13, 9, 11, 0, 3, 3, 1, 1, 1, 1}), 4)};
  for (Candidate& c : candidates(default_conv2d, kept_conv, 2)) all.push_back(std::move(c));
  for (Candidate& c : candidates(depthwise_template, kept_depthwise, 2)) all.push_back(std::move(c));
  const Workload stem = first_layer(conv({1, 3, 19, 17, 13, 3, 3, 2, 1, 1, 1}), 8);  // NCHW into nchw8c
  for (Candidate& c : candidates(default_conv2d, {stem}, 2)) all.push_back(std::move(c));
  for (const Candidate& c : all) {
    ASSERT_NE(c.source.find(std::string("extern \"C\" void ") + kCandidateSymbol), std::string::npos);
  }

  const fs::path dir = fs::temp_directory_path() / ("optune_cpu_conv2d_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  constexpr int kUnits = 2;  // compiled concurrently, one per core
  std::string command;
  for (int unit = 0; unit < kUnits; ++unit) {
    std::ofstream tu(dir / ("unit" + std::to_string(unit) + ".cpp"));
    tu << "#include <optune/kernels/cpu/conv2d_nchwc.hpp>\n#include <optune/kernels/cpu/depthwise_conv2d_nchwc.hpp>\n";
    for (std::size_t i = unit; i < all.size(); i += kUnits) tu << renamed(all[i].source, i);
    // The flags the local builder uses for the native CPU target.
    const std::string name = (dir / ("unit" + std::to_string(unit))).string();
    command += "c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I" + std::string(OPTUNE_SOURCE_DIR) +
               "/backends/cpu/include " + name + ".cpp -o " + name + ".so 2> " + name + ".log & ";
  }
  command += "wait";
  ASSERT_EQ(std::system(command.c_str()), 0);

  std::vector<void*> handles;
  for (int unit = 0; unit < kUnits; ++unit) {
    const fs::path object = dir / ("unit" + std::to_string(unit) + ".so");
    void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror() << "\n" << std::ifstream(dir / ("unit" + std::to_string(unit) + ".log")).rdbuf();
    handles.push_back(handle);
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string symbol = std::string(kCandidateSymbol) + "_" + std::to_string(i);
    auto function = reinterpret_cast<CandidateFunction>(dlsym(handles[i % kUnits], symbol.c_str()));
    ASSERT_NE(function, nullptr) << symbol;
    // (Before each candidate: the candidates of a unit share the kernels' run-time schedule.)
    if (!all[i].run_time_knobs.empty()) {
      const std::string set_knobs_symbol = std::string(kSetKnobsSymbol) + "_" + std::to_string(i);
      auto set_knobs = reinterpret_cast<SetKnobsFunction>(dlsym(handles[i % kUnits], set_knobs_symbol.c_str()));
      ASSERT_NE(set_knobs, nullptr) << set_knobs_symbol;
      set_knobs(all[i].run_time_knobs.data(), static_cast<int>(all[i].run_time_knobs.size()));
    }
    const Workload& workload = all[i].workload;
    std::mt19937 rng(static_cast<unsigned>(i));
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
    const std::vector<const void*> addresses(pointers.begin(), pointers.end());
    function(addresses.data(), got.data());
    EXPECT_LE(relative_l2_error(got.data(), want.data(), got.size()), 1e-5) << all[i].source;
  }
  for (void* handle : handles) dlclose(handle);
  fs::remove_all(dir);
}

// NEON goes through the kernels' generic 4-lane path: candidates for an aarch64 device must
// compile with the cross compiler that `--target cpu:aarch64-linux-gnu` uses.
TEST(CpuConv2dTemplate, AArch64CandidatesCrossCompile) {
  if (std::system("command -v aarch64-linux-gnu-g++ > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "aarch64-linux-gnu-g++ is not installed";
  }
  const DeviceInfo device = neon_device();
  const fs::path dir = fs::temp_directory_path() / ("optune_conv2d_aarch64_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream tu(dir / "candidates.cpp");
  tu << "#include <optune/kernels/cpu/conv2d.hpp>\n#include <optune/kernels/cpu/depthwise_conv2d.hpp>\n";
  std::mt19937_64 rng(5);
  std::size_t index = 0;
  for (const auto& [kernel, workload] :
       {std::pair{&cpu_conv2d(), conv({1, 5, 11, 23, 11, 5, 3, 1, 0, 1, 1})},
        std::pair{&cpu_depthwise(), depthwise({1, 7, 9, 11, 0, 3, 3, 2, 1, 1, 1})}}) {
    const ss::ConfigSpace space = kernel->space(workload, device);
    std::vector<ss::Config> configs = space.sample_valid_distinct(rng, 1);
    configs.push_back(kernel->default_config(workload, device, space));
    for (const ss::Config& config : configs)
      tu << renamed(kernel->emit_source(workload, device, ss::ConfigView(space, config)), index++);
  }
  tu.close();
  const std::string command = "aarch64-linux-gnu-g++ -std=c++20 -O2 -march=armv8-a -fopenmp -fPIC -c -I" +
                              std::string(OPTUNE_SOURCE_DIR) + "/backends/cpu/include " + (dir / "candidates.cpp").string() +
                              " -o " + (dir / "candidates.o").string() + " 2> " + (dir / "build.log").string();
  EXPECT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir / "build.log").rdbuf();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace optune::kernels
