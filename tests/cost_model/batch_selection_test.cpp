#include "optune/cost_model/batch_selection.hpp"

#include <gtest/gtest.h>

#include <set>

#include "synthetic_task.hpp"

namespace optune::cost_model {
namespace {

using search_space::Config;

std::size_t distinct_options(const std::vector<Config>& configs, std::size_t knob) {
  std::set<std::uint32_t> seen;
  for (const Config& config : configs) seen.insert(config.options[knob]);
  return seen.size();
}

TEST(BatchSelection, ZeroCoverageWeightTakesTheTopScores) {
  std::vector<ScoredConfig> candidates{
      {{{0, 0}}, 1.0}, {{{0, 1}}, 3.0}, {{{1, 0}}, 2.0}, {{{1, 1}}, 0.5}};
  const auto picks = select_diverse(candidates, 2, 0.0);
  EXPECT_EQ(picks, (std::vector<Config>{{{0, 1}}, {{1, 0}}}));
}

TEST(BatchSelection, CoverageWeightSpreadsThePicksOverKnobValues) {
  // Near-copies of one optimum score highest; diverse configs slightly lower.
  std::vector<ScoredConfig> candidates;
  for (std::uint32_t i = 0; i < 8; ++i) candidates.push_back({{{0, 0, i}}, 1.0 - 0.001 * i});
  for (std::uint32_t i = 1; i < 8; ++i) candidates.push_back({{{i, i, i}}, 0.8});
  candidates.push_back({{{9, 9, 9}}, 0.0});  // a poor one, which sets the score scale
  const auto greedy = select_diverse(candidates, 6, 0.0);
  const auto diverse = select_diverse(candidates, 6, 1.0);
  ASSERT_EQ(diverse.size(), 6u);
  EXPECT_EQ(distinct_options(greedy, 0), 1u);
  EXPECT_GE(distinct_options(diverse, 0), 5u);
  EXPECT_EQ(diverse.front(), candidates.front().config);  // the best still comes first
  EXPECT_EQ(select_diverse(candidates, 100, 1.0).size(), candidates.size());
}

TEST(BatchSelection, MixInRandomTakesEpsilonShareOfFreshValidConfigs) {
  const auto space = testing::synthetic_space();
  std::mt19937_64 rng(60);
  const auto pool = space.sample_valid_distinct(rng, 40);
  const std::vector<Config> ranked(pool.begin(), pool.begin() + 20);
  const ConfigSet exclude{ranked[0], ranked[1], pool[30]};
  const auto batch = mix_in_random(space, ranked, 10, 0.2, exclude, rng);
  ASSERT_EQ(batch.size(), 10u);
  // 8 from ranked in order, skipping the two excluded ones, then 2 random ones.
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(batch[i], ranked[i + 2]) << i;
  const ConfigSet ranked_set(ranked.begin(), ranked.end());
  ConfigSet distinct;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_TRUE(space.is_valid(batch[i]));
    EXPECT_FALSE(exclude.contains(batch[i]));
    EXPECT_TRUE(distinct.insert(batch[i]).second);
    if (i >= 8) EXPECT_FALSE(ranked_set.contains(batch[i]));
  }
}

TEST(BatchSelection, MixInRandomFillsWhenRankedRunsShort) {
  const auto space = testing::synthetic_space();
  std::mt19937_64 rng(61);
  const auto batch = mix_in_random(space, {}, 5, 0.0, {}, rng);
  EXPECT_EQ(batch.size(), 5u);
}

}  // namespace
}  // namespace optune::cost_model
