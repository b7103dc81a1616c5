// The model-based tuner against random search on a fixed synthetic landscape, over several seeds:
// a statistical comparison, not one lucky run.
#include "optune/tuner/search/xgb_tuner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>

#include "optune/tuner/search/random_tuner.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

// 4 knobs of 16 options (65,536 configs). Throughput falls off with the L1 distance from one
// optimum; within 90% of the optimum lie 41 configs (0.06% of the space), so random search needs
// about 1,600 trials on average to reach it.
constexpr int kKnobs = 4;
constexpr int kBest[kKnobs] = {11, 3, 7, 13};
constexpr double kPeak = 1000;

std::shared_ptr<measure::MeasureTask> synthetic_task() {
  auto task = std::make_shared<measure::MeasureTask>();
  for (int i = 0; i < kKnobs; ++i) task->space.add(search_space::IntRangeKnob{"k" + std::to_string(i), 0, 15, 1});
  return task;
}

double landscape(const search_space::ConfigSpace& space, const search_space::Config& config) {
  search_space::ConfigView view(space, config);
  double distance = 0;
  for (int i = 0; i < kKnobs; ++i) distance += std::abs(view.integer("k" + std::to_string(i)) - kBest[i]);
  return kPeak / (1.0 + 0.05 * distance * distance);
}

// Trials until a config within 90% of the peak is measured; `budget` + 1 when none is.
std::size_t trials_to_target(Tuner& tuner, const search_space::ConfigSpace& space, std::size_t budget) {
  std::size_t trials = 0;
  while (trials < budget) {
    auto batch = tuner.next_batch(8);
    if (batch.empty()) break;
    std::vector<measure::MeasureResult> results;
    for (const auto& config : batch) {
      ++trials;
      measure::MeasureResult result;
      result.gflops = landscape(space, config);
      result.median_seconds = 1 / result.gflops;
      if (result.gflops >= 0.9 * kPeak) return trials;
      results.push_back(result);
    }
    tuner.update(batch, results);
  }
  return budget + 1;
}

TEST(XGBTuner, ReachesTheTargetInFewerTrialsThanRandomOverSeeds) {
  auto task = synthetic_task();
  constexpr std::size_t kBudget = 240;
  ModelBasedTunerOptions options;
  options.annealing.max_steps = 150;
  int xgb_wins = 0;
  std::vector<std::size_t> xgb_trials, random_trials;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto xgb = make_xgb_tuner(*task, seed, {}, options);
    RandomTuner random(SearchDomain(task->space), seed);
    xgb_trials.push_back(trials_to_target(*xgb, task->space, kBudget));
    random_trials.push_back(trials_to_target(random, task->space, kBudget));
    xgb_wins += xgb_trials.back() < random_trials.back();
  }
  std::sort(xgb_trials.begin(), xgb_trials.end());
  std::sort(random_trials.begin(), random_trials.end());
  std::printf("trials to 90%% of the peak: xgb median %zu, random median %zu\n", xgb_trials[2], random_trials[2]);
  EXPECT_GE(xgb_wins, 4);
  EXPECT_LE(xgb_trials[2], kBudget / 2) << "median trials of xgb";
  EXPECT_LT(xgb_trials[2] * 2, random_trials[2]) << "median xgb " << xgb_trials[2] << " vs random " << random_trials[2];
}

// A plateau, as a PoCL convolution's 4 x 1 tiles were one (every block shape within a few
// percent): t (4 options) and u (2) set a config's level, a and b (16 each) shade it by at most 6%;
// t = 1 without u is the plateau, 256 near-equal configs.
std::shared_ptr<measure::MeasureTask> plateau_task() {
  auto task = std::make_shared<measure::MeasureTask>();
  task->space.add(search_space::IntRangeKnob{"a", 0, 15, 1});
  task->space.add(search_space::IntRangeKnob{"b", 0, 15, 1});
  task->space.add(search_space::IntRangeKnob{"t", 0, 3, 1});
  task->space.add(search_space::IntRangeKnob{"u", 0, 1, 1});
  return task;
}

