// app::plan_tune reads a request once: the target parsed once, the device detected once for every
// task of a range or suite, bad input refused before any device is looked for; app::run measures
// what the plan holds.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include <gtest/gtest.h>

#include "optune/app/bad_input.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tuning.hpp"
#include "optune/backends/registry.hpp"

namespace optune::app {
namespace {

namespace fs = std::filesystem;

TuneRequest gemm_request(const std::string& shape, std::size_t trials = 12) {
  TuneRequest request;
  request.op = "gemm";
  request.shape = shape;
  request.measuring.target = "cpu";
  request.tuning.trials = trials;
  return request;
}

// The detections plan_tune makes for `request` (it must not throw).
std::size_t detections_of(const TuneRequest& request, TunePlan* plan = nullptr) {
  const std::size_t before = backends::device_detections();
  TunePlan made = plan_tune(request);
  if (plan) *plan = std::move(made);
  return backends::device_detections() - before;
}

TEST(TunePlan, ARangeDetectsItsDeviceOnceAndSplitsItsTrialsAmongItsShapes) {
  TunePlan plan;
  EXPECT_EQ(detections_of(gemm_request("M=1..512,N=64,K=64", 12), &plan), 1u);
  EXPECT_EQ(plan.kind, TuneKind::kRange);
  ASSERT_GE(plan.shapes.size(), 2u);
  std::size_t trials = 0;
  for (const auto& shape : plan.shapes) {
    EXPECT_EQ(shape.task->device.fingerprint_id(), plan.device.fingerprint_id());
    EXPECT_EQ(shape.task->target.str(), "cpu");
    EXPECT_GE(shape.tuning.trials, 1u);
    trials += shape.tuning.trials;
  }
  EXPECT_EQ(trials, 12u);
  EXPECT_EQ(plan.range_trials, 12u);
  EXPECT_EQ(plan.shapes.front().task->workload.key(), "gemm.f32.M1.N64.K64");
}

TEST(TunePlan, ASuiteDetectsItsDeviceOnceForAllItsEntries) {
  TuneRequest request;
  request.suite = std::string(OPTUNE_SOURCE_DIR) + "/configs/workloads/resnet18.toml";
  request.tuning.trials = 4;
  request.budget = "30m";
  request.scheduler.policy = tuner::SchedulerPolicy::kRoundRobin;
  TunePlan plan;
  EXPECT_EQ(detections_of(request, &plan), 1u);
  EXPECT_EQ(plan.kind, TuneKind::kSuite);
  ASSERT_TRUE(plan.suite);
  EXPECT_EQ(plan.suite_tasks.size(), plan.suite->entries.size());
  EXPECT_GT(plan.suite_tasks.size(), 5u);
  EXPECT_EQ(plan.suite_budget.seconds, 1800);
  EXPECT_EQ(plan.scheduler.policy, tuner::SchedulerPolicy::kRoundRobin);
}

TEST(TunePlan, AMalformedTargetOrShapeIsRefusedBeforeAnyDeviceIsLookedFor) {
  auto refused_without_detection = [](const TuneRequest& request, const std::string& says) {
    const std::size_t before = backends::device_detections();
    try {
      plan_tune(request);
      ADD_FAILURE() << "planned " << request.shape << " on " << request.measuring.target;
    } catch (const BadInput& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
    EXPECT_EQ(backends::device_detections(), before) << says;
  };
  TuneRequest bad_target = gemm_request("M=1..512,N=64,K=64");
  bad_target.measuring.target = "gpu";
  refused_without_detection(bad_target, "unknown target 'gpu'");
  refused_without_detection(gemm_request("M=1..512,N=64"), "K");
  refused_without_detection(gemm_request("64,64"), "");
  TuneRequest bad_budget = gemm_request("64,64,64");
  bad_budget.budget = "soon";
  refused_without_detection(bad_budget, "--budget");
  TuneRequest bad_ahead = gemm_request("64,64,64");
  bad_ahead.compile_ahead = "sometimes";
  refused_without_detection(bad_ahead, "--compile-ahead must be auto, on or off");
}

// Compile-ahead: auto leaves a CPU measured here building in turn (its compiles would share the
// timed cores); on turns it on for every shape of a range.
TEST(TunePlan, CompileAheadIsOffForACpuUnlessAsked) {
  TunePlan plan;
  detections_of(gemm_request("64,64,64"), &plan);
  ASSERT_EQ(plan.shapes.size(), 1u);
  EXPECT_FALSE(plan.shapes.front().tuning.compile_ahead);
  TuneRequest asked = gemm_request("M=1..512,N=64,K=64");
  asked.compile_ahead = "on";
  detections_of(asked, &plan);
  ASSERT_GE(plan.shapes.size(), 2u);
  for (const auto& shape : plan.shapes) EXPECT_TRUE(shape.tuning.compile_ahead);
}

// A repeat's length: the user's where given, else the backend's (40 ms for host timers, 5 for CUDA
// events, which time the device alone).
TEST(TunePlan, ARepeatsLengthIsTheUsersElseTheBackends) {
  MeasureSettings settings;
  EXPECT_EQ(timing_for(settings, kernels::Target{"cpu", ""}).min_repeat_ms, 40);
  EXPECT_EQ(timing_for(settings, kernels::Target{"opencl", ""}).min_repeat_ms, 40);
  settings.min_repeat_ms = 12.5;
  EXPECT_EQ(timing_for(settings, kernels::Target{"cpu", ""}).min_repeat_ms, 12.5);
  const auto& built = backends::all_backends();
  if (std::none_of(built.begin(), built.end(), [](const auto* backend) { return backend->name() == "cuda"; }))
    GTEST_SKIP() << "a build without the CUDA backend";
  EXPECT_EQ(timing_for(settings, kernels::Target{"cuda", "0"}).min_repeat_ms, 12.5);
  settings.min_repeat_ms.reset();
  EXPECT_EQ(timing_for(settings, kernels::Target{"cuda", "0"}).min_repeat_ms, 5);
}

// The finalists' comparison repeats for the backend's sustained length where the user gave no
// length (CUDA: 40 ms, its search 5; host timers: 40, as every repeat), and for the user's own
// where given: then it applies to every measurement. Jobs and Python set the same setting.
TEST(TunePlan, AComparisonsRepeatIsTheBackendsSustainedLengthUnlessTheUserGivesOne) {
  MeasureSettings settings;
  for (const char* host_timed : {"cpu", "opencl"}) {
    const measure::TimingPolicy timing = timing_for(settings, kernels::Target{host_timed, ""});
    EXPECT_EQ(timing.comparison_min_repeat_ms, 40) << host_timed;
    EXPECT_EQ(measure::comparison_policy(timing).min_repeat_ms, 40) << host_timed << ": no change";
  }
  settings.min_repeat_ms = 12.5;
  EXPECT_EQ(timing_for(settings, kernels::Target{"cpu", ""}).comparison_min_repeat_ms, 0);
  EXPECT_EQ(measure::comparison_policy(timing_for(settings, kernels::Target{"cpu", ""})).min_repeat_ms, 12.5);
  const auto& built = backends::all_backends();
  if (std::none_of(built.begin(), built.end(), [](const auto* backend) { return backend->name() == "cuda"; }))
    GTEST_SKIP() << "a build without the CUDA backend";
  EXPECT_EQ(backends::find_backend("cuda").comparison_min_repeat_ms(), 40);
  const measure::TimingPolicy given = timing_for(settings, kernels::Target{"cuda", "0"});
  EXPECT_EQ(given.comparison_min_repeat_ms, 0);
  EXPECT_EQ(measure::comparison_policy(given).min_repeat_ms, 12.5) << "the user's length, the comparison's too";
  settings.min_repeat_ms = 1;  // shorter than the backend's sustained length, and still the user's
  EXPECT_EQ(measure::comparison_policy(timing_for(settings, kernels::Target{"cuda", "0"})).min_repeat_ms, 1);
  settings.min_repeat_ms.reset();
  const measure::TimingPolicy backends = timing_for(settings, kernels::Target{"cuda", "0"});
  EXPECT_EQ(backends.min_repeat_ms, 5) << "the search's repeats stay short";
  EXPECT_EQ(backends.comparison_min_repeat_ms, 40);
  EXPECT_EQ(measure::comparison_policy(backends).min_repeat_ms, 40);
}

// Several devices at once: GPUs of a backend that measures devices apart, named as a list or all.
TEST(TunePlan, SeveralDevicesAreAGpuBackendsListOfDistinctDevices) {
  auto refused = [](const std::string& target, const std::string& says, const std::string& rpc = "") {
    TuneRequest request = gemm_request("64,64,64");
    request.measuring.target = target;
    request.measuring.rpc = rpc;
    try {
      plan_tune(request);
      ADD_FAILURE() << "planned on " << target;
    } catch (const BadInput& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused("cpu:all", "several devices at once");
  refused("cpu:0,1", "several devices at once");
  const auto& built = backends::all_backends();
  if (std::none_of(built.begin(), built.end(), [](const auto* backend) { return backend->name() == "cuda"; }))
    GTEST_SKIP() << "a build without the CUDA backend";
  refused("cuda:0,0", "cuda:0 is listed twice");
  refused("cuda:0,", "an empty entry");
  refused("cuda:0,x", "bad CUDA device 'x'");
  refused("cuda:0,1", "not over --rpc", "gpus@localhost:9190");  // a server measures on its own device
  if (backends::find_backend("cuda").devices().empty()) refused("cuda:all", "no cuda device here");
}

// Spread over several devices, a run takes the default batch per device, so that one batch's
// compiles do not hold the devices up; a batch size given is kept.
TEST(TunePlan, TheDefaultBatchGrowsWithTheDevicesARunSpreadsOver) {
  TuneRequest request = gemm_request("64,64,64");
  request.tuning.batch_size = 8;
  request.batch_size_given = false;
  EXPECT_EQ(batch_size_of(request, 0), 8u);
  EXPECT_EQ(batch_size_of(request, 1), 8u);
  EXPECT_EQ(batch_size_of(request, 2), 16u);
  EXPECT_EQ(batch_size_of(request, 4), 32u);
  request.batch_size_given = true;
  EXPECT_EQ(batch_size_of(request, 4), 8u);
  EXPECT_EQ(plan_tune(request).tuning.batch_size, 8u);
}

TEST(TunePlan, ATargetWithNoDeviceHereIsOneDetectionAndAnError) {
  const auto& built = backends::all_backends();
  if (std::none_of(built.begin(), built.end(), [](const auto* backend) { return backend->name() == "opencl"; }))
    GTEST_SKIP() << "a build without the OpenCL backend";
  TuneRequest request = gemm_request("M=1..512,N=64,K=64");
  request.measuring.target = "opencl:0:99";
  const std::size_t before = backends::device_detections();
  EXPECT_ANY_THROW(plan_tune(request));
  EXPECT_EQ(backends::device_detections() - before, 1u);
}

TEST(TunePlan, RunMeasuresEachShapeOfThePlanIntoTheDatabase) {
  const fs::path folder = fs::temp_directory_path() / ("optune_tune_plan_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  TuneRequest request = gemm_request("M=8..16,N=32,K=32", 4);
  request.database = (folder / "plan.db").string();
  request.measuring.timing = {.warmup = 1, .number = 1, .repeat = 2, .min_repeat_ms = 1, .timeout_seconds = 10};
  request.tuning.batch_size = 2;
  request.tuning.remeasure_top = 0;
  const TunePlan plan = plan_tune(request);
  const InstallPaths paths =
      install_paths_beside(std::string(OPTUNE_BINARY_DIR) + "/bin", (folder / "cache").string(), (folder / "locks").string());
  tuner::Progress quiet(nullptr, false);
  const TuneOutcome outcome = run(plan, paths, quiet);
  ASSERT_EQ(outcome.shapes.size(), plan.shapes.size());
  EXPECT_FALSE(outcome.stopped());
  const nlohmann::json json = outcome_json(outcome);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), plan.shapes.size());
  for (std::size_t i = 0; i < plan.shapes.size(); ++i) {
    EXPECT_EQ(json[i]["workload"], plan.shapes[i].task->workload.key());
    EXPECT_GE(json[i]["trials"].get<std::size_t>(), 1u);
    EXPECT_FALSE(json[i]["best"].is_null());
  }
  EXPECT_EQ(outcome.trials(), std::accumulate(outcome.shapes.begin(), outcome.shapes.end(), std::size_t{0},
                                              [](std::size_t sum, const auto& shape) { return sum + shape.summary.trials; }));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace optune::app
