// A temporary directory for kernel-file tests: write a file (a kernel file, a source, an expected
// output), load a kernel file from it, and see the one-line error a bad file gives.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file.hpp"

namespace optune::kernels::testing {

// The message of the std::invalid_argument `attempt` throws, or `success` when it throws none.
template <typename Attempt>
std::string message_of(Attempt&& attempt, const std::string& success = "(loaded)") {
  try {
    attempt();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return success;
}

class KernelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    dir_ = std::filesystem::temp_directory_path() / ("optune_kernel_file_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    write("k.cl", "__kernel void k(__global const float* in, __global float* out) {}\n");
    write("k.cpp", "extern \"C\" void k(const float* in, float* out) {}\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  KernelSpec load(const std::string& toml) const { return optune::backends::load_kernel_file(write("k.toml", toml)); }

  // The message of the std::invalid_argument loading `toml` gives, or "(loaded)".
  std::string error_of(const std::string& toml) const {
    return message_of([&] { load(toml); });
  }

  std::filesystem::path dir_;
};

// A small valid OpenCL kernel file; hostile tests change one thing in it.
inline const char* kValidOpenCLFile = R"(name = "k"
backend = "opencl"
source = "k.cl"
entry = "k"
args = [
  { name = "in", kind = "buffer", dtype = "f32", count = "N" },
  { name = "out", kind = "buffer", dtype = "f32", count = "N", output = true },
  { name = "n", kind = "scalar", dtype = "i32", value = "N" },
]
[extents]
N = 1024
[knobs]
WG = [32, 64]
MODE = ["fast", "exact"]
[constraints]
rules = ["N % WG == 0"]
[launch]
global = ["N"]
local = ["WG"]
)";

// `text` with the first `find` replaced; the test fails when `find` is not there.
inline std::string replaced(std::string text, const std::string& find, const std::string& replacement) {
  const auto at = text.find(find);
  EXPECT_NE(at, std::string::npos) << "not in the text: " << find;
  if (at != std::string::npos) text.replace(at, find.size(), replacement);
  return text;
}

}  // namespace optune::kernels::testing
