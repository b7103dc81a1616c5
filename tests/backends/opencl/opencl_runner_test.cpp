// OpenCL candidates on a real OpenCL device (PoCL on this machine's CPU): every template's default
// config and a random sample of configs compute the right answer on odd shapes; a program that
// does not compile and a kernel that hangs become records; programs come from the on-disk cache
// the second time; device selection by index and name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/backends/opencl/artifact.hpp"
#include "optune/backends/opencl/builder.hpp"
#include "optune/backends/opencl/devices.hpp"

namespace optune::measure {
namespace {

namespace fs = std::filesystem;

class OpenCLRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The tests of optune's program cache need PoCL's own off (program_cache.hpp); the worker
    // inherits it.
    ::setenv("POCL_KERNEL_CACHE", "0", 1);
    if (list_opencl_devices().empty()) GTEST_SKIP() << "no OpenCL device (scripts/setup.sh installs PoCL)";
    dir_ = fs::temp_directory_path() / ("optune-opencl-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::shared_ptr<MeasureTask> task(kernels::Op op, const std::string& shape) {
    auto task = std::make_shared<MeasureTask>();
    task->workload = kernels::parse_workload(op, shape);
    task->target = backends::parse_target("opencl");
    task->device = find_opencl_device(task->target);
    task->kernel_template = &backends::find_template(std::string(kernels::op_name(op)) + ".opencl");
    task->space = task->kernel_template->space(task->workload, task->device);
    return task;
  }

  // The default config, then `samples` distinct random valid ones.
  std::vector<MeasureInput> inputs(const std::shared_ptr<MeasureTask>& t, std::size_t samples, unsigned seed) {
    std::vector<MeasureInput> list = {
        {t, t->kernel_template->default_config(t->workload, t->device, t->space)}};
    std::mt19937_64 rng(seed);
    for (auto& config : t->space.sample_valid_distinct(rng, samples)) list.push_back({t, config});
    return list;
  }

  std::vector<MeasureResult> measure(const std::vector<MeasureInput>& list, const std::string& kernel_dir,
                                     double timeout_seconds = 120) {
    OpenCLBuilder builder({kernel_dir, (dir_ / "build").string()});
    TimingPolicy timing;
    timing.repeat = 2;
    timing.number = 1;
    timing.timeout_seconds = timeout_seconds;
    LocalRunner runner({OPTUNE_WORKER_PATH, timing, true, (dir_ / "cache").string()});
    return runner.run(list, builder.build(list));
  }

  // `count` distinct valid configs whose JSON form satisfies `wanted`.
  template <typename Predicate>
  std::vector<MeasureInput> sample_where(const std::shared_ptr<MeasureTask>& t, std::size_t count, Predicate wanted) {
    std::mt19937_64 rng(7);
    std::vector<MeasureInput> list;
    for (auto& config : t->space.sample_valid_distinct(rng, 500))
      if (list.size() < count && wanted(t->space.to_json(config))) list.push_back({t, config});
    EXPECT_EQ(list.size(), count) << "too few such configs in " << t->workload.key();
    return list;
  }

  void expect_all_correct(kernels::Op op, const std::string& shape, std::size_t samples, unsigned seed) {
    auto t = task(op, shape);
    expect_correct(t, inputs(t, samples, seed));
  }

  void expect_correct(const std::shared_ptr<MeasureTask>& t, const std::vector<MeasureInput>& list) {
    const auto results = measure(list, kSourceDir);
    ASSERT_EQ(results.size(), list.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i].error, ErrorKind::kOk)
          << t->workload.key() << " config " << t->space.to_json(list[i].config).dump() << ": " << results[i].message;
      EXPECT_EQ(results[i].costs.size(), 2u);
      EXPECT_GT(results[i].gflops, 0);
    }
  }

  static constexpr const char* kSourceDir = OPTUNE_SOURCE_DIR "/backends/opencl/kernels";
  fs::path dir_;
};

TEST_F(OpenCLRunnerTest, GemmOnAnOddShapeIsCorrectForDefaultAndSampledConfigs) {
  expect_all_correct(kernels::Op::kGemm, "127,509,1021", 3, 1);
}

