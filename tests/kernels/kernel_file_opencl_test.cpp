// The OpenCL examples of configs/kernels are correct kernels: on a real device (PoCL here), valid
// configs of transpose.toml, conv2d.toml, reduction.toml and axpy_f16.toml, built with their
// defines and launched with their sizes, give what their reference kernels give within the file's
// tolerance (exactly, for the transpose), and the space the device's limits shape has configs the
// device runs. The references are checked against the host first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "optune/backends/registry.hpp"
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
  const KernelSpec spec = optune::backends::load_kernel_file(std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/transpose.toml");
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

// ---- conv2d, reduction and axpy_f16: any arguments, compared within the file's tolerance ----

using search_space::Config;
using Bytes = std::vector<unsigned char>;  // one argument's host data; empty for a scalar

double half_value(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// The half of a value a half holds exactly (the inputs below are multiples of 2^-10 in [-1, 1)).
std::uint16_t half_bits(double value) {
  if (std::isnan(value)) return 0x7e00;
  if (value == 0) return 0;
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // in [0.5, 1)
  const auto mantissa = static_cast<std::uint16_t>((fraction * 2 - 1) * 1024);
  const auto bits = static_cast<std::uint16_t>((value < 0 ? 0x8000 : 0) | (exponent + 14) << 10 | mantissa);
  if (half_value(bits) != value) throw std::logic_error("not exactly a half: " + std::to_string(value));
  return bits;
}

double element(const Bytes& bytes, DataType type, std::size_t i) {
  if (type == DataType::kF16) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    return half_value(bits);
  }
  float value = 0;
  std::memcpy(&value, bytes.data() + 4 * i, 4);
  return value;
}

// A buffer as the file starts it: its init (random: a fixed sequence of multiples of 2^-10 in
// [-1, 1), exact in half and float), or NaN for a write-only output. f32 and f16 only.
Bytes initial_data(const BoundArg& arg) {
  Bytes bytes(static_cast<std::size_t>(arg.bytes));
  std::uint32_t state = 12345;
  for (std::int64_t i = 0; i < arg.count; ++i) {
    state = state * 1664525u + 1013904223u;
    double value = std::numeric_limits<double>::quiet_NaN();
    if (arg.init == BufferInit::kRandom) value = static_cast<double>(static_cast<int>((state >> 8) % 2048) - 1024) / 1024;
    if (arg.init == BufferInit::kZeros) value = 0;
    if (arg.init == BufferInit::kOnes) value = 1;
    if (arg.init == BufferInit::kIota) value = static_cast<double>(i);
    if (arg.dtype == DataType::kF16) {
      const std::uint16_t bits = half_bits(value);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    } else {
      const auto single = static_cast<float>(value);
      std::memcpy(bytes.data() + 4 * i, &single, 4);
    }
  }
  return bytes;
}

bool has_extension(cl_device_id device, const std::string& name) {
  return (" " + opencl::device_text(device, CL_DEVICE_EXTENSIONS) + " ").find(" " + name + " ") != std::string::npos;
}

class KernelFileExample : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = first_device();
    if (!device_) GTEST_SKIP() << "no OpenCL device (scripts/setup.sh installs PoCL)";
    cl_int error = CL_SUCCESS;
    context_ = opencl::Context(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext");
    queue_ = opencl::Queue(clCreateCommandQueue(context_.get(), device_, 0, &error));
    check(error, "clCreateCommandQueue");
  }

  KernelProblem bind(const std::string& file, std::string_view shape) const {
    return KernelProblem(optune::backends::load_kernel_file(std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/" + file), shape,
                         opencl::describe_device(device_));
  }

  static std::vector<Bytes> initial_data(const KernelProblem& problem) {
    std::vector<Bytes> data;
    for (const BoundArg& arg : problem.args()) data.push_back(arg.is_buffer() ? kernels::initial_data(arg) : Bytes{});
    return data;
  }

  // Builds the problem's source with `options`, runs `kernel_name` on `data` (buffers in argument
  // order; scalars from the problem) with `launch`, and gives `data` with the outputs read back.
  std::vector<Bytes> run(const KernelProblem& problem, const std::string& kernel_name, const std::string& options,
                         const LaunchSize& launch, std::vector<Bytes> data) {
    std::ifstream in(problem.spec().source);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    const char* source_text = source.c_str();
    cl_int error = CL_SUCCESS;
    opencl::Program program(clCreateProgramWithSource(context_.get(), 1, &source_text, nullptr, &error));
    check(error, "clCreateProgramWithSource");
    if (clBuildProgram(program.get(), 1, &device_, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(program.get(), device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program.get(), device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw std::runtime_error("clBuildProgram with " + options + ":\n" + log);
    }
    opencl::Kernel kernel(clCreateKernel(program.get(), kernel_name.c_str(), &error));
    check(error, "clCreateKernel");
    std::vector<opencl::Buffer> buffers(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      const BoundArg& arg = problem.args()[i];
      const auto index = static_cast<cl_uint>(i);
      if (arg.is_buffer()) {
        buffers[i] = opencl::Buffer(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data[i].size(),
                                                   data[i].data(), &error));
        check(error, "clCreateBuffer");
        const cl_mem handle = buffers[i].get();
        check(clSetKernelArg(kernel.get(), index, sizeof(cl_mem), &handle), "clSetKernelArg");
      } else if (arg.dtype == DataType::kF32) {
        const auto value = static_cast<cl_float>(arg.value);
        check(clSetKernelArg(kernel.get(), index, sizeof value, &value), "clSetKernelArg");
      } else {
        EXPECT_EQ(arg.dtype, DataType::kI32) << "the examples' scalars are f32 or i32";
        const auto value = static_cast<cl_int>(arg.value);
        check(clSetKernelArg(kernel.get(), index, sizeof value, &value), "clSetKernelArg");
      }
    }
    std::size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      global[d] = static_cast<std::size_t>(launch.global[d]);
      local[d] = static_cast<std::size_t>(launch.local[d]);
    }
    check(clEnqueueNDRangeKernel(queue_.get(), kernel.get(), static_cast<cl_uint>(launch.dimensions), nullptr, global,
                                 launch.has_local ? local : nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    for (std::size_t i = 0; i < data.size(); ++i)
      if (problem.args()[i].is_output)
        check(clEnqueueReadBuffer(queue_.get(), buffers[i].get(), CL_TRUE, 0, data[i].size(), data[i].data(), 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
    return data;
  }

  // The reference kernel's outputs, built with the first valid config's defines as the file says.
  std::vector<Bytes> run_reference(const KernelProblem& problem, const std::vector<Bytes>& inputs) {
    const Config first = problem.space().sample_valid(rng_);
    return run(problem, problem.spec().check.reference, joined(problem.build_options(first)), *problem.reference_launch(), inputs);
  }

  // Every output element within the file's tolerance of the reference's; an unwritten element
  // (still NaN) fails. Reports the first element that is not.
  static void expect_close(const KernelProblem& problem, const std::vector<Bytes>& got, const std::vector<Bytes>& want,
                           const std::string& label) {
    const KernelCheck& check = problem.spec().check;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const BoundArg& arg = problem.args()[i];
      if (!arg.is_output) continue;
      for (std::int64_t e = 0; e < arg.count; ++e) {
        const double value = element(got[i], arg.dtype, e), expected = element(want[i], arg.dtype, e);
        if (!(std::fabs(value - expected) <= check.atol + check.rtol * std::fabs(expected))) {
          ADD_FAILURE() << label << ": " << arg.name << "[" << e << "] is " << value << ", the reference's " << expected;
          return;
        }
      }
    }
  }

  // The first and last valid configs, `sampled` more drawn with a fixed seed, and `chosen` (knob
  // values; each must be valid), each against the reference.
  void expect_configs_match_reference(const KernelProblem& problem, const std::vector<Bytes>& inputs,
                                      const std::vector<Bytes>& reference, std::size_t sampled,
                                      const std::vector<nlohmann::json>& chosen) {
    const auto& space = problem.space();
    std::vector<Config> configs;
    for (std::uint64_t i = 0; i < space.size() && configs.empty(); ++i)
      if (space.is_valid(space.from_index(i))) configs.push_back(space.from_index(i));
    for (std::uint64_t i = space.size(); i-- > 0 && configs.size() < 2;)
      if (space.is_valid(space.from_index(i))) configs.push_back(space.from_index(i));
    ASSERT_EQ(configs.size(), 2u) << "no valid config on this device";
    for (const Config& config : space.sample_valid_distinct(rng_, sampled)) configs.push_back(config);
    for (const nlohmann::json& values : chosen) {
      configs.push_back(space.from_json(values));
      ASSERT_EQ(space.first_violation(configs.back()), "") << values.dump();
    }
    for (const Config& config : configs) {
      const std::string options = joined(problem.build_options(config));
      expect_close(problem, run(problem, problem.spec().entry, options, problem.launch(config), inputs), reference, options);
    }
  }

  cl_device_id device_ = nullptr;
  opencl::Context context_;
  opencl::Queue queue_;
  std::mt19937_64 rng_{20};
};

// 67 x 45 outputs: no tile divides either, so every config has work-items past both edges.
TEST_F(KernelFileExample, Conv2dValidConfigsMatchTheReference) {
  const KernelProblem problem = bind("conv2d.toml", "W=67,H=45");
  const std::vector<Bytes> inputs = initial_data(problem);
  const std::vector<Bytes> reference = run_reference(problem, inputs);
  const int w = 67, h = 45, in_w = w + 16;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double sum = 0;
      for (int fy = 0; fy < 17; ++fy)
        for (int fx = 0; fx < 17; ++fx) sum += element(inputs[0], DataType::kF32, (y + fy) * in_w + x + fx) * element(inputs[1], DataType::kF32, fy * 17 + fx);
      ASSERT_NEAR(element(reference[2], DataType::kF32, y * w + x), sum, 1e-4) << "the reference convolves, at " << x << ", " << y;
    }
  expect_configs_match_reference(problem, inputs, reference, 4,
                                 {{{"BLOCK_X", 16}, {"BLOCK_Y", 4}, {"TILE_X", 4}, {"TILE_Y", 2}, {"USE_LOCAL", 1}, {"UNROLL", 1}},
                                  {{"BLOCK_X", 128}, {"BLOCK_Y", 8}, {"TILE_X", 2}, {"TILE_Y", 4}, {"USE_LOCAL", 1}, {"UNROLL", 0}},
                                  {{"BLOCK_X", 32}, {"BLOCK_Y", 2}, {"TILE_X", 1}, {"TILE_Y", 4}, {"USE_LOCAL", 0}, {"UNROLL", 1}}});
}

// 6 parts of 200 floats: fewer vectors than work-items in big groups, and tails after the
// unrolled steps, in both access orders.
TEST_F(KernelFileExample, ReductionValidConfigsMatchTheReference) {
  const KernelProblem problem = bind("reduction.toml", "N=1200,PARTS=6");
  const std::vector<Bytes> inputs = initial_data(problem);
  const std::vector<Bytes> reference = run_reference(problem, inputs);
  for (int part = 0; part < 6; ++part) {
    double sum = 0;
    for (int i = 0; i < 200; ++i) sum += element(inputs[0], DataType::kF32, part * 200 + i);
    ASSERT_EQ(element(reference[1], DataType::kF32, part), sum) << "the reference sums part " << part << " exactly";
  }
  expect_configs_match_reference(problem, inputs, reference, 4,
                                 {{{"WG", 32}, {"VW", 8}, {"UNROLL", 4}, {"ACCESS", "strided"}},
                                  {{"WG", 1024}, {"VW", 1}, {"UNROLL", 2}, {"ACCESS", "blocked"}},
                                  {{"WG", 64}, {"VW", 2}, {"UNROLL", 4}, {"ACCESS", "blocked"}}});
}

TEST_F(KernelFileExample, AxpyF16ValidConfigsMatchTheReference) {
  if (!has_extension(device_, "cl_khr_fp16"))
    GTEST_SKIP() << "the device (" << opencl::device_text(device_, CL_DEVICE_NAME)
                 << ") has no cl_khr_fp16, so axpy_f16 cannot build here (PoCL on the CPU reports none)";
  const KernelProblem problem = bind("axpy_f16.toml", "N=8192");
  const std::vector<Bytes> inputs = initial_data(problem);
  const std::vector<Bytes> reference = run_reference(problem, inputs);
  for (int i = 0; i < 8192; ++i) {
    const double expected = 0.75 * element(inputs[0], DataType::kF16, i) + element(inputs[1], DataType::kF16, i);
    ASSERT_NEAR(element(reference[2], DataType::kF16, i), expected, 1e-3) << "the reference computes a * x + y at " << i;
  }
  expect_configs_match_reference(problem, inputs, reference, 4,
                                 {{{"WG", 64}, {"VW", 8}, {"WPT", 8}, {"MATH", "f16"}},
                                  {{"WG", 512}, {"VW", 2}, {"WPT", 8}, {"MATH", "f32"}}});
}

// Where the device has no half (PoCL), the kernel's vectors and indexing still get checked: the
// same source with half mapped to float by -D (buffers of f32), every config of a small problem.
// This says nothing of half arithmetic; the test above does, on a device with cl_khr_fp16.
TEST_F(KernelFileExample, AxpyF16IndexingMatchesWithHalfMappedToFloat) {
  KernelSpec spec = optune::backends::load_kernel_file(std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/axpy_f16.toml");
  for (KernelArg& arg : spec.args)
    if (arg.dtype == DataType::kF16) arg.dtype = DataType::kF32;
  for (const std::string& width : {"", "2", "4", "8"}) {
    spec.build_options.push_back("-Dhalf" + width + "=float" + width);
  }
  // vload_halfN/vstore_halfN of floats are vloadN/vstoreN (the kernel names them through these).
  spec.build_options.push_back("-DVLOAD_HALF(n)=vload##n");
  spec.build_options.push_back("-DVSTORE_HALF(n)=vstore##n");
  const KernelProblem problem(spec, "N=4096", opencl::describe_device(device_));
  const std::vector<Bytes> inputs = initial_data(problem);
  const std::vector<Bytes> reference = run_reference(problem, inputs);
  for (int i = 0; i < 4096; ++i)
    ASSERT_EQ(element(reference[2], DataType::kF32, i),
              static_cast<float>(0.75f * element(inputs[0], DataType::kF32, i) + element(inputs[1], DataType::kF32, i)));
  const auto& space = problem.space();
  std::size_t valid = 0;
  for (std::uint64_t i = 0; i < space.size(); i += 7) {  // a seventh of the 128, every knob value among them
    const Config config = space.from_index(i);
    if (!space.is_valid(config)) continue;
    ++valid;
    const std::string options = joined(problem.build_options(config));
    expect_close(problem, run(problem, spec.entry, options, problem.launch(config), inputs), reference, options);
  }
  EXPECT_GE(valid, 12u);
}

}  // namespace
}  // namespace optune::kernels
