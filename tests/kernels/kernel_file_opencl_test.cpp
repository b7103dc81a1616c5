// The OpenCL example of configs/kernels is a correct kernel: on a real device (PoCL here), valid
// configs of transpose.toml, built with their defines and launched with their sizes, give exactly
// what its reference kernel gives, and the space the device's limits shape has configs PoCL runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "optune/kernels/kernel_problem.hpp"
#include "optune/kernels/opencl/cl_api.hpp"

namespace optune::kernels {
namespace {

using opencl::check;

cl_device_id first_device() {
  cl_platform_id platform = nullptr;
  cl_uint count = 0;
  if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0) return nullptr;
  cl_device_id device = nullptr;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) != CL_SUCCESS || count == 0) return nullptr;
  return device;
}

std::string joined(const std::vector<std::string>& options) {
  std::string text;
  for (const std::string& option : options) text += (text.empty() ? "" : " ") + option;
  return text;
}

class TransposeExample : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = first_device();
    if (!device_) GTEST_SKIP() << "no OpenCL device (scripts/setup.sh installs PoCL)";
    cl_int error = CL_SUCCESS;
    context_ = opencl::Context(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext");
    queue_ = opencl::Queue(clCreateCommandQueue(context_.get(), device_, 0, &error));
    check(error, "clCreateCommandQueue");
    std::ifstream in(std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/transpose.cl");
    std::stringstream text;
    text << in.rdbuf();
    source_ = text.str();
  }

  opencl::Buffer buffer(std::size_t floats, const float* data) {
    cl_int error = CL_SUCCESS;
    const cl_mem_flags flags = CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0);
    opencl::Buffer made(clCreateBuffer(context_.get(), flags, floats * sizeof(float), const_cast<float*>(data), &error));
    check(error, "clCreateBuffer");
    return made;
  }

  // Builds `source_` with `options`, runs `kernel` on the problem's args with `launch`, and gives
  // the output (first filled with NaN, so an element left unwritten shows).
  std::vector<float> run(const KernelProblem& problem, const std::string& kernel_name, const std::string& options,
                         const LaunchSize& launch, const std::vector<float>& input) {
    cl_int error = CL_SUCCESS;
    const char* text = source_.c_str();
    opencl::Program program(clCreateProgramWithSource(context_.get(), 1, &text, nullptr, &error));
    check(error, "clCreateProgramWithSource");
    check(clBuildProgram(program.get(), 1, &device_, options.c_str(), nullptr, nullptr), "clBuildProgram");
    opencl::Kernel kernel(clCreateKernel(program.get(), kernel_name.c_str(), &error));
    check(error, "clCreateKernel");
    const std::vector<float> poison(input.size(), std::numeric_limits<float>::quiet_NaN());
    opencl::Buffer in = buffer(input.size(), input.data());
    opencl::Buffer out = buffer(poison.size(), poison.data());
    const cl_mem in_handle = in.get(), out_handle = out.get();
    const cl_int n = static_cast<cl_int>(problem.args()[2].value), m = static_cast<cl_int>(problem.args()[3].value);
    check(clSetKernelArg(kernel.get(), 0, sizeof(cl_mem), &in_handle), "clSetKernelArg");
    check(clSetKernelArg(kernel.get(), 1, sizeof(cl_mem), &out_handle), "clSetKernelArg");
    check(clSetKernelArg(kernel.get(), 2, sizeof(cl_int), &n), "clSetKernelArg");
    check(clSetKernelArg(kernel.get(), 3, sizeof(cl_int), &m), "clSetKernelArg");
    std::size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      global[d] = static_cast<std::size_t>(launch.global[d]);
      local[d] = static_cast<std::size_t>(launch.local[d]);
    }
    check(clEnqueueNDRangeKernel(queue_.get(), kernel.get(), static_cast<cl_uint>(launch.dimensions), nullptr, global,
                                 launch.has_local ? local : nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    std::vector<float> result(input.size());
    check(clEnqueueReadBuffer(queue_.get(), out.get(), CL_TRUE, 0, result.size() * sizeof(float), result.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    return result;
  }

  cl_device_id device_ = nullptr;
  opencl::Context context_;
  opencl::Queue queue_;
  std::string source_;
};

TEST_F(TransposeExample, ValidConfigsMatchTheReferenceExactly) {
  const KernelSpec spec = load_kernel_file(std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/transpose.toml");
  const KernelProblem problem(spec, "N=128,M=64", opencl::describe_device(device_));  // not square: n and m differ
  const auto& space = problem.space();
  std::vector<search_space::Config> valid;
  for (std::uint64_t i = 0; i < space.size(); ++i)
    if (space.is_valid(space.from_index(i))) valid.push_back(space.from_index(i));
  ASSERT_GE(valid.size(), 4u) << "PoCL's limits leave too few configs to test";

  std::vector<float> input(static_cast<std::size_t>(problem.args()[0].count));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i);  // each value names its place
  // The reference is built with a valid config's defines, as the file's [check] says.
  const std::vector<float> expected =
      run(problem, spec.check.reference, joined(problem.build_options(valid.front())), *problem.reference_launch(), input);
  for (int x = 0; x < 128; ++x)
    for (int y = 0; y < 64; ++y) ASSERT_EQ(expected[x * 64 + y], input[y * 128 + x]) << "the reference transposes";

  // Four configs spread over the valid ones (PoCL compiles slowly): the smallest and largest tiles.
  for (std::size_t pick = 0; pick < 4; ++pick) {
    const search_space::Config& config = valid[pick * (valid.size() - 1) / 3];
    const std::string options = joined(problem.build_options(config));
    EXPECT_EQ(run(problem, spec.entry, options, problem.launch(config), input), expected) << options;
  }
}

}  // namespace
}  // namespace optune::kernels