double plateau(const search_space::ConfigSpace& space, const search_space::Config& config) {
  search_space::ConfigView view(space, config);
  constexpr double kLevel[2][4] = {{40, 100, 60, 30}, {35, 85, 130, 25}};  // [u][t]
  return kLevel[view.integer("u")][view.integer("t")] *
         (1 - 0.002 * double(std::abs(view.integer("a") - 5) + std::abs(view.integer("b") - 9)));
}

// A run that has walked the plateau's a x b corner 0-7 x 0-7 (64 configs) and measured 24 random
// configs elsewhere: unweighed, the model sends a batch's global picks on along the plateau; weighed
// by their measured neighbours (saturation_weight), fewer of them go there.
TEST(XGBTuner, WeighingByMeasuredNeighboursSendsFewerPicksAlongAWalkedPlateau) {
  auto task = plateau_task();
  TaskHistory history;
  auto record = [&](const search_space::Config& config) {
    db::TuningRecord measured;
    measured.config = task->space.to_json(config);
    measured.gflops = plateau(task->space, config);
    history.own.push_back(measured);
  };
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) record(task->space.from_json({{"a", a}, {"b", b}, {"t", 1}, {"u", 0}}));
  std::mt19937_64 rng(7);
  for (const auto& config : task->space.sample_valid_distinct(rng, 24)) {
    search_space::ConfigView view(task->space, config);
    if (view.integer("t") != 1 || view.integer("u") != 0) record(config);
  }
  auto on_plateau = [&](double weight) {
    ModelBasedTunerOptions options;
    options.local_share = 0;  // global picks only
    options.saturation_weight = weight;
    int count = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed)
      for (const auto& config : make_xgb_tuner(*task, seed, history, options)->next_batch(8)) {
        search_space::ConfigView view(task->space, config);
        count += view.integer("t") == 1 && view.integer("u") == 0;
      }
    return count;
  };
  const int unweighed = on_plateau(0), weighed = on_plateau(1);
  std::printf("picks on the walked plateau, of 32: unweighed %d, weighed %d\n", unweighed, weighed);
  EXPECT_GE(unweighed, 16);
  EXPECT_LE(weighed * 2, unweighed);
}

TEST(XGBTuner, ProposesValidUnmeasuredDistinctConfigs) {
  auto task = synthetic_task();
  auto tuner = make_xgb_tuner(*task, 3, {});
  ConfigSet seen;
  for (int round = 0; round < 6; ++round) {
    auto batch = tuner->next_batch(16);
    ASSERT_EQ(batch.size(), 16u);
    std::vector<measure::MeasureResult> results;
    for (const auto& config : batch) {
      EXPECT_TRUE(task->space.is_valid(config));
      EXPECT_TRUE(seen.insert(config).second);
      measure::MeasureResult result;
      result.gflops = landscape(task->space, config);
      results.push_back(result);
    }
    tuner->update(batch, results);
  }
  EXPECT_GT(tuner->overhead_seconds(), 0);
}

// A template of the synthetic space whose knobs k2 and k3 are taken at run time: a config that
// differs from a measured one only in them needs no compile.
class RunTimeKnobsTemplate final : public kernels::KernelTemplate {
 public:
  std::string name() const override { return "test.run_time_knobs"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }
  search_space::ConfigSpace space(const kernels::Workload&, const kernels::DeviceInfo&) const override {
    return synthetic_task()->space;
  }
  search_space::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                                      const search_space::ConfigSpace& space) const override {
    return space.from_json({{"k0", 0}, {"k1", 0}, {"k2", 0}, {"k3", 0}});
  }
  std::string emit_source(const kernels::Workload&, const kernels::DeviceInfo&,
                          const search_space::ConfigView&) const override {
    return "";
  }
  std::vector<std::string> run_time_knobs() const override { return {"k2", "k3"}; }
};

