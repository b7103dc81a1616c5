// The driver layer on a machine without a GPU: no driver means no devices and a reason naming
// libcuda.so.1; the toolkit's stub is recognised as a stub and a stand-in driver's devices are
// described (in child processes, since a library once loaded keeps its soname for the process);
// errors are named and sticky ones told apart.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "devices.hpp"
#include "driver_api.hpp"
#include "child_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune::backends::cuda;

using test_support::Child;
using test_support::run;

TEST(CudaDriver, NoDriverMeansNoDevicesAndAReasonNamingLibcuda) {
  const DriverApi& api = DriverApi::get();
  if (api.is_available()) GTEST_SKIP() << "a CUDA driver is present: " << api.library;
  EXPECT_NE(api.missing.find("libcuda.so.1"), std::string::npos) << api.missing;
  EXPECT_EQ(api.missing.find('\n'), std::string::npos);
  EXPECT_FALSE(api.has_devices());
  EXPECT_TRUE(list_cuda_devices().empty());
  EXPECT_THROW(DriverApi::require(), std::runtime_error);
}

TEST(CudaDriver, ProbeWithoutDriverExitsTwoWithTheReason) {
  if (DriverApi::get().is_available()) GTEST_SKIP() << "a CUDA driver is present";
  const Child probe = run(OPTUNE_CUDA_PROBE_EXECUTABLE);
  EXPECT_EQ(probe.status, 2) << probe.output;
  EXPECT_NE(probe.output.find("no CUDA driver (libcuda.so.1"), std::string::npos) << probe.output;
}

