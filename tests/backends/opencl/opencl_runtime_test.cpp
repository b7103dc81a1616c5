// optune::opencl on a real OpenCL device (PoCL on this machine's CPU): the on-disk program cache
// (a second build loads the stored binary instead of compiling), and the Runtime an application
// calls: a tuned row runs with its own defines, other shapes and tables of other devices run the
// template's default config, every op computes the reference's answer, and bad buffers are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/opencl/cl_api.hpp"
#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/kernels/opencl/runtime.hpp"
#include "optune/kernels/reference.hpp"

namespace optune::opencl {
namespace {

namespace fs = std::filesystem;
using kernels::Workload;

// The first device of the first platform, as `--target opencl` picks it.
cl_device_id first_device() {
  cl_platform_id platform = nullptr;
  cl_uint count = 0;
  if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0) return nullptr;
  cl_device_id device = nullptr;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) != CL_SUCCESS || count == 0) return nullptr;
  return device;
}

class OpenCLRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // optune's program cache is what these tests check; PoCL gets it only with PoCL's own off.
    ::setenv("POCL_KERNEL_CACHE", "0", 1);
    device_ = first_device();
    if (!device_) GTEST_SKIP() << "no OpenCL device (scripts/setup.sh installs PoCL)";
    cl_int error = CL_SUCCESS;
    context_ = Context(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext");
    queue_ = Queue(clCreateCommandQueue(context_.get(), device_, 0, &error));
    check(error, "clCreateCommandQueue");
    dir_ = fs::temp_directory_path() / ("optune-opencl-runtime-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::size_t cached_binaries() const {
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(dir_ / "cache"))
      count += entry.path().extension() == ".bin";
    return count;
  }

  Buffer buffer(const std::vector<float>& data) {
    cl_int error = CL_SUCCESS;
    Buffer made(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(float),
                               const_cast<float*>(data.data()), &error));
    check(error, "clCreateBuffer");
    return made;
  }

  // Runs the workload through the runtime `calls` times into one NaN-filled output on random
  // inputs; expects the reference's answer.
  // `calls` calls on one output, NaN-poisoned before each: every call must write all of it.
  Launch run_and_check(Runtime& runtime, const Workload& workload, const TunedTable& table, int calls = 1) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<std::vector<float>> inputs;
    std::vector<Buffer> input_buffers;
    std::vector<cl_mem> input_handles;
    std::vector<const float*> input_pointers;
    for (std::size_t size : kernels::input_sizes(workload)) {
      inputs.emplace_back(size);
      for (float& x : inputs.back()) x = value(rng);
      input_buffers.push_back(buffer(inputs.back()));
      input_handles.push_back(input_buffers.back().get());
      input_pointers.push_back(inputs.back().data());
    }
    std::vector<float> got(kernels::output_size(workload), std::numeric_limits<float>::quiet_NaN());
    Buffer output = buffer(got);
    Launch launch;
    for (int call = 0; call < calls; ++call) {
      const float poison = std::numeric_limits<float>::quiet_NaN();
      check(clEnqueueFillBuffer(queue_.get(), output.get(), &poison, sizeof poison, 0, got.size() * sizeof(float), 0,
                                nullptr, nullptr),
            "clEnqueueFillBuffer");
      launch = runtime.run(workload, table, input_handles, output.get());
    }
    check(clEnqueueReadBuffer(queue_.get(), output.get(), CL_TRUE, 0, got.size() * sizeof(float), got.data(), 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer");
    std::vector<float> want(got.size());
    kernels::reference(workload, input_pointers, want.data());
    EXPECT_LT(kernels::relative_l2_error(got.data(), want.data(), got.size()), 1e-5) << workload.key();
    return launch;
  }

  cl_device_id device_ = nullptr;
  Context context_;
  Queue queue_;
  fs::path dir_;
};

constexpr const char* kTinySource = "__kernel void fill(__global float* x) { x[get_global_id(0)] = VALUE; }";