TEST_F(OpenCLRunnerTest, ConvWithStrideTwoAndPaddingIsCorrect) {
  expect_all_correct(kernels::Op::kConv2d, "N=1,C=8,H=23,W=19,K=12,R=3,S=3,stride=2,pad=1", 2, 2);
}

TEST_F(OpenCLRunnerTest, PointwiseConvIsCorrect) {
  expect_all_correct(kernels::Op::kConv2d, "N=2,C=16,H=15,W=13,K=24,R=1,S=1,stride=1,pad=0", 2, 3);
}

TEST_F(OpenCLRunnerTest, SevenBySevenConvWithDilationAndGroupsIsCorrect) {
  expect_all_correct(kernels::Op::kConv2d, "N=1,C=3,H=29,W=31,K=8,R=7,S=7,stride=2,pad=3", 1, 4);
  expect_all_correct(kernels::Op::kConv2d, "N=1,C=8,H=17,W=18,K=12,R=3,S=3,stride=1,pad=2,dilation=2,groups=2", 1, 5);
}

// Slices of a work-group that split the input channels add their partial sums in local memory:
// configs with tc > 1, with and without the staged input, on channel counts that leave a ragged
// last step.
TEST_F(OpenCLRunnerTest, ConvWithChannelSplitIsCorrect) {
  for (const char* shape : {"N=1,C=20,H=9,W=11,K=10,R=3,S=3,stride=1,pad=1",
                            "N=2,C=12,H=13,W=10,K=8,R=3,S=3,stride=2,pad=1,groups=2"}) {
    auto t = task(kernels::Op::kConv2d, shape);
    auto list = sample_where(t, 2, [](const nlohmann::json& c) { return c["tc"] != "1" && c["local_in"] == "1"; });
    auto direct = sample_where(t, 1, [](const nlohmann::json& c) { return c["tc"] != "1" && c["local_in"] == "0"; });
    list.insert(list.end(), direct.begin(), direct.end());
    expect_correct(t, list);
  }
}

// Work-groups numbered in bands of row tiles: 200 rows make 13 or 7 row tiles, so the last band
// is short.
TEST_F(OpenCLRunnerTest, GemmWithBandedGroupOrderIsCorrect) {
  auto t = task(kernels::Op::kGemm, "200,509,301");
  expect_correct(t, sample_where(t, 3, [](const nlohmann::json& c) { return c["gsw"] != "1"; }));
}

// Double-buffered local memory takes two K blocks per loop iteration: K = 289 makes an odd
// number of blocks of 8 or 16 (37, 19), the last one ragged.
TEST_F(OpenCLRunnerTest, GemmWithDoubleBufferingIsCorrect) {
  auto t = task(kernels::Op::kGemm, "129,67,289");
  expect_correct(t, sample_where(t, 3, [](const nlohmann::json& c) {
    return c["db"] == "1" && c["sa"] == "1" && (c["kwg"] == "16" || c["kwg"] == "8");
  }));
}

// Split-K: work-groups share a tile's K blocks, and the last of a tile's groups sums their
// partial tiles through the candidate's scratch buffer and stores the tile (over the worker's NaN
// poison, in every timed call too). Odd K leaves a ragged last block and splits of unequal length;
// a split that skipped or repeated K blocks, or a tile nobody stored, fails the check. (sa = 0 is left out: on PoCL 3.1 those gemm.cl configs crash the
// worker with or without a split, a fault of main's kernel or of PoCL, not of the split.)
TEST_F(OpenCLRunnerTest, GemmWithSplitKIsCorrect) {
  for (const char* shape : {"37,45,1021", "61,23,777"}) {
    auto t = task(kernels::Op::kGemm, shape);
    expect_correct(t, sample_where(t, 3, [](const nlohmann::json& c) { return c["splitk"] != "1" && c["sa"] == "1"; }));
  }
}

