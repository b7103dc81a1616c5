#include "optune/backends/cpu/cpu_device.hpp"

#include <gtest/gtest.h>

#include <fstream>

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
}

}  // namespace
}  // namespace optune::measure
