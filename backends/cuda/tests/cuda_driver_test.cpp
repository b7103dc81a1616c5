// The driver layer on a machine without a GPU: no driver means no devices and a reason naming
// libcuda.so.1; the toolkit's stub is recognised as a stub (in a child process, since a library
// once loaded keeps its soname for the process); errors are named and sticky ones told apart.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
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
