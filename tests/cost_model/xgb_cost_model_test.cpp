#include "optune/cost_model/xgb_cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <random>

#include "optune/cost_model/simulated_annealing.hpp"
#include "optune/cost_model/xgboost_booster.hpp"
#include "synthetic_task.hpp"

namespace optune::cost_model {
namespace {

using testing::gemm_workload;
using testing::sample_split;
using testing::spearman;
using testing::synthetic_space;
using testing::true_gflops;

FeatureExtractor task_features(std::int64_t m = 256, std::int64_t n = 128) {
  return FeatureExtractor(synthetic_space(m, n), gemm_workload(m, n), {});
}

double held_out_spearman(Objective objective, std::uint64_t seed) {
  XGBCostModelOptions options;
  options.objective = objective;
  XGBCostModel model(task_features(), options);
  const auto& space = model.features().space();
  const auto split = sample_split(space, 200, 400, seed);
  model.update(split.train, true_gflops(space, split.train));
  EXPECT_TRUE(model.is_trained());
  return spearman(model.predict(split.held_out), true_gflops(space, split.held_out));
}

TEST(XGBCostModel, RankingObjectiveLearnsHeldOutOrder) {
  const double rho = held_out_spearman(Objective::kRankPairwise, 11);
  RecordProperty("spearman", std::to_string(rho));
  EXPECT_GE(rho, 0.8) << "spearman " << rho;
}

TEST(XGBCostModel, RegressionObjectiveLearnsHeldOutOrder) {
  const double rho = held_out_spearman(Objective::kRegression, 12);
  RecordProperty("spearman", std::to_string(rho));
  EXPECT_GE(rho, 0.8) << "spearman " << rho;
}

TEST(XGBCostModel, FailedCandidatesRankBelowWorkingOnes) {
  XGBCostModel model(task_features());
  const auto& space = model.features().space();
  const auto split = sample_split(space, 200, 0, 5);
  std::vector<double> gflops = true_gflops(space, split.train);
  // Every config with unroll fails: the model must learn that unroll predicts the worst.
  const std::size_t unroll = space.knob_index("unroll");
  for (std::size_t i = 0; i < gflops.size(); ++i) {
    if (split.train[i].options[unroll] == 1) gflops[i] = 0;
  }
  model.update(split.train, gflops);
  auto config = split.train.front();
  config.options[unroll] = 0;
  auto failing = config;
  failing.options[unroll] = 1;
  const auto scores = model.predict(std::vector{config, failing});
  EXPECT_GT(scores[0], scores[1]);
}

// A hog arrives halfway through a tune: the second half of the rows, the better configs the
// model had learnt to pick, are measured slowed by 2x to 5x each (a hog does not slow every config
// alike). Returns the held-out order against the quiet truth.
double held_out_spearman_beside_a_hog(Objective objective, bool flag_noisy, std::uint64_t seed) {
  XGBCostModelOptions options;
  options.objective = objective;
  XGBCostModel model(task_features(), options);
  const auto& space = model.features().space();
  const auto split = sample_split(space, 200, 400, seed);
  std::vector<double> gflops = true_gflops(space, split.train);
  std::vector<std::size_t> order(split.train.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return gflops[a] < gflops[b]; });
  std::vector<bool> noisy(split.train.size(), false);
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> slowdown(0.2, 0.5);
  for (std::size_t rank = order.size() / 2; rank < order.size(); ++rank) {
    noisy[order[rank]] = flag_noisy;
    gflops[order[rank]] *= slowdown(random);
  }
  model.update(split.train, gflops, noisy);
  return spearman(model.predict(split.held_out), true_gflops(space, split.held_out));
}

// Flagged, the slowed rows weigh a quarter, and the quiet rows' order leads. Measured over three
// seeds: 0.889/0.913/0.917 flagged against 0.868/0.903/0.867 unflagged. The ranking objective
// weighs groups, not rows, so there the flags change nothing (xgb_cost_model.hpp).
TEST(XGBCostModel, NoisyRowsWeighLessInRegression) {
  double gain = 0;
  for (const std::uint64_t seed : {21u, 22u, 23u})
    gain += held_out_spearman_beside_a_hog(Objective::kRegression, true, seed) -
            held_out_spearman_beside_a_hog(Objective::kRegression, false, seed);
  RecordProperty("mean_spearman_gain", std::to_string(gain / 3));
  EXPECT_GT(gain / 3, 0.01);
}

TEST(XGBCostModel, NoisyFlagsMustMatchTheConfigs) {
  XGBCostModel model(task_features());
  const auto split = sample_split(model.features().space(), 4, 0, 3);
  EXPECT_THROW(model.update(split.train, std::vector<double>(4, 1.0), std::vector<bool>(3, true)),
               std::invalid_argument);
}

TEST(XGBCostModel, UntrainedModelPredictsZerosAndAllFailuresKeepItUntrained) {
  XGBCostModel model(task_features());
  const auto& space = model.features().space();
  const auto split = sample_split(space, 10, 0, 6);
  EXPECT_EQ(model.predict(split.train), std::vector<double>(10, 0.0));
  model.update(split.train, std::vector<double>(10, 0.0));
  EXPECT_FALSE(model.is_trained());
  EXPECT_EQ(model.task_row_count(), 10u);
  EXPECT_EQ(model.predict(split.train), std::vector<double>(10, 0.0));
}

TEST(XGBCostModel, UpdateAccumulatesRows) {
  XGBCostModel model(task_features());
  const auto& space = model.features().space();
  const auto split = sample_split(space, 60, 0, 7);
  const std::vector<search_space::Config> first(split.train.begin(), split.train.begin() + 30);
  const std::vector<search_space::Config> second(split.train.begin() + 30, split.train.end());
  model.update(first, true_gflops(space, first));
  model.update(second, true_gflops(space, second));
  EXPECT_EQ(model.task_row_count(), 60u);
  EXPECT_GT(model.fit_seconds(), 0.0);
  EXPECT_THROW(model.update(first, {1.0}), std::invalid_argument);
}

TEST(XGBCostModel, SaveLoadRoundTripPredictsIdentically) {
  XGBCostModel model(task_features());
  const auto& space = model.features().space();
  const auto split = sample_split(space, 150, 100, 8);
  model.update(split.train, true_gflops(space, split.train));
  const auto path = std::filesystem::temp_directory_path() /
                    ("optune_xgb_model_" + std::to_string(::getpid()) + ".json");
  model.save(path);

  XGBCostModel loaded(task_features());
  loaded.load(path);
  EXPECT_TRUE(loaded.is_trained());
  EXPECT_EQ(loaded.predict(split.held_out), model.predict(split.held_out));

  // A model of another knob set must refuse it.
  search_space::ConfigSpace other;
  other.add(search_space::BoolKnob{"something_else"});
  XGBCostModel mismatched{FeatureExtractor(other)};
  EXPECT_THROW(mismatched.load(path), std::invalid_argument);
  std::filesystem::remove(path);
  EXPECT_THROW(loaded.load(path), XGBoostError);
}

TEST(XGBCostModel, SavingUntrainedModelIsAnError) {
  XGBCostModel model(task_features());
  EXPECT_THROW(model.save(std::filesystem::temp_directory_path() / "optune_never.json"),
               std::logic_error);
}

TEST(XGBCostModel, ObjectiveNamesParse) {
  EXPECT_EQ(parse_objective("rank:pairwise"), Objective::kRankPairwise);
  EXPECT_EQ(parse_objective("reg:squarederror"), Objective::kRegression);
  EXPECT_EQ(objective_name(Objective::kRegression), "reg:squarederror");
  EXPECT_THROW(parse_objective("rank:ndcg?"), std::invalid_argument);
}

// Rows of two other shapes teach a model that ranks a third shape it has never measured.
TEST(XGBCostModel, TransferRowsFromOtherShapesRankANewShape) {
  XGBCostModel model(task_features(512, 64));
  int group = 0;
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{256, 128}, {1024, 256}}) {
    const FeatureExtractor other = task_features(m, n);
    const auto split = sample_split(other.space(), 150, 0, 20 + group);
    const auto gflops = true_gflops(other.space(), split.train);
    // Give the columns in reverse, with one extra column: alignment is by name.
    std::vector<std::string> names(other.names().rbegin(), other.names().rend());
    names.push_back("unknown.feature");
    std::vector<TrainingRow> rows = make_training_rows(other, split.train, gflops, group++);
    for (TrainingRow& row : rows) {
      std::reverse(row.features.begin(), row.features.end());
      row.features.push_back(123.0f);
    }
    model.add_transfer_rows(names, rows);
  }
  EXPECT_EQ(model.transfer_row_count(), 300u);
  EXPECT_FALSE(model.is_trained());
  model.fit();
  ASSERT_TRUE(model.is_trained());
  const auto& space = model.features().space();
  const auto target = sample_split(space, 0, 300, 30).held_out;
  const double rho = spearman(model.predict(target), true_gflops(space, target));
  RecordProperty("spearman", std::to_string(rho));
  EXPECT_GE(rho, 0.7) << "spearman " << rho;
}

