#include <gtest/gtest.h>

#include "optune/tuner/search/genetic_tuner.hpp"
#include "optune/tuner/search/grid_tuner.hpp"
#include "optune/tuner/search/random_tuner.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

using search_space::Config;
using search_space::ConfigSpace;

// 6 x 4 = 24 configs, of which those with a + b odd are valid (12).
ConfigSpace small_space() {
  ConfigSpace space;
  space.add(search_space::IntRangeKnob{"a", 0, 5, 1});
  space.add(search_space::IntRangeKnob{"b", 0, 3, 1});
  space.add_constraint("a + b odd", [](const search_space::ConfigView& v) {
    return (v.integer("a") + v.integer("b")) % 2 == 1;
  });
  return space;
}

ConfigSpace large_space() {
  ConfigSpace space;
  for (int i = 0; i < 8; ++i) space.add(search_space::IntRangeKnob{"k" + std::to_string(i), 0, 99, 1});
  return space;
}

std::vector<Config> drain(Tuner& tuner, std::size_t batch) {
  std::vector<Config> all;
  for (auto configs = tuner.next_batch(batch); !configs.empty(); configs = tuner.next_batch(batch))
    all.insert(all.end(), configs.begin(), configs.end());
  return all;
}

// What the cost model learns from each kind of record: a success at its quiet estimate, a failure
// at 0, and a slow record (its timing cut by the bail-out) at its bound, the fastest it can be.
TEST(TaskHistory, ASlowRecordIsLearntAtItsBoundAndAFailureAtZero) {
  auto space = small_space();
  auto record = [&](int a, const std::string& kind, double gflops) {
    db::TuningRecord r;
    r.config = {{"a", a}, {"b", 0}};
    r.error_kind = kind;
    r.gflops = gflops;
    return r;
  };
  auto busy = record(3, "ok", 100);
  busy.load = 0.5;
  const auto parsed = parse_records(space, {record(1, "ok", 100), record(3, "slow", 30), record(5, "crash", 0), busy});
  ASSERT_EQ(parsed.gflops.size(), 4u);
  EXPECT_DOUBLE_EQ(parsed.gflops[0], 100);
  EXPECT_DOUBLE_EQ(parsed.gflops[1], 30);
  EXPECT_DOUBLE_EQ(parsed.gflops[2], 0);
  EXPECT_DOUBLE_EQ(parsed.gflops[3], 200);
  EXPECT_FALSE(parsed.noisy[1]);
  // The same from a measurement before it is recorded.
  measure::MeasureResult slow;
  slow.error = measure::ErrorKind::kSlow;
  slow.gflops = 30;
  slow.load = 0.5;  // a slow result's load is not taken off: its bound is a bound already
  EXPECT_DOUBLE_EQ(quiet_gflops(slow), 30);
  slow.error = measure::ErrorKind::kCrash;
  EXPECT_DOUBLE_EQ(quiet_gflops(slow), 0);
}

TEST(GridTuner, VisitsEveryValidConfigOnceThenStops) {
  auto space = small_space();
  GridTuner tuner{SearchDomain(space)};
  auto all = drain(tuner, 5);
  EXPECT_EQ(all.size(), 12u);
  ConfigSet distinct(all.begin(), all.end());
  EXPECT_EQ(distinct.size(), 12u);
  for (const auto& config : all) EXPECT_TRUE(space.is_valid(config));
}

TEST(GridTuner, SkipsConfigsAlreadyMeasured) {
  auto space = small_space();
  ConfigSet measured = {space.from_json({{"a", 1}, {"b", 0}}), space.from_json({{"a", 0}, {"b", 1}})};
  GridTuner tuner{SearchDomain(space, measured)};
  auto all = drain(tuner, 4);
  EXPECT_EQ(all.size(), 10u);
  for (const auto& config : all) EXPECT_FALSE(measured.count(config));
}

TEST(RandomTuner, ExhaustsSmallSpaceWithoutRepeats) {
  auto space = small_space();
  RandomTuner tuner(SearchDomain(space), 42);
  auto all = drain(tuner, 5);
  EXPECT_EQ(all.size(), 12u);
  EXPECT_EQ(ConfigSet(all.begin(), all.end()).size(), 12u);
}

TEST(RandomTuner, SameSeedSameSequenceOtherSeedOther) {
  auto space = large_space();
  RandomTuner a(SearchDomain(space), 7), b(SearchDomain(space), 7), c(SearchDomain(space), 8);
  auto first = a.next_batch(16);
  EXPECT_EQ(first, b.next_batch(16));
  EXPECT_NE(first, c.next_batch(16));
}

TEST(RandomTuner, CoversLargeSpaceUniformly) {
  auto space = large_space();  // 10^16 configs
  RandomTuner tuner(SearchDomain(space), 3);
  auto batch = tuner.next_batch(2000);
  ASSERT_EQ(batch.size(), 2000u);
  int low = 0;  // first knob below 50: about half
  for (const auto& config : batch) low += search_space::ConfigView(space, config).integer("k0") < 50;
  EXPECT_GT(low, 850);
  EXPECT_LT(low, 1150);
}

TEST(MakeTuner, RejectsUnknownName) {
  EXPECT_THROW(check_tuner_name("annealing"), std::invalid_argument);
  for (const auto& name : tuner_names()) EXPECT_NO_THROW(check_tuner_name(name));
}

}  // namespace
}  // namespace optune::tuner

