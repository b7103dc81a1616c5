// The OpenCL templates' spaces against device limits: no config over a device's work-group,
// work-item, local-memory or vector limits is ever valid (so never proposed), defaults are valid,
// and launches cover the output exactly once per tile.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels {
namespace {

// A small phone-like GPU: 128 work-items, 64 x 64 x 64 item sizes, 8 KiB local memory.
DeviceInfo small_gpu() {
  DeviceInfo device;
  device.kind = "opencl";
  device.name = "Small GPU";
  device.platform = "Test";
  device.cores = 4;
  device.max_work_group_size = 128;
  device.max_work_item_sizes = {64, 64, 16};
  device.local_mem_bytes = 8 * 1024;
  device.preferred_vector_width = 1;
  return device;
}

std::int64_t number(const search_space::ConfigView& view, const std::string& knob) {
  return std::stoll(view.choice(knob));
}

struct Case {
  Op op;
  const char* shape;
};

class OpenCLTemplateLimits : public ::testing::TestWithParam<Case> {};

TEST_P(OpenCLTemplateLimits, NoValidConfigExceedsTheDeviceLimits) {
  const Workload workload = parse_workload(GetParam().op, GetParam().shape);
  const KernelTemplate& t = find_template(workload.op, Backend::kOpenCL);
  const DeviceInfo device = small_gpu();
  const auto space = t.space(workload, device);
  std::mt19937_64 rng(7);
  const auto configs = space.sample_valid_distinct(rng, 300);
  ASSERT_GT(configs.size(), 50u);
  for (const auto& config : configs) {
    const search_space::ConfigView view(space, config);
    const auto kernel = t.opencl_kernel(workload, device, view);
    ASSERT_TRUE(kernel.has_value());
    const auto& local = kernel->local_size;
    EXPECT_LE(local[0] * local[1] * local[2], 128u) << space.to_json(config).dump();
    EXPECT_LE(local[0], 64u);
    EXPECT_LE(local[1], 64u);
    EXPECT_LE(local[2], 16u);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(kernel->global_size[d] % local[d], 0u);
    const std::string& options = kernel->build_options;
    for (const char* wide : {"-DVWN=8", "-DVWM=8", "-DVW=8"}) EXPECT_EQ(options.find(wide), std::string::npos);
    if (workload.op == Op::kGemm) {
      const auto kwg = number(view, "kwg");
      const auto bytes = 4 * kwg * (number(view, "sa") * number(view, "mwg") + number(view, "sb") * number(view, "nwg"));
      EXPECT_LE(bytes, 8 * 1024) << space.to_json(config).dump();
    }
    if (workload.op == Op::kConv2d) {  // the staged input of cb x tc channels and the slices' partial sums
      const auto s = workload.conv();
      const auto tile_p = number(view, "tp") * number(view, "ppt"), tile_q = number(view, "tq") * number(view, "qpt");
      const auto tc = number(view, "tc");
      const auto input = number(view, "local_in") * number(view, "cb") * tc * ((tile_p - 1) * s.stride + s.R) *
                         ((tile_q - 1) * s.stride + s.S);
      const auto partials = tc > 1 ? tc * number(view, "tk") * number(view, "kpt") * tile_p * tile_q : 0;
      EXPECT_LE(4 * (input + partials), 8 * 1024) << space.to_json(config).dump();
    }
  }
  const auto fallback = t.default_config(workload, device, space);
  EXPECT_TRUE(space.is_valid(fallback)) << space.first_violation(fallback);
}

INSTANTIATE_TEST_SUITE_P(
    Templates, OpenCLTemplateLimits,
    ::testing::Values(Case{Op::kGemm, "127,509,1021"},
                      Case{Op::kConv2d, "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"},
                      Case{Op::kConv2d, "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"},
                      Case{Op::kDepthwiseConv2d, "N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"}));

TEST(OpenCLGemmTemplate, DefaultIsTheGenericGpuTileOnALargeDevice) {
  DeviceInfo device = small_gpu();
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = {1024, 1024, 64};
  device.local_mem_bytes = 48 * 1024;
  const Workload workload = parse_workload(Op::kGemm, "2048,2048,2048");
  const KernelTemplate& t = find_template(Op::kGemm, Backend::kOpenCL);
  const auto space = t.space(workload, device);
  const auto config = t.default_config(workload, device, space);
  const auto json = space.to_json(config);
  EXPECT_EQ(json["mwg"], "128");
  EXPECT_EQ(json["mdimc"], "16");
  EXPECT_EQ(json["sa"], "1");
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  EXPECT_EQ(kernel->global_size[0], 2048u / 256 * 16);
  EXPECT_NE(kernel->build_options.find("-DEDGE_M=0"), std::string::npos);
  EXPECT_EQ(t.name(), "gemm.opencl");
}

// On a large GPU the conv default splits the input channels over 16 slices of a work-group (the
// deep batch-1 layers need it), and its launch has 16 x 2 x 16 work-items; with 3 input channels
// (ResNet's stem) the split is refused and the default falls back to a tile without it.
TEST(OpenCLConv2dTemplate, DefaultSplitsTheChannelsOnALargeDeviceWhereThereAreChannelsToSplit) {
  DeviceInfo device = small_gpu();
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = {1024, 1024, 64};
  device.local_mem_bytes = 48 * 1024;
  const KernelTemplate& t = find_template(Op::kConv2d, Backend::kOpenCL);
  const Workload deep = parse_workload(Op::kConv2d, "N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1");
  const auto space = t.space(deep, device);
  const auto config = t.default_config(deep, device, space);
  EXPECT_EQ(space.to_json(config)["tc"], "16");
  const auto kernel = t.opencl_kernel(deep, device, search_space::ConfigView(space, config));
  EXPECT_EQ(kernel->local_size, (std::array<std::size_t, 3>{8, 2, 16}));
  EXPECT_EQ(kernel->global_size, (std::array<std::size_t, 3>{8, 2, 512 / 8 * 16}));

  const Workload stem = parse_workload(Op::kConv2d, "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3");
  const auto stem_space = t.space(stem, device);
  EXPECT_EQ(stem_space.to_json(t.default_config(stem, device, stem_space))["tc"], "1");
}

TEST(OpenCLGemmTemplate, OddShapesSwitchEdgeHandlingOn) {
  const Workload workload = parse_workload(Op::kGemm, "127,509,1021");
  const KernelTemplate& t = find_template(Op::kGemm, Backend::kOpenCL);
  const DeviceInfo device = small_gpu();
  const auto space = t.space(workload, device);
  const auto config = t.default_config(workload, device, space);
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  for (const char* edge : {"-DEDGE_M=1", "-DEDGE_N=1", "-DEDGE_K=1"})
    EXPECT_NE(kernel->build_options.find(edge), std::string::npos) << kernel->build_options;
  EXPECT_NE(t.emit_source(workload, device, search_space::ConfigView(space, config)).find("#include \"gemm.cl\""),
            std::string::npos);
}

}  // namespace
}  // namespace optune::kernels
