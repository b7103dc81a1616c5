// The driver layer on a machine without a GPU: no driver means no devices and a reason naming
// libcuda.so.1; the toolkit's stub is recognised as a stub and a stand-in driver's devices are
// described (in child processes, since a library once loaded keeps its soname for the process);
// errors are named and sticky ones told apart.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "devices.hpp"
#include "driver_api.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune::backends::cuda;

struct Child {
  int status = -1;
  std::string output;  // stdout and stderr
};

Child run(const std::string& command) {
  Child child;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) child.output.append(buffer, n);
  const int status = pclose(pipe);
  child.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return child;
}

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

// DriverApi and list_cuda_devices() against tests/fake_libcuda.c: this binary runs again with the
// fake first on the loader's path and one FakeDriverChild test selected, whose assertions decide
// the child's exit status. The FakeDriverChild tests skip when run directly.
Child run_with_fake_driver(const std::string& test, const std::string& environment = "") {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  return run("LD_LIBRARY_PATH=" OPTUNE_FAKE_LIBCUDA_DIR " OPTUNE_FAKE_DRIVER_CHILD=1 " + environment + " " + self +
             " --gtest_filter=FakeDriverChild." + test);
}

void expect_child_passed(const Child& child) {
  EXPECT_EQ(child.status, 0) << child.output;
  EXPECT_NE(child.output.find("[  PASSED  ] 1 test."), std::string::npos) << child.output;
  EXPECT_EQ(child.output.find("[  SKIPPED ]"), std::string::npos) << child.output;
}

TEST(FakeDriver, DevicesAreDescribedThroughCuGetProcAddress) {
  expect_child_passed(run_with_fake_driver("TwoDevicesThroughProcAddress"));
}
TEST(FakeDriver, DlsymOfTheVersionedNamesServesADriverWithoutProcAddress) {
  expect_child_passed(run_with_fake_driver("OneDeviceThroughDlsym", "FAKE_CUDA_NO_PROC_ADDRESS=1"));
}
TEST(FakeDriver, NoDeviceLeavesTheDriverUsableAndTheListEmpty) {
  expect_child_passed(run_with_fake_driver("NoDevice", "FAKE_CUDA_NO_DEVICE=1"));
}

// The probe as far as a driver without GPUs lets it go: devices listed, kernels compiled for the
// fake's compute capability 9.0, then the context refused, reported as JSON with exit status 1.
TEST(FakeDriver, ProbeCompilesForTheDeviceAndReportsTheFailingCall) {
  const Child probe = run("LD_LIBRARY_PATH=" OPTUNE_FAKE_LIBCUDA_DIR " " OPTUNE_CUDA_PROBE_EXECUTABLE);
  if (probe.status == 2 && probe.output.find("no NVRTC") != std::string::npos) GTEST_SKIP() << probe.output;
  EXPECT_EQ(probe.status, 1) << probe.output;
  EXPECT_NE(probe.output.find("\"name\": \"Fake GPU 1\""), std::string::npos) << probe.output;
  EXPECT_NE(probe.output.find("\"arch\": \"sm_90a\""), std::string::npos) << probe.output;
  EXPECT_NE(probe.output.find("\"_Z6matmulIfLi32EEvPKT_S2_PS0_ii\""), std::string::npos) << probe.output;
  EXPECT_NE(probe.output.find("cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_VALUE"), std::string::npos)
      << probe.output;
}

class FakeDriverChild : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("OPTUNE_FAKE_DRIVER_CHILD")) GTEST_SKIP() << "runs as a child of the FakeDriver tests";
  }
};

TEST_F(FakeDriverChild, TwoDevicesThroughProcAddress) {
  const DriverApi& api = DriverApi::get();
  ASSERT_TRUE(api.is_available()) << api.missing;
  EXPECT_TRUE(api.library.starts_with(OPTUNE_FAKE_LIBCUDA_DIR)) << api.library;
  const std::vector<CudaDeviceInfo> devices = list_cuda_devices();
  ASSERT_EQ(devices.size(), 2u) << "the fake's cuGetProcAddress_v2 counts two devices, its dlsym'd export one";
  const CudaDeviceInfo& device = devices[1];
  EXPECT_EQ(device.ordinal, 1);
  EXPECT_EQ(device.name, "Fake GPU 1");
  EXPECT_EQ(device.compute_major, 9);
  EXPECT_EQ(device.compute_minor, 0);
  EXPECT_EQ(device.sm_count, 133);
  EXPECT_EQ(device.total_memory_bytes, std::uint64_t(80) << 30);
  EXPECT_EQ(device.l2_bytes, 52428800);
  EXPECT_EQ(device.max_threads_per_block, 1024);
  EXPECT_EQ(device.max_block_dims, (std::array<int, 3>{1024, 1024, 64}));
  EXPECT_EQ(device.max_grid_dims, (std::array<int, 3>{2147483647, 65535, 65535}));
  EXPECT_EQ(device.max_shared_per_block, 49152);
  EXPECT_EQ(device.max_shared_per_block_optin, 232448);
  EXPECT_EQ(device.registers_per_block, 65536);
  EXPECT_EQ(device.warp_size, 32);
  EXPECT_EQ(device.clock_khz, 1980000);
  if (fs::exists("/proc/driver/nvidia/version")) {
    EXPECT_FALSE(device.driver_version.empty());
  } else {
    EXPECT_EQ(device.driver_version, "13.0");
  }
}

TEST_F(FakeDriverChild, OneDeviceThroughDlsym) {
  ASSERT_TRUE(DriverApi::get().is_available()) << DriverApi::get().missing;
  const std::vector<CudaDeviceInfo> devices = list_cuda_devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "Fake GPU 0");
  EXPECT_EQ(devices[0].total_memory_bytes, std::uint64_t(80) << 30);
}

TEST_F(FakeDriverChild, NoDevice) {
  const DriverApi& api = DriverApi::get();
  EXPECT_TRUE(api.is_available()) << api.missing;
  EXPECT_EQ(api.init_result, CUDA_ERROR_NO_DEVICE);
  EXPECT_FALSE(api.has_devices());
  EXPECT_TRUE(list_cuda_devices().empty());
  EXPECT_EQ(error_text(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected");
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