TEST(XGBTuner, SpendsItsCheapShareOnRunTimeVariantsOfTheBest) {
  static const RunTimeKnobsTemplate kTemplate;
  auto task = synthetic_task();
  task->kernel_template = &kTemplate;
  task->workload = kernels::parse_workload(kernels::Op::kGemm, "64,64,64");
  ModelBasedTunerOptions options;
  options.annealing.max_steps = 150;
  options.cheap_share = 1.0;  // every pick a run-time variant, once the model leads
  auto tuner = make_xgb_tuner(*task, 3, {}, options);
  std::set<std::pair<std::int64_t, std::int64_t>> compiled;  // (k0, k1) of the configs measured
  std::size_t picks = 0, cheap = 0;
  for (int batch_index = 0; batch_index < 6; ++batch_index) {
    const auto batch = tuner->next_batch(8);
    ASSERT_EQ(batch.size(), 8u);
    std::vector<measure::MeasureResult> results;
    for (const auto& config : batch) {
      search_space::ConfigView view(task->space, config);
      const std::pair<std::int64_t, std::int64_t> part{view.integer("k0"), view.integer("k1")};
      // The model leads after initial_random (20) measurements: batches 4 to 6.
      if (batch_index >= 3) {
        ++picks;
        cheap += compiled.count(part);
      }
      measure::MeasureResult result;
      result.gflops = landscape(task->space, config);
      result.median_seconds = 1 / result.gflops;
      results.push_back(result);
    }
    for (const auto& config : batch) {
      search_space::ConfigView view(task->space, config);
      compiled.insert({view.integer("k0"), view.integer("k1")});
    }
    tuner->update(batch, results);
  }
  EXPECT_EQ(picks, 24u);
  EXPECT_EQ(cheap, picks) << "every pick a measured config's compiled part with other run-time knobs";
}

TEST(XGBTuner, ResumedRunSkipsRecordedConfigsAndStartsTrained) {
  auto task = synthetic_task();
  TaskHistory history;
  for (int k0 = 0; k0 < 16; ++k0) {
    db::TuningRecord record;
    record.config = {{"k0", k0}, {"k1", 3}, {"k2", 7}, {"k3", 13}};
    record.gflops = landscape(task->space, task->space.from_json(record.config));
    history.own.push_back(record);
  }
  auto tuner = make_xgb_tuner(*task, 1, history);
  auto batch = tuner->next_batch(32);
  for (const auto& config : batch) {
    search_space::ConfigView view(task->space, config);
    bool recorded = view.integer("k1") == 3 && view.integer("k2") == 7 && view.integer("k3") == 13;
    EXPECT_FALSE(recorded) << task->space.to_json(config).dump();
  }
}

// Another device's records of the task: `throughput` of 400 random configs.
TaskHistory other_device(const search_space::ConfigSpace& space, double (*throughput)(double)) {
  TaskHistory history;
  std::mt19937_64 rng(99);
  for (const auto& config : space.sample_valid_distinct(rng, 400)) {
    db::TuningRecord record;
    record.device_id = "other-gpu";
    record.config = space.to_json(config);
    record.gflops = throughput(landscape(space, config));
    history.other_devices.push_back(record);
  }
  return history;
}

// Median over 5 seeds of the trials to 90% of the peak, batches of 8.
std::size_t median_trials(const measure::MeasureTask& task, const TaskHistory& history, std::size_t budget) {
  ModelBasedTunerOptions options;
  options.annealing.max_steps = 150;
  std::vector<std::size_t> trials;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto xgb = make_xgb_tuner(task, seed, history, options);
    trials.push_back(trials_to_target(*xgb, task.space, budget));
  }
  std::sort(trials.begin(), trials.end());
  return trials[2];
}

TEST(XGBTuner, AgreeingDeviceLeadsToTheTargetAtOnce) {
  auto task = synthetic_task();
  const auto trials = median_trials(*task, other_device(task->space, [](double g) { return 0.5 * g; }), 240);
  std::printf("trials to 90%% with an agreeing device: median %zu\n", trials);
  EXPECT_LE(trials, 24u);
}

// A device whose records rank the space backwards steers the first batch to the worst configs;
// the task's own records disagree with it, so it is set aside and the search finds the target as
// it does without transfer.
TEST(XGBTuner, DisagreeingDeviceFadesOutAndTheTargetIsStillFound) {
  auto task = synthetic_task();
  constexpr std::size_t kBudget = 240;
  const auto trials = median_trials(*task, other_device(task->space, [](double g) { return 2 * kPeak - g; }), kBudget);
  std::printf("trials to 90%% with a misleading device: median %zu\n", trials);
  EXPECT_LE(trials, kBudget / 2);
}

}  // namespace
}  // namespace optune::tuner