TEST(CudaDriver, ToolkitStubIsNamedAsTheStub) {
  const fs::path stub = OPTUNE_CUDA_STUB_LIBRARY;
  if (!fs::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub libcuda.so here";
  // The stub under the driver's soname, first on the child's loader path (before any real driver).
  const fs::path directory = fs::temp_directory_path() / ("optune_cuda_stub_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  fs::create_symlink(stub, directory / "libcuda.so.1");
  const Child probe = run("LD_LIBRARY_PATH=" + directory.string() + " " + OPTUNE_CUDA_PROBE_EXECUTABLE);
  fs::remove_all(directory);
  EXPECT_EQ(probe.status, 2) << probe.output;
  EXPECT_NE(probe.output.find("libcuda.so.1 is the CUDA toolkit's stub, not a driver"), std::string::npos)
      << probe.output;
}

// DriverApi and list_cuda_devices() against tests/fake_libcuda.c, through the probe: with the
// fake first on its loader path it lists the fake's devices, compiles for them and stops at the
// first call the fake refuses (cuDevicePrimaryCtxRetain), printing its JSON on stdout.
Child run_probe_with_fake_driver(const std::string& environment = "") {
  return run(environment + " LD_LIBRARY_PATH=" OPTUNE_FAKE_LIBCUDA_DIR " " OPTUNE_CUDA_PROBE_EXECUTABLE, false);
}

nlohmann::json parse_probe(const Child& probe) {
  try {
    return nlohmann::json::parse(probe.output);
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what() << "\n" << probe.output;
    return nlohmann::json::object();
  }
}

TEST(FakeDriver, DevicesAreDescribedThroughCuGetProcAddress) {
  const Child probe = run_probe_with_fake_driver();
  if (probe.status == 2) GTEST_SKIP() << "no NVRTC here, so the probe stops before the devices";
  EXPECT_EQ(probe.status, 1);
  const nlohmann::json out = parse_probe(probe);
  EXPECT_TRUE(out.value("driver_library", "").starts_with(OPTUNE_FAKE_LIBCUDA_DIR)) << out;
  ASSERT_EQ(out["devices"].size(), 2u) << "the fake's cuGetProcAddress_v2 counts two devices, its export one";
  const nlohmann::json& device = out["devices"][1];
  EXPECT_EQ(device["ordinal"], 1);
  EXPECT_EQ(device["name"], "Fake GPU 1");
  EXPECT_EQ(device["compute_capability"], "9.0");
  EXPECT_EQ(device["sm_count"], 133);
  EXPECT_EQ(device["total_memory_bytes"], std::uint64_t(80) << 30);
  EXPECT_EQ(device["l2_bytes"], 52428800);
  EXPECT_EQ(device["max_threads_per_block"], 1024);
  EXPECT_EQ(device["max_block_dims"], nlohmann::json({1024, 1024, 64}));
  EXPECT_EQ(device["max_grid_dims"], nlohmann::json({2147483647, 65535, 65535}));
  EXPECT_EQ(device["max_shared_per_block"], 49152);
  EXPECT_EQ(device["max_shared_per_block_optin"], 232448);
  EXPECT_EQ(device["registers_per_block"], 65536);
  EXPECT_EQ(device["warp_size"], 32);
  EXPECT_EQ(device["clock_khz"], 1980000);
  if (fs::exists("/proc/driver/nvidia/version")) {
    EXPECT_NE(device["driver_version"], "");
  } else {
    EXPECT_EQ(device["driver_version"], "13.0");
  }
  EXPECT_EQ(out["compile"]["arch"], "sm_90a");
  EXPECT_TRUE(out["compile"]["ok"].get<bool>());
  EXPECT_EQ(out["compile"]["lowered_names"]["&matmul<float, 32>"], "_Z6matmulIfLi32EEvPKT_S2_PS0_ii");
  EXPECT_TRUE(out["error"]["message"].get<std::string>().starts_with(
      "cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_VALUE"))
      << out["error"];
  EXPECT_FALSE(out["ok"].get<bool>());
}

TEST(FakeDriver, DlsymOfTheVersionedNamesServesADriverWithoutProcAddress) {
  const Child probe = run_probe_with_fake_driver("FAKE_CUDA_NO_PROC_ADDRESS=1");
  if (probe.status == 2) GTEST_SKIP() << "no NVRTC here, so the probe stops before the devices";
  const nlohmann::json out = parse_probe(probe);
  ASSERT_EQ(out["devices"].size(), 1u) << out;
  EXPECT_EQ(out["devices"][0]["name"], "Fake GPU 0");
  EXPECT_EQ(out["devices"][0]["total_memory_bytes"], std::uint64_t(80) << 30);
}

TEST(FakeDriver, NoDeviceLeavesTheDriverUsableAndTheListEmpty) {
  const Child probe = run("FAKE_CUDA_NO_DEVICE=1 LD_LIBRARY_PATH=" OPTUNE_FAKE_LIBCUDA_DIR " " OPTUNE_CUDA_PROBE_EXECUTABLE);
  EXPECT_EQ(probe.status, 2);
  EXPECT_NE(probe.output.find("\"devices\": []"), std::string::npos) << probe.output;
  EXPECT_NE(probe.output.find("optune-cuda-probe: no CUDA device 0 (0 found)"), std::string::npos) << probe.output;
}

TEST(CudaErrors, StickyCodesAreTheOnesThatPoisonTheProcess) {
  for (CUresult code : {700, 702, 710, 714, 715, 716, 717, 718, 719}) EXPECT_TRUE(is_sticky(code)) << code;
  for (CUresult code : {0, 1, 2, 34, 100, 200, 209, 701, 999}) EXPECT_FALSE(is_sticky(code)) << code;
}

TEST(CudaErrors, CheckThrowsAnErrorNamingTheCallAndTheCode) {
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuInit"));
  try {
    check(CUDA_ERROR_ILLEGAL_ADDRESS, "cuLaunchKernel");
    FAIL() << "check did not throw";
  } catch (const CudaError& error) {
    EXPECT_EQ(error.code(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_TRUE(error.is_sticky());
    EXPECT_STREQ(error.what(), "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered");
  }
  EXPECT_EQ(error_text(12345), "CUDA error 12345");
}

TEST(CudaDevices, KernelModuleVersionOfProprietaryAndOpenDrivers) {
  EXPECT_EQ(kernel_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 14 "
                                  "2025\nGCC version:  gcc version 12.2.0\n"),
            "580.159.04");
  EXPECT_EQ(kernel_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                                  "Build  (dvs-builder@U22)  Thu Oct  9 2025\n"),
            "580.159.04");
  EXPECT_EQ(kernel_module_version("GCC version: 12.2.0\n"), "");
}

}  // namespace
