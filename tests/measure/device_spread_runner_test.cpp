// DeviceSpreadRunner over real workers: a batch spread over two of them (each on this CPU, as
// two GPUs of one host would each have theirs) gives every candidate its own result in order, a
// worker stuck on a hanging candidate leaves the rest of the batch to the other, and a run of
// several rounds (a comparison) measures the whole list on each device, a round per device, with
// the comparison's repeats.
#include "optune/measure/device_spread_runner.hpp"

#include <gtest/gtest.h>

#include "behaviour_template.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/cpu/local_builder.hpp"
#include "optune/backends/registry.hpp"

namespace optune::measure {
namespace {

class DeviceSpreadRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ = testing::behaviour_task(behaviour_);
  }

  std::vector<MeasureInput> inputs(const std::vector<std::string>& behaviours) const {
    std::vector<MeasureInput> made;
    for (const auto& b : behaviours) made.push_back({task_, task_->space.from_json({{"behaviour", b}})});
    return made;
  }

  // Repeats of 1 ms; a comparison's of `comparison_min_repeat_ms` (0: those too).
  static DeviceSpreadRunner two_devices(double comparison_min_repeat_ms = 0) {
    LocalRunnerOptions options;
    options.worker_path = OPTUNE_WORKER_PATH;
    options.timing.timeout_seconds = 2;
    options.timing.repeat = 2;
    options.timing.min_repeat_ms = 1;
    options.timing.comparison_min_repeat_ms = comparison_min_repeat_ms;
    options.timing.bail_out = 0;
    options.remove_artifacts = false;
    options.device_target = "cpu";
    std::vector<std::unique_ptr<LocalRunner>> devices;
    devices.push_back(std::make_unique<LocalRunner>(options));
    devices.push_back(std::make_unique<LocalRunner>(options));
    return DeviceSpreadRunner(std::move(devices), true);
  }

  std::vector<BuildResult> build(const std::vector<MeasureInput>& batch) { return builder_.build(batch); }

  static LocalBuilderOptions quick_build() {
    LocalBuilderOptions options;
    options.flags = {"-std=c++20", "-O1", "-fPIC", "-shared"};
    return options;
  }

  LocalBuilder builder_{quick_build()};  // its folder holds the artifacts while they are measured
  testing::BehaviourTemplate behaviour_;
  std::shared_ptr<const MeasureTask> task_;
};

TEST_F(DeviceSpreadRunnerTest, EveryCandidateGetsItsOwnResultInOrder) {
  const auto batch = inputs({"correct", "wrong", "segfault", "correct", "abort", "correct", "wrong", "correct"});
  const auto builds = build(batch);
  auto runner = two_devices();
  const auto results = runner.run(batch, builds);
  const std::vector<ErrorKind> expected = {ErrorKind::kOk,    ErrorKind::kWrongAnswer, ErrorKind::kCrash,
                                           ErrorKind::kOk,    ErrorKind::kCrash,       ErrorKind::kOk,
                                           ErrorKind::kWrongAnswer, ErrorKind::kOk};
  ASSERT_EQ(results.size(), expected.size());
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].error, expected[i]) << i << ": " << results[i].message;
  const auto& shares = runner.measured_per_device();
  EXPECT_EQ(shares[0] + shares[1], batch.size());
}

// The worker that takes the hanging candidate waits out its timeout (2 s) while the other
// measures the six quick ones.
TEST_F(DeviceSpreadRunnerTest, ADeviceStuckOnACandidateLeavesTheRestToTheOthers) {
  const auto batch = inputs({"hang", "correct", "correct", "correct", "correct", "correct", "correct"});
  auto runner = two_devices();
  const auto results = runner.run(batch, build(batch));
  EXPECT_EQ(results[0].error, ErrorKind::kTimeout);
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i].error, ErrorKind::kOk) << results[i].message;
  auto shares = runner.measured_per_device();
  std::sort(shares.begin(), shares.end());
  EXPECT_EQ(shares, (std::vector<std::size_t>{1, 6}));
}

// Three rounds on two devices: two at once, then the third on the first device alone.
TEST_F(DeviceSpreadRunnerTest, AComparisonMeasuresTheWholeListOnEachDeviceAsARoundOfItsOwn) {
  const auto batch = inputs({"correct", "correct", "wrong"});
  auto runner = two_devices();
  const auto results = runner.run(batch, build(batch), 3);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(results[i].error, ErrorKind::kOk) << results[i].message;
    EXPECT_EQ(results[i].round_medians.size(), 3u);
    EXPECT_EQ(results[i].costs.size(), 3u * 2u);  // the rounds' repeats, merged
  }
  EXPECT_EQ(results[2].error, ErrorKind::kWrongAnswer);  // failed on both devices; not measured again
  EXPECT_EQ(runner.measured_per_device(), (std::vector<std::size_t>{3 + 2, 3}));
}

// A re-measurement's rounds (each candidate's own) are dealt out by candidate: each device
// measures its share of the list three times over, where a comparison's would have each device
// measure the whole list; a candidate that failed is not measured again.
TEST_F(DeviceSpreadRunnerTest, AReMeasurementGivesEachDeviceCandidatesOfItsOwnForAllTheirRounds) {
  const auto batch = inputs({"correct", "correct", "wrong", "correct", "correct"});
  auto runner = two_devices();
  const auto results = runner.run(batch, build(batch), 3, 3, {}, Rounds::kEachItsOwn);
  for (std::size_t i : {0u, 1u, 3u, 4u}) {
    EXPECT_EQ(results[i].error, ErrorKind::kOk) << results[i].message;
    EXPECT_EQ(results[i].round_medians.size(), 3u);
    EXPECT_EQ(results[i].costs.size(), 3u * 2u);  // the rounds' repeats, merged
  }
  EXPECT_EQ(results[2].error, ErrorKind::kWrongAnswer);
  // Device 0: candidates 0, 2 and 4 (2 failed in its first round); device 1: candidates 1 and 3.
  EXPECT_EQ(runner.measured_per_device(), (std::vector<std::size_t>{3 + 1 + 3, 3 + 3}));
}

// The devices measure a comparison's rounds with the comparison's repeats (60 ms: two repeats
// take 120 ms, of which half is asserted, as the run that sizes a repeat may take longer than the
// runs after it), and a spread batch with the batch's (1 ms), as the worker reports its timing.
TEST_F(DeviceSpreadRunnerTest, EachDeviceTimesAComparisonsRoundsForTheComparisonsLength) {
  constexpr double kComparisonRoundAtLeast = 2 * 0.06 / 2;
  const auto batch = inputs({"correct", "correct", "correct"});
  const auto builds = build(batch);
  auto runner = two_devices(60);
  for (const auto& result : runner.run(batch, builds)) {
    EXPECT_EQ(result.error, ErrorKind::kOk) << result.message;
    EXPECT_LT(result.timing_seconds.value_or(1), kComparisonRoundAtLeast) << "a batch: two repeats of 1 ms";
  }
  for (const auto& result : runner.run(batch, builds, 2)) {
    EXPECT_EQ(result.error, ErrorKind::kOk) << result.message;
    EXPECT_EQ(result.round_medians.size(), 2u);
    EXPECT_GE(result.timing_seconds.value_or(0), 2 * kComparisonRoundAtLeast) << "a round on each device";
  }
}

}  // namespace
}  // namespace optune::measure
