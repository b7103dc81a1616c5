#include "optune/cost_model/simulated_annealing.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "optune/cost_model/xgb_cost_model.hpp"
#include "synthetic_task.hpp"

namespace optune::cost_model {
namespace {

using search_space::Config;
using testing::sample_split;
using testing::synthetic_space;
using testing::true_gflops;

double mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

TEST(SimulatedAnnealing, FindsConfigsTheModelLikesThatWereNotMeasured) {
  XGBCostModel model{FeatureExtractor(synthetic_space(), testing::gemm_workload(256, 128), {})};
  const auto& space = model.features().space();
  const auto split = sample_split(space, 200, 500, 50);
  model.update(split.train, true_gflops(space, split.train));
  const ConfigSet measured(split.train.begin(), split.train.end());

  std::mt19937_64 rng(51);
  const auto result = find_best_predicted(
      space, [&](std::span<const Config> configs) { return model.predict(configs); }, 32, measured,
      rng);
  ASSERT_EQ(result.best.size(), 32u);
  ConfigSet distinct;
  std::vector<double> found_gflops;
  for (std::size_t i = 0; i < result.best.size(); ++i) {
    const Config& config = result.best[i].config;
    EXPECT_TRUE(space.is_valid(config));
    EXPECT_FALSE(measured.contains(config));
    EXPECT_TRUE(distinct.insert(config).second) << "duplicate at " << i;
    if (i > 0) EXPECT_GE(result.best[i - 1].score, result.best[i].score);
    found_gflops.push_back(true_gflops(space, config));
  }
  const double random_mean = mean(true_gflops(space, split.held_out));
  const double best_measured = std::ranges::max(true_gflops(space, split.train));
  RecordProperty("found_mean", std::to_string(mean(found_gflops)));
  RecordProperty("random_mean", std::to_string(random_mean));
  RecordProperty("found_max", std::to_string(std::ranges::max(found_gflops)));
  RecordProperty("best_measured", std::to_string(best_measured));
  EXPECT_GT(mean(found_gflops), 2.0 * random_mean)
      << "found " << mean(found_gflops) << " random " << random_mean;
  EXPECT_GT(std::ranges::max(found_gflops), 0.9 * best_measured);
  EXPECT_LE(result.steps, AnnealingOptions{}.max_steps);
}

// With the true function as the scorer, annealing must find the region of the optimum.
TEST(SimulatedAnnealing, ClimbsAKnownFunction) {
  const auto space = synthetic_space();
  std::mt19937_64 rng(52);
  AnnealingOptions options;
  options.chains = 32;
  const auto result = find_best_predicted(
      space,
      [&](std::span<const Config> configs) {
        return true_gflops(space, std::vector<Config>(configs.begin(), configs.end()));
      },
      8, {}, rng, options);
  ASSERT_EQ(result.best.size(), 8u);
  // The optimum: tile 16x8, row layout, unroll, vector 8, j innermost: about 124 GFLOP/s.
  EXPECT_GT(result.best.front().score, 0.95 * 124.0) << result.best.front().score;
}

TEST(SimulatedAnnealing, ReturnsFewerWhenTheSpaceRunsOut) {
  search_space::ConfigSpace space;
  space.add(search_space::IntRangeKnob{"x", 0, 9, 1});
  ConfigSet exclude;
  for (std::uint32_t i = 0; i < 4; ++i) exclude.insert(Config{{i}});
  std::mt19937_64 rng(53);
  const auto result = find_best_predicted(
      space,
      [](std::span<const Config> configs) {
        std::vector<double> scores;
        for (const Config& config : configs) scores.push_back(config.options[0]);
        return scores;
      },
      20, exclude, rng);
  ASSERT_EQ(result.best.size(), 6u);
  EXPECT_EQ(result.best.front().config, Config{{9}});
  EXPECT_EQ(result.best.back().config, Config{{4}});
  EXPECT_LT(result.steps, AnnealingOptions{}.max_steps);  // stopped early
}

TEST(SimulatedAnnealing, StartsFromSeedsAndScoresInBatches) {
  const auto space = synthetic_space();
  std::mt19937_64 rng(54);
  std::vector<std::size_t> batch_sizes;
  const Config seed = space.from_json({{"tile_m", {16, 16}},
                                       {"tile_n", {16, 8}},
                                       {"layout", "row"},
                                       {"unroll", true},
                                       {"vector", 8},
                                       {"order", {"i", "k", "j"}}});
  AnnealingOptions options;
  options.chains = 16;
  options.max_steps = 5;
  const auto result = find_best_predicted(
      space,
      [&](std::span<const Config> configs) {
        batch_sizes.push_back(configs.size());
        return true_gflops(space, std::vector<Config>(configs.begin(), configs.end()));
      },
      1, {}, rng, options, std::vector{seed});
  EXPECT_EQ(batch_sizes, std::vector<std::size_t>(6, 16));
  EXPECT_EQ(result.scored, 96u);
  ASSERT_EQ(result.best.size(), 1u);
  EXPECT_GE(result.best.front().score, true_gflops(space, seed));
}

}  // namespace
}  // namespace optune::cost_model
