// The tuning loop end to end with real parts: builder, isolated worker, SQLite database.
#include "optune/backends/registry.hpp"
#include "optune/tuner/scheduling/tuning_loop.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>

#include "behaviour_template.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/cpu/local_builder.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

using Clock = std::chrono::steady_clock;

// When each build and each measuring of a batch began and ended, in call order.
struct Timeline {
  std::mutex mutex;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> builds, measures;
};

// The real builder and runner, their calls' times noted.
class TimedBuilder final : public measure::Builder {
 public:
  TimedBuilder(measure::Builder& inner, Timeline& timeline) : inner_(inner), timeline_(timeline) {}
  std::vector<measure::BuildResult> build(const std::vector<measure::MeasureInput>& inputs) override {
    const auto start = Clock::now();
    auto results = inner_.build(inputs);
    const std::lock_guard<std::mutex> lock(timeline_.mutex);
    timeline_.builds.emplace_back(start, Clock::now());
    return results;
  }
  measure::Toolchain toolchain(const kernels::DeviceInfo& device) const override { return inner_.toolchain(device); }

 private:
  measure::Builder& inner_;
  Timeline& timeline_;
};

class TimedRunner final : public measure::Runner {
 public:
  TimedRunner(measure::Runner& inner, Timeline& timeline) : Runner(false), inner_(inner), timeline_(timeline) {}

 protected:
  std::vector<measure::MeasureResult> measure_round(const std::vector<measure::MeasureInput>& inputs,
                                                    const std::vector<measure::BuildResult>& builds) override {
    const auto start = Clock::now();
    auto results = inner_.run(inputs, builds);
    const std::lock_guard<std::mutex> lock(timeline_.mutex);
    timeline_.measures.emplace_back(start, Clock::now());
    return results;
  }

 private:
  measure::Runner& inner_;
  Timeline& timeline_;
};

class TuningLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("optune-loop-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    task_ = optune::testing::behaviour_task(behaviour_, "20,12,7");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TuningSummary tune(db::Database& database, const std::string& tuner, std::size_t trials) {
    TuningOptions options;
    options.trials = trials;
    options.batch_size = 3;
    options.tuner.name = tuner;
    return tune(database, options);
  }
  TuningSummary tune(db::Database& database, const TuningOptions& options, Timeline* timeline = nullptr) {
    measure::LocalBuilderOptions build;
    build.flags = {"-std=c++20", "-O1", "-fPIC", "-shared"};
    measure::LocalBuilder builder(build);
    measure::TimingPolicy timing;
    timing.timeout_seconds = 2;
    timing.min_repeat_ms = 1;
    measure::LocalRunner runner({OPTUNE_WORKER_PATH, timing, true});
    Progress quiet(nullptr, false);
    if (!timeline) {
      TuningLoop loop(builder, runner, database, quiet);
      return loop.run(task_, options);
    }
    TimedBuilder timed_builder(builder, *timeline);
    TimedRunner timed_runner(runner, *timeline);
    TuningLoop loop(timed_builder, timed_runner, database, quiet);
    return loop.run(task_, options);
  }

  std::filesystem::path dir_;
  testing::BehaviourTemplate behaviour_;
  std::shared_ptr<const measure::MeasureTask> task_;
};

TEST_F(TuningLoopTest, EveryOutcomeIsRecordedAndTheLoopFinishes) {
  auto database = db::Database::open((dir_ / "t.db").string());
  auto summary = tune(database, "grid", 100);
  // The default config ("correct") is measured first and never proposed again: 6 trials left.
  EXPECT_EQ(summary.trials, 6u);
  EXPECT_EQ(summary.failures, 6u);
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->config["behaviour"], "correct");
  EXPECT_NEAR(summary.speedup(), 1.0, 1.0);  // the best is the default's config

  auto records = database.records({});
  std::map<std::string, int> kinds;
  for (const auto& r : records) kinds[r.error_kind]++;
  EXPECT_EQ(kinds["crash"], 2);
  EXPECT_EQ(kinds["timeout"], 1);
  EXPECT_EQ(kinds["build_error"], 1);
  EXPECT_EQ(kinds["wrong_answer"], 2);
  EXPECT_EQ(kinds["ok"], 1);  // the default
  // What built them: the compiler as its --version names it, and the builder's flags.
  std::string version;
  if (FILE* pipe = ::popen("c++ --version", "r")) {
    char line[512] = {};
    if (std::fgets(line, sizeof line, pipe)) version = line;
    ::pclose(pipe);
  }
  version.erase(version.find_last_not_of('\n') + 1);
  ASSERT_FALSE(version.empty());
  for (const auto& r : records) {
    EXPECT_EQ(r.toolchain, (nlohmann::json{{"compiler", version}, {"flags", "-std=c++20 -O1 -fPIC -shared"}}));
    EXPECT_EQ(r.run_id, summary.run_id);
    EXPECT_EQ(r.template_name, "gemm.behaviour_test");
    EXPECT_EQ(r.workload_key, "gemm.f32.M20.N12.K7");
  }
}

