// Target text forms and their canonical str().
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "optune/kernels/target.hpp"

namespace optune::kernels {
namespace {

TEST(Target, ParsesEveryForm) {
  EXPECT_EQ(parse_target("cpu"), Target{});
  EXPECT_TRUE(parse_target("cpu").is_native_cpu());

  const Target cross = parse_target("cpu:aarch64-linux-gnu");
  EXPECT_EQ(cross.backend, Backend::kCpu);
  EXPECT_EQ(cross.triple, "aarch64-linux-gnu");
  EXPECT_FALSE(cross.is_native_cpu());

  const Target first = parse_target("opencl");
  EXPECT_EQ(first.backend, Backend::kOpenCL);
  EXPECT_TRUE(first.platform.empty());
  EXPECT_TRUE(first.device.empty());

  const Target platform_only = parse_target("opencl:Portable");
  EXPECT_EQ(platform_only.platform, "Portable");
  EXPECT_TRUE(platform_only.device.empty());

  const Target both = parse_target("opencl:0:cpu-haswell");
  EXPECT_EQ(both.platform, "0");
  EXPECT_EQ(both.device, "cpu-haswell");

  const Target device_only = parse_target("opencl::1");
  EXPECT_TRUE(device_only.platform.empty());
  EXPECT_EQ(device_only.device, "1");
}

TEST(Target, StrRoundTrips) {
  for (const char* text : {"cpu", "cpu:aarch64-linux-gnu", "opencl", "opencl:Portable",
                           "opencl:0:1", "opencl:NVIDIA:A100", "opencl::1"}) {
    EXPECT_EQ(parse_target(text).str(), text);
    EXPECT_EQ(parse_target(parse_target(text).str()), parse_target(text));
  }
}

TEST(Target, RejectsUnknownTargets) {
  try {
    parse_target("gpu");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "target: unknown target 'gpu' (expected cpu, cpu:<triple>, opencl or "
                 "opencl:<platform>:<device>)");
  }
  for (const char* text : {"", "CPU", "cpu:", "opencl:", "opencl:0:", "cuda", "cpux"}) {
    EXPECT_THROW(parse_target(text), std::invalid_argument) << text;
  }
}

TEST(Target, BackendNames) {
  EXPECT_EQ(backend_name(Backend::kCpu), "cpu");
  EXPECT_EQ(backend_name(Backend::kOpenCL), "opencl");
}

}  // namespace
}  // namespace optune::kernels