TEST_F(OpenCLRuntimeTest, SecondBuildLoadsTheCachedBinaryInsteadOfCompiling) {
  const kernels::DeviceInfo info = describe_device(device_);
  const std::string cache = (dir_ / "cache").string();
  ProgramBuild first = build_program(context_.get(), device_, info, kTinySource, "-DVALUE=1.0f", cache);
  ASSERT_TRUE(first.program) << first.log;
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(cached_binaries(), 1u);

  ProgramBuild second = build_program(context_.get(), device_, info, kTinySource, "-DVALUE=1.0f", cache);
  ASSERT_TRUE(second.program) << second.log;
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(cached_binaries(), 1u);

  // Other options, or another driver version, are other programs.
  EXPECT_FALSE(build_program(context_.get(), device_, info, kTinySource, "-DVALUE=2.0f", cache).from_cache);
  kernels::DeviceInfo updated = info;
  updated.driver_version += "-next";
  EXPECT_FALSE(build_program(context_.get(), device_, updated, kTinySource, "-DVALUE=1.0f", cache).from_cache);
  EXPECT_EQ(cached_binaries(), 3u);
}

// PoCL caches its own builds unless POCL_KERNEL_CACHE is 0, and fetching its binary would compile
// the program again: optune's cache is then neither written nor read.
TEST_F(OpenCLRuntimeTest, PoclWithItsOwnCacheOnGetsNoSecondCache) {
  const kernels::DeviceInfo info = describe_device(device_);
  if (info.platform != "Portable Computing Language") GTEST_SKIP() << "not PoCL: " << info.platform;
  const std::string cache = (dir_ / "cache").string();
  for (const char* setting : {static_cast<const char*>(nullptr), "1"}) {
    if (setting) ::setenv("POCL_KERNEL_CACHE", setting, 1); else ::unsetenv("POCL_KERNEL_CACHE");
    for (int build = 0; build < 2; ++build) {
      ProgramBuild built = build_program(context_.get(), device_, info, kTinySource, "-DVALUE=1.0f", cache);
      ASSERT_TRUE(built.program) << built.log;
      EXPECT_FALSE(built.from_cache);
    }
    EXPECT_FALSE(fs::exists(cache) && cached_binaries() > 0);
  }
}

TEST_F(OpenCLRuntimeTest, BrokenSourceGivesTheCompilerLog) {
  ProgramBuild build = build_program(context_.get(), device_, describe_device(device_), kTinySource, "",
                                     (dir_ / "cache").string());
  EXPECT_FALSE(build.program);
  EXPECT_NE(build.log.find("VALUE"), std::string::npos) << build.log;
}

TEST_F(OpenCLRuntimeTest, TunedRowRunsWithItsDefinesOnlyOnItsDevice) {
  Runtime runtime(queue_.get(), {(dir_ / "cache").string()});
  const Workload tuned_shape = kernels::parse_workload(kernels::Op::kGemm, "33,20,17");
  const auto& gemm_template = backends::find_template("gemm.opencl");
  // A valid config other than the default, as a tuned row.
  const auto space = gemm_template.space(tuned_shape, runtime.device());
  const auto fallback = gemm_template.default_config(tuned_shape, runtime.device(), space);
  std::mt19937_64 rng(5);
  auto config = space.sample_valid(rng);
  while (config.options == fallback.options) config = space.sample_valid(rng);
  const kernels::OpenCLKernel tuned =
      kernels::as_opencl(gemm_template).opencl_kernel(tuned_shape, runtime.device(), search_space::ConfigView(space, config));
  const std::string key = tuned_shape.key();
  const TunedKernel rows[] = {{key, tuned.source_file, tuned.kernel_name, tuned.build_options, tuned.dimensions,
                               tuned.global_size, tuned.local_size, tuned.scratch_bytes}};

  Launch launch = run_and_check(runtime, tuned_shape, {runtime.device().name, rows});
  EXPECT_TRUE(launch.tuned);
  EXPECT_EQ(launch.kernel.build_options, tuned.build_options);
  EXPECT_EQ(launch.kernel.global_size, tuned.global_size);

  // Another shape: the template's default for it.
  const Workload other = kernels::parse_workload(kernels::Op::kGemm, "40,24,9");
  const auto other_space = gemm_template.space(other, runtime.device());
  const auto other_default = kernels::as_opencl(gemm_template).opencl_kernel(
      other, runtime.device(),
      search_space::ConfigView(other_space, gemm_template.default_config(other, runtime.device(), other_space)));
  launch = run_and_check(runtime, other, {runtime.device().name, rows});
  EXPECT_FALSE(launch.tuned);
  EXPECT_EQ(launch.kernel.build_options, other_default.build_options);

  // The same table tuned on another device: its row is not used here.
  launch = run_and_check(runtime, tuned_shape, {"Some Other GPU", rows});
  EXPECT_FALSE(launch.tuned);
  EXPECT_NE(launch.kernel.build_options, tuned.build_options);
}

