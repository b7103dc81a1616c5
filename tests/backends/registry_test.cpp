// Targets through the registry: each backend's text forms, their canonical str(), and the errors.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "optune/backends/registry.hpp"

namespace optune::backends {
namespace {

TEST(Target, ParsesTheCpuForms) {
  EXPECT_EQ(parse_target("cpu"), kernels::Target{});
  EXPECT_TRUE(find_backend("cpu").runs_here(parse_target("cpu")));

  const kernels::Target cross = parse_target("cpu:aarch64-linux-gnu");
  EXPECT_EQ(cross.backend, "cpu");
  EXPECT_EQ(cross.spec, "aarch64-linux-gnu");
  EXPECT_FALSE(find_backend("cpu").runs_here(cross));
  EXPECT_EQ(parse_target("  cpu : aarch64-linux-gnu ").str(), "cpu:aarch64-linux-gnu");
}

TEST(Target, StrRoundTrips) {
  for (const char* text : {"cpu", "cpu:aarch64-linux-gnu"}) {
    EXPECT_EQ(parse_target(text).str(), text);
    EXPECT_EQ(parse_target(parse_target(text).str()), parse_target(text));
  }
}

TEST(Target, RejectsUnknownTargetsNamingTheFormsThereAre) {
  try {
    parse_target("gpu");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()), "target: unknown target 'gpu' (expected " + target_forms() + ")");
    EXPECT_NE(target_forms().find("cpu, cpu:<triple>"), std::string::npos);
  }
  for (const char* text : {"", "CPU", "cpu:", "vulkan", "cpux", "cpu:a b", "cpu:x:y", ":cpu"}) {
    EXPECT_THROW(parse_target(text), std::invalid_argument) << text;
  }
}

TEST(Registry, EveryTemplateIsFoundByItsName) {
  ASSERT_FALSE(all_templates().empty());
  for (const auto* kernel_template : all_templates()) {
    EXPECT_EQ(&find_template(kernel_template->name()), kernel_template) << kernel_template->name();
    EXPECT_NO_THROW(find_backend(kernel_template->backend()));
  }
  EXPECT_EQ(find_template("gemm.cpu").name(), "gemm.cpu");
  EXPECT_THROW(find_template("gemm.vulkan"), std::invalid_argument);
  EXPECT_THROW(find_backend("vulkan"), std::invalid_argument);
}

// NHWC is for the templates that take it (GPU implicit GEMMs): no conv2d template of the CPU or
// OpenCL backends, whose kernels read NCHW or NCHW[b]c, applies to it.
TEST(Registry, NoCpuOrOpenClTemplateAppliesToAChannelsLastConv2d) {
  const kernels::Workload nhwc =
      kernels::parse_workload(kernels::Op::kConv2d, "C=64,H=56,W=56,K=64,R=3,S=3,pad=1,layout=nhwc");
  kernels::DeviceInfo device;
  device.isa = {"avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512f", "fma"};  // every CPU template's
  int conv2d_templates = 0;
  for (const auto* kernel_template : all_templates()) {
    if (kernel_template->op() != kernels::Op::kConv2d) continue;
    if (kernel_template->backend() != "cpu" && kernel_template->backend() != "opencl") continue;
    device.kind = kernel_template->backend();
    EXPECT_FALSE(kernel_template->applies(nhwc, device)) << kernel_template->name();
    ++conv2d_templates;
  }
  EXPECT_GE(conv2d_templates, 4);  // conv2d.cpu, conv2d_gemm.cpu, conv2d_int8.cpu, conv2d_bf16.cpu
}

TEST(Registry, TheFirstLocalDeviceIsThisMachinesCpu) {
  const auto devices = local_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices.front().target.str(), "cpu");
  EXPECT_EQ(devices.front().device.kind, "cpu");
  EXPECT_EQ(make_workers().size(), all_backends().size());
}

}  // namespace
}  // namespace optune::backends
