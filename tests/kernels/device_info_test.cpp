// DeviceInfo: SIMD width from ISA flags, and a fingerprint whose id is stable and tells devices
// apart.
#include <gtest/gtest.h>

#include <stdexcept>

#include "optune/kernels/device_info.hpp"

namespace optune::kernels {
namespace {

DeviceInfo sample_cpu() {
  DeviceInfo d;
  d.name = "Intel(R) Xeon(R) Platinum 8480+";
  d.arch = "x86_64";
  d.cores = 2;
  d.isa = {"avx2", "fma", "sse4_2"};
  d.l3_bytes = 105 * 1024 * 1024;
  return d;
}

TEST(DeviceInfo, SimdLanesFollowTheWidestIsa) {
  DeviceInfo d;
  d.arch = "x86_64";
  d.isa = {"avx2", "avx512f", "fma"};
  EXPECT_EQ(d.simd_f32_lanes(), 16);
  d.isa = {"avx2", "fma"};
  EXPECT_EQ(d.simd_f32_lanes(), 8);
  d.isa = {"sse4_2"};
  EXPECT_EQ(d.simd_f32_lanes(), 4);
  d.arch = "aarch64";
  d.isa = {"asimd"};
  EXPECT_EQ(d.simd_f32_lanes(), 4);
  d.isa = {"neon"};
  EXPECT_EQ(d.simd_f32_lanes(), 4);
  d.arch = "riscv64";
  d.isa = {};
  EXPECT_EQ(d.simd_f32_lanes(), 1);
  EXPECT_TRUE(sample_cpu().has_isa("fma"));
  EXPECT_FALSE(sample_cpu().has_isa("avx512f"));
}

TEST(DeviceInfo, FingerprintIdIsStableAndShort) {
  const DeviceInfo d = sample_cpu();
  const std::string id = d.fingerprint_id();
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(sample_cpu().fingerprint_id(), id);
  DeviceInfo reordered = d;
  reordered.isa = {"sse4_2", "fma", "avx2"};
  EXPECT_EQ(reordered.fingerprint_id(), id);
}

TEST(DeviceInfo, FingerprintIdDiffersWhenAFieldDiffers) {
  const std::string id = sample_cpu().fingerprint_id();
  DeviceInfo more_cores = sample_cpu();
  more_cores.cores = 4;
  DeviceInfo other_model = sample_cpu();
  other_model.name = "AMD EPYC 9654";
  DeviceInfo other_isa = sample_cpu();
  other_isa.isa.push_back("avx512f");
  DeviceInfo other_driver = sample_cpu();
  other_driver.driver_version = "5.0";
  for (const DeviceInfo& d : {more_cores, other_model, other_isa, other_driver}) {
    EXPECT_NE(d.fingerprint_id(), id);
  }
}

TEST(DeviceInfo, FingerprintRoundTrips) {
  DeviceInfo gpu;
  gpu.kind = "opencl";
  gpu.name = "cpu-haswell-Intel(R) Xeon(R)";
  gpu.platform = "Portable Computing Language";
  gpu.driver_version = "3.1";
  gpu.cores = 16;
  gpu.local_mem_bytes = 65536;
  gpu.max_work_group_size = 4096;
  gpu.max_work_item_sizes = {4096, 4096, 4096};
  for (const DeviceInfo& d : {sample_cpu(), gpu}) {
    const auto json = d.fingerprint();
    for (const char* key : {"kind", "name", "arch", "cores", "isa", "l1d_bytes", "l2_bytes",
                            "l3_bytes", "platform", "driver_version", "local_mem_bytes",
                            "max_work_group_size", "max_work_item_sizes"}) {
      EXPECT_TRUE(json.contains(key)) << key;
    }
    const DeviceInfo back = DeviceInfo::from_fingerprint(json);
    EXPECT_EQ(back.fingerprint(), json);
    EXPECT_EQ(back.fingerprint_id(), d.fingerprint_id());
  }
}

// NVIDIA's OpenCL devices carry their compute capability as an "sm_XY" isa flag, which survives
// the fingerprint (a remote device's info comes back from it); every other device has none.
TEST(DeviceInfo, NvidiaComputeCapabilityComesFromTheSmFlagAndSurvivesTheFingerprint) {
  DeviceInfo gpu;
  gpu.kind = "opencl";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.isa = {"sm_90"};
  EXPECT_EQ(gpu.nvidia_compute_capability(), 90);
  EXPECT_EQ(DeviceInfo::from_fingerprint(gpu.fingerprint()).nvidia_compute_capability(), 90);
  gpu.isa = {"sm_86"};
  EXPECT_EQ(gpu.nvidia_compute_capability(), 86);
  gpu.isa = {"sm_", "sm_x9"};
  EXPECT_EQ(gpu.nvidia_compute_capability(), 0);
  EXPECT_EQ(sample_cpu().nvidia_compute_capability(), 0);
}

TEST(DeviceInfo, FromFingerprintRejectsBadJson) {
  EXPECT_THROW(DeviceInfo::from_fingerprint(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(DeviceInfo::from_fingerprint(nlohmann::json{{"cores", "many"}}),
               std::invalid_argument);
  EXPECT_EQ(DeviceInfo::from_fingerprint(nlohmann::json::object()).kind, "cpu");
}

// Fingerprints come from peers (a server's welcome, a registration at the tracker): a count that
// is no integer of the field's range is refused, not converted (found by fuzz_rpc_message, where
// "l1d_bytes": 3.3e39 was undefined behaviour).
TEST(DeviceInfo, FromFingerprintRefusesCountsOutOfRange) {
  using nlohmann::json;
  for (const json& bad : {json{{"l1d_bytes", 3.27687e39}}, json{{"cores", 2.5}}, json{{"cores", -3}},
                          json{{"cores", 0}}, json{{"l3_bytes", 18446744073709551615ull}},
                          json{{"max_work_item_sizes", {1024, 1e300}}}, json{{"max_work_item_sizes", 7}},
                          json{{"preferred_vector_width", -1}}}) {
    EXPECT_THROW(DeviceInfo::from_fingerprint(bad), std::invalid_argument) << bad;
  }
  const DeviceInfo read = DeviceInfo::from_fingerprint(json{{"cores", 64}, {"l3_bytes", 1ull << 40}});
  EXPECT_EQ(read.cores, 64);
  EXPECT_EQ(read.l3_bytes, std::int64_t{1} << 40);
}

TEST(DeviceInfo, AttributesRoundTripAndLeaveFingerprintsWithoutThemAsTheyWere) {
  const DeviceInfo cpu = sample_cpu();
  EXPECT_FALSE(cpu.fingerprint().contains("attributes"));
  // The id this device had before attributes existed: records stored under it still match.
  EXPECT_EQ(cpu.fingerprint_id(), "9ee885e83df49e6e");
  DeviceInfo gpu = cpu;
  gpu.attributes = {{"warp_size", 32}, {"max_grid_dim_y", 65535}};
  EXPECT_NE(gpu.fingerprint_id(), cpu.fingerprint_id());
  const DeviceInfo back = DeviceInfo::from_fingerprint(gpu.fingerprint());
  EXPECT_EQ(back.attributes, gpu.attributes);
  EXPECT_EQ(back.fingerprint_id(), gpu.fingerprint_id());
  nlohmann::json listed = gpu.fingerprint();
  listed["attributes"] = nlohmann::json::array({32});
  EXPECT_THROW(DeviceInfo::from_fingerprint(listed), std::invalid_argument);
  listed["attributes"] = {{"warp_size", -1}};
  EXPECT_THROW(DeviceInfo::from_fingerprint(listed), std::invalid_argument);
}

}  // namespace
}  // namespace optune::kernels