// f16 and bf16 storage (float32 arithmetic), and i8 (s8 widened to int, int32 arithmetic and
// output, checked exactly): each conversion path of gemm.cl passes the check against the
// reference of the very low-precision inputs: the vector loads of whole tiles (no edges), the
// scalar ones at ragged edges, B read straight from global memory as VWN-wide vectors (sb = 0),
// vector stores of C, and split-K's sum of the partial tiles.
TEST_F(OpenCLRunnerTest, GemmInLowPrecisionIsCorrectOnEveryConversionPath) {
  for (const char* dtype : {"f16", "bf16", "i8"}) {
    SCOPED_TRACE(dtype);
    auto whole = task(kernels::Op::kGemm, std::string("128,256,64,dtype=") + dtype);
    auto list = inputs(whole, 1, 11);
    for (auto& input : sample_where(whole, 2, [](const nlohmann::json& c) {
           return c["sb"] == "0" && c["vwn"] != "1" && c["sa"] == "1";
         }))
      list.push_back(input);
    for (auto& input : sample_where(whole, 1, [](const nlohmann::json& c) {
           return c["sb"] == "1" && c["vwn"] == "4" && c["sa"] == "1";
         }))
      list.push_back(input);
    expect_correct(whole, list);
    auto ragged = task(kernels::Op::kGemm, std::string("61,23,777,dtype=") + dtype);
    auto edges = inputs(ragged, 1, 12);
    for (auto& input : sample_where(ragged, 1, [](const nlohmann::json& c) { return c["splitk"] != "1" && c["sa"] == "1"; }))
      edges.push_back(input);
    expect_correct(ragged, edges);
  }
}

// conv2d.opencl in f16, bf16 and i8 (storage.cl, as gemm's): the input read from global memory
// and staged in local memory, the outputs stored as vectors and one by one at a ragged edge, and
// the slices' sums of a channel split stored from local memory.
TEST_F(OpenCLRunnerTest, ConvInLowPrecisionIsCorrect) {
  for (const char* dtype : {"f16", "bf16", "i8"}) {
    SCOPED_TRACE(dtype);
    auto t = task(kernels::Op::kConv2d, std::string("N=1,C=20,H=9,W=16,K=10,R=3,S=3,stride=1,pad=1,dtype=") + dtype);
    auto list = inputs(t, 0, 1);
    for (auto& input : sample_where(t, 1, [](const nlohmann::json& c) { return c["local_in"] == "0" && c["tc"] == "1"; }))
      list.push_back(input);
    for (auto& input : sample_where(t, 1, [](const nlohmann::json& c) { return c["vw"] != "1" && c["tc"] == "1"; }))
      list.push_back(input);
    for (auto& input : sample_where(t, 1, [](const nlohmann::json& c) { return c["tc"] != "1"; }))
      list.push_back(input);
    expect_correct(t, list);
  }
}

TEST_F(OpenCLRunnerTest, DepthwiseConvIsCorrect) {
  expect_all_correct(kernels::Op::kDepthwiseConv2d, "N=1,C=12,H=17,W=19,R=3,S=3,stride=2,pad=1", 2, 6);
  expect_all_correct(kernels::Op::kDepthwiseConv2d, "N=1,C=5,H=16,W=16,R=5,S=5,stride=1,pad=2", 1, 7);
  // f16 and bf16 storage (storage.cl), float32 arithmetic.
  expect_all_correct(kernels::Op::kDepthwiseConv2d, "N=1,C=12,H=17,W=16,R=3,S=3,stride=1,pad=1,dtype=f16", 2, 8);
  expect_all_correct(kernels::Op::kDepthwiseConv2d, "N=1,C=12,H=17,W=16,R=3,S=3,stride=1,pad=1,dtype=bf16", 2, 9);
  // i8: int32 arithmetic, checked exactly.
  expect_all_correct(kernels::Op::kDepthwiseConv2d, "N=1,C=12,H=17,W=19,R=3,S=3,stride=2,pad=1,dtype=i8", 2, 10);
}