namespace optune::tuner {
namespace {

// A smooth synthetic landscape over large_space(): best when every knob is near 70.
double synthetic_gflops(const search_space::ConfigSpace& space, const search_space::Config& config) {
  search_space::ConfigView view(space, config);
  double distance = 0;
  for (int i = 0; i < 8; ++i) distance += std::abs(view.integer("k" + std::to_string(i)) - 70);
  return 1000.0 / (1.0 + distance);
}

std::vector<measure::MeasureResult> evaluate(const search_space::ConfigSpace& space,
                                             const std::vector<search_space::Config>& batch) {
  std::vector<measure::MeasureResult> results;
  for (const auto& config : batch) {
    measure::MeasureResult result;
    result.gflops = synthetic_gflops(space, config);
    result.median_seconds = 1 / result.gflops;
    results.push_back(result);
  }
  return results;
}

// 1000^3 configs, of which the 56 with a + b + c <= 5 are valid: one in 18 million, as a GPU
// template's tiles leave few of its configs valid for a 16 x 16 x 16 GEMM.
ConfigSpace sparse_space() {
  ConfigSpace space;
  for (const char* name : {"a", "b", "c"}) space.add(search_space::IntRangeKnob{name, 0, 999, 1});
  space.add_constraint("a + b + c <= 5", [](const search_space::ConfigView& v) {
    return v.integer("a") + v.integer("b") + v.integer("c") <= 5;
  });
  return space;
}

TEST(RandomTuner, FindsTheValidConfigsOfASparseSpaceFromTheMeasuredDefault) {
  auto space = sparse_space();
  const Config origin{{0, 0, 0}};  // the default, measured before the tuner starts
  RandomTuner tuner(SearchDomain(space, ConfigSet{origin}), 5);
  auto all = drain(tuner, 8);
  EXPECT_GE(all.size(), 40u) << "uniform draws alone find none";
  for (const auto& config : all) EXPECT_TRUE(space.is_valid(config));
  EXPECT_EQ(ConfigSet(all.begin(), all.end()).size(), all.size());
  EXPECT_FALSE(ConfigSet(all.begin(), all.end()).contains(origin));
}

TEST(GeneticTuner, FillsItsFirstGenerationInASparseSpace) {
  auto space = sparse_space();
  GeneticTuner tuner(SearchDomain(space, ConfigSet{Config{{0, 0, 0}}}), 1, {.population = 8, .elites = 2, .mutation_rate = 0.3});
  auto batch = tuner.next_batch(8);
  EXPECT_EQ(batch.size(), 8u);
  for (const auto& config : batch) EXPECT_TRUE(space.is_valid(config));
}

TEST(GeneticTuner, ProposesOnlyValidNeverRepeatedConfigs) {
  auto space = small_space();
  GeneticTuner tuner(SearchDomain(space), 1, {.population = 4, .elites = 2, .mutation_rate = 0.3});
  ConfigSet seen;
  for (auto batch = tuner.next_batch(3); !batch.empty(); batch = tuner.next_batch(3)) {
    for (const auto& config : batch) {
      EXPECT_TRUE(space.is_valid(config));
      EXPECT_TRUE(seen.insert(config).second);
    }
    std::vector<measure::MeasureResult> results(batch.size());
    for (auto& r : results) r.gflops = 1;
    tuner.update(batch, results);
  }
  EXPECT_EQ(seen.size(), 12u);  // the whole valid space, then it stops
}

TEST(GeneticTuner, LaterGenerationsAreFitterThanTheFirst) {
  auto space = large_space();
  GeneticTuner tuner(SearchDomain(space), 11, {.population = 32, .elites = 4, .mutation_rate = 0.1});
  std::vector<double> generation_means;
  for (int generation = 0; generation < 15; ++generation) {
    auto batch = tuner.next_batch(32);
    ASSERT_EQ(batch.size(), 32u);
    auto results = evaluate(space, batch);
    double sum = 0;
    for (const auto& r : results) sum += r.gflops;
    generation_means.push_back(sum / 32);
    tuner.update(batch, results);
  }
  EXPECT_GT(generation_means.back(), 3 * generation_means.front())
      << generation_means.front() << " -> " << generation_means.back();
}

}  // namespace
}  // namespace optune::tuner

#include "optune/tuner/search/candidate_pool.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

TEST(CandidatePool, EveryTunerProposesOnlyPoolConfigsUntilThePoolIsUsedUp) {
  auto task = std::make_shared<measure::MeasureTask>();
  task->space = large_space();
  std::mt19937_64 rng(5);
  auto configs = task->space.sample_valid_distinct(rng, 40);
  auto pool = std::make_shared<const CandidatePool>(configs);
  ConfigSet in_pool(configs.begin(), configs.end());
  for (const auto& name : tuner_names()) {
    TunerOptions options;
    options.name = name;
    options.seed = 9;
    options.pool = pool;
    auto tuner = make_tuner(options, *task, TaskHistory{});
    ConfigSet seen;
    for (auto batch = tuner->next_batch(6); !batch.empty(); batch = tuner->next_batch(6)) {
      for (const auto& config : batch) {
        EXPECT_TRUE(in_pool.count(config)) << name;
        EXPECT_TRUE(seen.insert(config).second) << name;
      }
      tuner->update(batch, evaluate(task->space, batch));
    }
    EXPECT_EQ(seen.size(), 40u) << name;
  }
}

}  // namespace
}  // namespace optune::tuner