// A split-K row's work-groups sum their partial tiles through a scratch buffer the runtime keeps
// for the kernel: each of three calls, on an output poisoned with NaN before it, gives the
// reference's answer, so every call found the scratch's counters back at zero.
TEST_F(OpenCLRuntimeTest, SplitKRowSumsItsSplitsInEveryCallThroughOneScratchBuffer) {
  Runtime runtime(queue_.get());
  const Workload workload = kernels::parse_workload(kernels::Op::kGemm, "37,45,1021");
  const auto& gemm_template = kernels::as_opencl(backends::find_template("gemm.opencl"));
  const auto space = gemm_template.space(workload, runtime.device());
  std::mt19937_64 rng(9);
  std::optional<kernels::OpenCLKernel> split;
  for (int tries = 0; tries < 1000 && !split; ++tries) {
    const auto config = space.sample_valid(rng);
    if (search_space::ConfigView(space, config).choice("splitk") != "1")
      split = gemm_template.opencl_kernel(workload, runtime.device(), search_space::ConfigView(space, config));
  }
  ASSERT_TRUE(split.has_value()) << "no split-K config in the space of " << workload.key();
  ASSERT_GT(split->scratch_bytes, 0u);
  const std::string key = workload.key();
  const TunedKernel rows[] = {{key, split->source_file, split->kernel_name, split->build_options,
                               split->dimensions, split->global_size, split->local_size, split->scratch_bytes}};
  const Launch launch = run_and_check(runtime, workload, {runtime.device().name, rows}, 3);
  EXPECT_TRUE(launch.tuned);
  EXPECT_EQ(launch.kernel.scratch_bytes, split->scratch_bytes);
  EXPECT_EQ(launch.program, ProgramSource::kMemory);  // the same program, and so the same scratch
}

TEST_F(OpenCLRuntimeTest, EveryOpComputesTheReferenceWithItsDefault) {
  Runtime runtime(queue_.get());
  const TunedTable none{runtime.device().name, {}};
  run_and_check(runtime, kernels::parse_workload(kernels::Op::kConv2d, "N=1,C=6,H=9,W=11,K=5,R=3,S=3,stride=1,pad=1"),
                none);
  run_and_check(runtime,
                kernels::parse_workload(kernels::Op::kDepthwiseConv2d, "N=1,C=7,H=10,W=9,R=3,S=3,stride=2,pad=1"),
                none);
}

TEST_F(OpenCLRuntimeTest, ProgramsAreKeptAndComeFromTheDiskCacheInANewRuntime) {
  const Workload workload = kernels::parse_workload(kernels::Op::kGemm, "16,16,16");
  const std::string cache = (dir_ / "cache").string();
  {
    Runtime runtime(queue_.get(), {cache});
    EXPECT_EQ(run_and_check(runtime, workload, {}).program, ProgramSource::kBuilt);
    EXPECT_EQ(run_and_check(runtime, workload, {}).program, ProgramSource::kMemory);
  }
  EXPECT_EQ(cached_binaries(), 1u);
  Runtime again(queue_.get(), {cache});
  EXPECT_EQ(run_and_check(again, workload, {}).program, ProgramSource::kDiskCache);
}

TEST_F(OpenCLRuntimeTest, RefusesTooSmallBuffersAndBadShapes) {
  Runtime runtime(queue_.get());
  Buffer small = buffer(std::vector<float>(10, 1.0f));
  Buffer large = buffer(std::vector<float>(64, 1.0f));
  try {
    gemm(runtime, {}, 8, 8, 8, large.get(), small.get(), large.get());
    FAIL() << "a 10-float B was accepted for an 8x8 GEMM";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("input 1 holds 40 bytes, it needs 256"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(gemm(runtime, {}, 0, 8, 8, large.get(), large.get(), large.get()), std::invalid_argument);
}

}  // namespace
}  // namespace optune::opencl
