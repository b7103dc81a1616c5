// OpenCL target forms: "opencl", "opencl:<platform>[:<device>]", "opencl::<device>".
#include <gtest/gtest.h>

#include <stdexcept>

#include "optune/backends/opencl/devices.hpp"
#include "optune/backends/registry.hpp"

namespace optune::backends {
namespace {

TEST(OpenCLTarget, ParsesEveryForm) {
  const kernels::Target first = parse_target("opencl");
  EXPECT_EQ(first.backend, "opencl");
  EXPECT_TRUE(first.spec.empty());

  const auto platform_only = measure::parse_opencl_spec(parse_target("opencl:Portable").spec);
  EXPECT_EQ(platform_only.platform, "Portable");
  EXPECT_TRUE(platform_only.device.empty());

  const auto both = measure::parse_opencl_spec(parse_target("opencl:0:cpu-haswell").spec);
  EXPECT_EQ(both.platform, "0");
  EXPECT_EQ(both.device, "cpu-haswell");

  const auto device_only = measure::parse_opencl_spec(parse_target("opencl::1").spec);
  EXPECT_TRUE(device_only.platform.empty());
  EXPECT_EQ(device_only.device, "1");
}

TEST(OpenCLTarget, StrRoundTrips) {
  for (const char* text : {"opencl", "opencl:Portable", "opencl:0:1", "opencl:NVIDIA:A100", "opencl::1"}) {
    EXPECT_EQ(parse_target(text).str(), text);
    EXPECT_EQ(parse_target(parse_target(text).str()), parse_target(text));
  }
}

TEST(OpenCLTarget, RejectsEmptyParts) {
  for (const char* text : {"opencl:", "opencl:0:", "OPENCL"}) EXPECT_THROW(parse_target(text), std::invalid_argument) << text;
  EXPECT_NE(target_forms().find("opencl:<platform>:<device>"), std::string::npos);
}

}  // namespace
}  // namespace optune::backends