TEST(XGBCostModel, TransferRowsMustMatchTheirNames) {
  XGBCostModel model(task_features());
  const std::vector<std::string> names{"a", "b"};
  const std::vector<TrainingRow> rows{{{1.0f}, 1.0, 0}};
  EXPECT_THROW(model.add_transfer_rows(names, rows), std::invalid_argument);
}

// The model step's cost at the size a long tuning run reaches: fit on 1000 rows, then one
// annealing search of 128 chains. Budget from the tuner: well under 2 s on the 2-core machine;
// asserted loosely (the machine is shared), printed for the record.
TEST(XGBCostModel, FitAndSearchAtThousandRowsStayWithinBudget) {
  XGBCostModel model(task_features());
  const auto& space = model.features().space();
  const auto split = sample_split(space, 1000, 0, 40);
  model.update(split.train, true_gflops(space, split.train));
  const double fit = model.fit_seconds();

  const ConfigSet measured(split.train.begin(), split.train.end());
  std::mt19937_64 rng(41);
  AnnealingOptions options;
  options.early_stop_steps = 0;  // the worst case: every step
  const auto result = find_best_predicted(
      space, [&](std::span<const search_space::Config> configs) { return model.predict(configs); },
      64, measured, rng, options);
  std::printf(
      "[ timing ] fit 1000 rows x %d rounds: %.3f s; annealing %d steps x %d chains "
      "(%zu scored): %.3f s\n",
      model.options().rounds, fit, result.steps, options.chains, result.scored, result.seconds);
  RecordProperty("fit_seconds", std::to_string(fit));
  RecordProperty("annealing_seconds", std::to_string(result.seconds));
  EXPECT_EQ(result.best.size(), 64u);
  EXPECT_LT(fit + result.seconds, 6.0);
}

}  // namespace
}  // namespace optune::cost_model