// gemm_dot4.cl (i8 on packed quads of K) is taken where a device has a packed dot product, which
// PoCL lacks: described here as having cl_khr_integer_dot_product, PoCL compiles the kernel's
// widened path, which shares the packing of A's and B's words with the dp4a and extension paths.
// Every config is checked exactly: whole tiles, ragged edges in M, N and K, bands of row tiles.
TEST_F(OpenCLRunnerTest, Int8OnPackedQuadsIsExact) {
  for (const char* shape : {"128,128,128,dtype=i8", "127,509,1020,dtype=i8", "200,72,36,dtype=i8"}) {
    auto t = task(kernels::Op::kGemm, shape);
    EXPECT_FALSE(t->space.describe().dump().find("dot4") != std::string::npos) << "PoCL has no packed dot product";
    t->device.isa.push_back(kernels::kIntegerDotProductIsa);
    t->space = t->kernel_template->space(t->workload, t->device);
    ASSERT_EQ(t->space.to_json(t->kernel_template->default_config(t->workload, t->device, t->space))["math"], "dot4");
    expect_correct(t, inputs(t, 3, 21));
  }
}

// An int8 record says which signedness ran: s8 activations on OpenCL, as on Arm.
TEST_F(OpenCLRunnerTest, Int8SpacesNameTheirSignedActivations) {
  for (auto [op, shape] : {std::pair{kernels::Op::kGemm, "64,48,40,dtype=i8"},
                           std::pair{kernels::Op::kConv2d, "N=1,C=8,H=9,W=9,K=8,R=3,S=3,stride=1,pad=1,dtype=i8"}}) {
    auto t = task(op, shape);
    const auto config = t->space.to_json(t->kernel_template->default_config(t->workload, t->device, t->space));
    EXPECT_EQ(config.value("activations", ""), "s8") << config;
  }
  auto f32 = task(kernels::Op::kGemm, "64,48,40");
  EXPECT_FALSE(f32->space.to_json(f32->kernel_template->default_config(f32->workload, f32->device, f32->space))
                   .contains("activations"));
}

TEST_F(OpenCLRunnerTest, TransfersAreReportedApartAndTheSecondBuildComesFromTheCache) {
  auto t = task(kernels::Op::kGemm, "64,48,40");
  const auto list = inputs(t, 0, 0);
  const auto first = measure(list, kSourceDir);
  ASSERT_EQ(first[0].error, ErrorKind::kOk) << first[0].message;
  EXPECT_NE(first[0].message.find("host->device"), std::string::npos) << first[0].message;
  EXPECT_NE(first[0].message.find("device->host"), std::string::npos) << first[0].message;
  EXPECT_NE(first[0].message.find("program compiled"), std::string::npos) << first[0].message;
  EXPECT_GT(first[0].build_seconds, 0);
  const auto second = measure(list, kSourceDir);
  ASSERT_EQ(second[0].error, ErrorKind::kOk) << second[0].message;
  EXPECT_NE(second[0].message.find("program from cache"), std::string::npos) << second[0].message;
  bool has_binary = false;
  for (const auto& entry : fs::directory_iterator(dir_ / "cache")) has_binary |= entry.path().extension() == ".bin";
  EXPECT_TRUE(has_binary);
}

TEST_F(OpenCLRunnerTest, ProgramThatDoesNotCompileBecomesABuildErrorWithTheLog) {
  const fs::path broken = dir_ / "broken";
  fs::create_directories(broken);
  std::ofstream(broken / "gemm.cl") << "__kernel void optune_gemm(__global float* A) { this is not OpenCL C; }\n";
  auto t = task(kernels::Op::kGemm, "16,16,16");
  auto list = inputs(t, 0, 0);
  list.push_back(list[0]);
  auto results = measure(list, broken.string());
  EXPECT_EQ(results[0].error, ErrorKind::kBuildError);
  EXPECT_NE(results[0].message.find("OpenCL build failed"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].error, ErrorKind::kBuildError);
  // The artifact is self-contained: the source travels inside it.
  OpenCLBuilder builder({kSourceDir, (dir_ / "artifacts").string()});
  const auto build = builder.build({list[0]});
  ASSERT_TRUE(build[0].ok()) << build[0].message;
  const auto artifact = read_opencl_artifact(build[0].artifact);
  EXPECT_NE(artifact.source.find("optune_gemm"), std::string::npos);
  EXPECT_EQ(artifact.workload_key, "gemm.f32.M16.N16.K16");
}

