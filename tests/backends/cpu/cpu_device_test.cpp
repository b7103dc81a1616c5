#include "optune/backends/cpu/cpu_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace optune::measure {
namespace {

TEST(CpuDevice, DetectsThisMachine) {
  auto cpu = detect_local_cpu();
  EXPECT_EQ(cpu.kind, "cpu");
  EXPECT_FALSE(cpu.name.empty());
  EXPECT_GE(cpu.cores, 1);
  EXPECT_GT(cpu.l1d_bytes, 0);
#if defined(__x86_64__)
  EXPECT_EQ(cpu.arch, "x86_64");
#endif
#if defined(__AVX2__)
  EXPECT_TRUE(cpu.has_isa("avx2"));
#endif
  EXPECT_EQ(cpu.fingerprint_id(), detect_local_cpu().fingerprint_id());  // stable
  EXPECT_TRUE(isa_cap_flags().empty());
}

// Sets OPTUNE_MAX_CPU_ISA for one test and puts back what was there.
class MaxCpuIsa {
 public:
  explicit MaxCpuIsa(const char* value) {
    if (const char* old = std::getenv("OPTUNE_MAX_CPU_ISA")) saved_ = old;
    ::setenv("OPTUNE_MAX_CPU_ISA", value, 1);
  }
  ~MaxCpuIsa() {
    if (saved_) ::setenv("OPTUNE_MAX_CPU_ISA", saved_->c_str(), 1);
    else ::unsetenv("OPTUNE_MAX_CPU_ISA");
  }

 private:
  std::optional<std::string> saved_;
};

#if defined(__x86_64__)
TEST(CpuDevice, Avx2CapDropsAvx512FromTheDeviceAndTheCompileFlags) {
  const auto native = detect_local_cpu();
  MaxCpuIsa cap("AVX2");
  const auto capped = detect_local_cpu();
  for (const std::string& flag : capped.isa) {
    EXPECT_FALSE(flag.starts_with("avx512")) << flag;
    EXPECT_FALSE(flag.starts_with("amx")) << flag;
  }
  EXPECT_EQ(capped.has_isa("avx2"), native.has_isa("avx2"));
  EXPECT_EQ(capped.has_isa("fma"), native.has_isa("fma"));
  EXPECT_NE(capped.name.find("capped at AVX2"), std::string::npos) << capped.name;
  // Its records are another device's: never mixed with the uncapped machine's.
  EXPECT_NE(capped.fingerprint_id(), native.fingerprint_id());
  const auto flags = isa_cap_flags();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "-mno-avx512f"), flags.end());
}
#endif

TEST(CpuDevice, UnknownCapIsRejectedWithItsName) {
  MaxCpuIsa cap("avx9");
  try {
    detect_local_cpu();
    FAIL() << "an unknown ISA was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("'avx9'"), std::string::npos) << error.what();
  }
  EXPECT_THROW(isa_cap_flags(), std::invalid_argument);
}

}  // namespace
}  // namespace optune::measure