TEST_F(TuningLoopTest, SecondRunSkipsConfigsAlreadyMeasured) {
  auto database = db::Database::open((dir_ / "t.db").string());
  tune(database, "random", 4);
  auto second = tune(database, "random", 100);
  EXPECT_EQ(second.trials, 2u);  // 7 configs: the default and 4 measured by the first run
  std::set<std::string> tuned;
  for (const auto& r : database.records({}))
    if (r.tuner == "random") EXPECT_TRUE(tuned.insert(r.config_text()).second) << r.config_text();
  EXPECT_EQ(tuned.size(), 6u);
}

// Compile-ahead: each tuner batch after the first is built while the batch before it is measured,
// and before it is measured itself; every config still measured once and recorded. Without it,
// a batch is built only after the one before is measured.
TEST_F(TuningLoopTest, CompileAheadBuildsTheNextBatchWhileThisOneIsMeasured) {
  for (const bool ahead : {true, false}) {
    SCOPED_TRACE(ahead ? "compile-ahead" : "one after the other");
    auto database = db::Database::open((dir_ / (ahead ? "ahead.db" : "plain.db")).string());
    TuningOptions options;
    options.trials = 6;
    options.batch_size = 2;
    options.remeasure_top = 0;
    options.tuner.name = "grid";
    options.compile_ahead = ahead;
    Timeline timeline;
    const auto summary = tune(database, options, &timeline);
    EXPECT_EQ(summary.trials, 6u);
    // The default's batch, then three of two.
    ASSERT_EQ(timeline.builds.size(), 4u);
    ASSERT_EQ(timeline.measures.size(), 4u);
    for (std::size_t i = 2; i < 4; ++i) {
      EXPECT_LE(timeline.builds[i].second, timeline.measures[i].first) << "batch " << i << " built before measured";
      if (ahead)
        EXPECT_LT(timeline.builds[i].first, timeline.measures[i - 1].second) << "batch " << i;
      else
        EXPECT_GE(timeline.builds[i].first, timeline.measures[i - 1].second) << "batch " << i;
    }
    std::set<std::string> configs;
    for (const auto& r : database.records({})) EXPECT_TRUE(configs.insert(r.config_text()).second) << r.config_text();
    EXPECT_EQ(configs.size(), 7u);  // the default and the six others, each once
  }
}

// The transfer set is the template's records of other shapes on this device, less the shapes
// named unseen (dispatch's held-out ones); the task's own records are kept whatever is named.
TEST_F(TuningLoopTest, TransferLearnsFromOtherShapesButNotTheUnseenOnes) {
  auto database = db::Database::open((dir_ / "t.db").string());
  std::vector<db::TuningRecord> records;
  for (const std::string key : {task_->workload.key(), std::string("gemm.f32.M40.N12.K7"), std::string("gemm.f32.M80.N12.K7")}) {
    db::TuningRecord record;
    record.workload_key = key;
    record.template_name = task_->kernel_template->name();
    record.target = task_->target.str();
    record.device_id = task_->device.fingerprint_id();
    record.config = {{"behaviour", "correct"}};
    record.median_seconds = 1e-3;
    record.gflops = 1;
    records.push_back(record);
  }
  database.insert(records);
  auto related_keys = [](const TaskHistory& history) {
    std::set<std::string> keys;
    for (const auto& record : history.related) keys.insert(record.workload_key);
    return keys;
  };
  const auto all = load_history(database, *task_, true);
  EXPECT_EQ(all.own.size(), 1u);
  EXPECT_EQ(related_keys(all), (std::set<std::string>{"gemm.f32.M40.N12.K7", "gemm.f32.M80.N12.K7"}));
  const auto held_out = load_history(database, *task_, true, {"gemm.f32.M40.N12.K7", task_->workload.key()});
  EXPECT_EQ(held_out.own.size(), 1u);
  EXPECT_EQ(related_keys(held_out), (std::set<std::string>{"gemm.f32.M80.N12.K7"}));
}

}  // namespace
}  // namespace optune::tuner