TEST_F(OpenCLRunnerTest, HangingKernelTimesOutAndMeasuringGoesOn) {
  const fs::path hanging = dir_ / "hanging";
  fs::create_directories(hanging);
  // Spins until an input holds a value it never does (inputs are in [-1, 1]).
  std::ofstream(hanging / "gemm.cl")
      << "__kernel void optune_gemm(__global const float* A, __global const float* B, __global float* C) {\n"
         "  int i = 0; while (A[i % 16] < 2.0f) ++i; C[0] = (float)i; }\n";
  auto t = task(kernels::Op::kGemm, "16,16,16");
  auto results = measure(inputs(t, 0, 0), hanging.string(), 10);
  EXPECT_EQ(results[0].error, ErrorKind::kTimeout) << results[0].message;
  auto after = measure(inputs(t, 0, 0), kSourceDir);
  EXPECT_EQ(after[0].error, ErrorKind::kOk) << after[0].message;
}

TEST_F(OpenCLRunnerTest, TargetsSelectDevicesByIndexOrName) {
  const auto devices = list_opencl_devices();
  EXPECT_EQ(find_opencl_device(backends::parse_target("opencl:0:0")).name, devices[0].name);
  const std::string platform_word = devices[0].platform.substr(0, 4);
  EXPECT_EQ(find_opencl_device(backends::parse_target("opencl:" + platform_word + ":0")).name, devices[0].name);
  try {
    find_opencl_device(backends::parse_target("opencl:0:no-such-device"));
    FAIL() << "expected no match";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("no device matches"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(devices[0].name), std::string::npos) << error.what();
  }
}

// What an RPC server reports: the worker describes the device of a target (an OpenCL one by
// index or name), lists every device it can measure on, and names those there are when a target
// matches none.
TEST_F(OpenCLRunnerTest, WorkerDescribesTheDeviceOfAnOpenCLTarget) {
  const auto devices = list_opencl_devices();
  LocalRunner runner({OPTUNE_WORKER_PATH, {}, true, ""});
  EXPECT_EQ(runner.describe_device("opencl:0:0").fingerprint_id(), devices[0].fingerprint_id());
  const auto by_name = runner.describe_device("opencl:" + devices[0].platform.substr(0, 4) + ":0");
  EXPECT_EQ(by_name.kind, "opencl");
  EXPECT_EQ(by_name.name, devices[0].name);
  EXPECT_EQ(by_name.driver_version, devices[0].driver_version);
  EXPECT_EQ(runner.describe_device("cpu").fingerprint_id(), detect_local_cpu().fingerprint_id());

  const auto all = runner.describe_devices();
  ASSERT_EQ(all.size(), 1 + devices.size());
  EXPECT_EQ(all[0].fingerprint_id(), detect_local_cpu().fingerprint_id());
  for (std::size_t i = 0; i < devices.size(); ++i) EXPECT_EQ(all[1 + i].fingerprint_id(), devices[i].fingerprint_id());

  for (const std::string target : {"opencl:0:no-such-device", "opencl:7:0", "vulkan"}) {
    try {
      runner.describe_device(target);
      ADD_FAILURE() << target << ": expected NoSuchDeviceError";
    } catch (const NoSuchDeviceError& error) {
      EXPECT_NE(std::string(error.what()).find(target), std::string::npos) << error.what();
    }
  }
  try {
    runner.describe_device("opencl:0:no-such-device");
  } catch (const NoSuchDeviceError& error) {
    EXPECT_NE(std::string(error.what()).find(devices[0].name), std::string::npos) << "names the devices: " << error.what();
  }
  // The worker survives bad targets: it still describes and measures.
  EXPECT_EQ(runner.describe_device("opencl").name, devices[0].name);
}

}  // namespace
}  // namespace optune::measure
