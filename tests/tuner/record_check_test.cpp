// RecordCheck's bound on plausible throughput follows the workload's dtype: an fp8 GEMM on an
// H200 runs past 1,000,000 GFLOP/s, a float32 one never does.
#include <gtest/gtest.h>

#include <stdexcept>

#include "optune/tuner/search/record_check.hpp"

namespace optune::tuner {
namespace {

// A successful record of `key` with one run of `seconds` and the gflops that make.
db::TuningRecord record_of(const char* key, double seconds) {
  db::TuningRecord record;
  record.workload_key = key;
  record.config = nlohmann::json::object();
  record.device_fingerprint = nlohmann::json::object();
  record.costs = {seconds};
  record.median_seconds = seconds;
  record.gflops = kernels::parse_workload_key(key).flops() / seconds / 1e9;
  record.timestamp = 1.7e9;
  return record;
}

TEST(RecordCheck, ThroughputBoundGrowsAsTheTypeNarrows) {
  EXPECT_EQ(max_plausible_gflops(kernels::DataType::kF32), 1e6);
  EXPECT_EQ(max_plausible_gflops(kernels::DataType::kF64), 1e6);
  EXPECT_EQ(max_plausible_gflops(kernels::DataType::kBF16), 4e6);
  EXPECT_EQ(max_plausible_gflops(kernels::DataType::kE4M3), 16e6);
  RecordCheck check;
  // 4096^3 in 0.1366 ms: 1,006,000 GFLOP/s, an H200's fp8 GEMM (2026-11-30).
  EXPECT_NO_THROW(check.figures(record_of("gemm.e4m3.M4096.N4096.K4096", 0.1366e-3)));
  EXPECT_THROW(check.figures(record_of("gemm.f32.M4096.N4096.K4096", 0.1366e-3)), std::invalid_argument);
  EXPECT_THROW(check.figures(record_of("gemm.e4m3.M4096.N4096.K4096", 0.1366e-5)), std::invalid_argument);
}

}  // namespace
}  // namespace optune::tuner
