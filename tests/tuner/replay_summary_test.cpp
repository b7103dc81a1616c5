// The replay figures: the calculated random-search baseline and the summary over seeds.
#include "optune/tuner/replay/replay_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace optune::tuner {
namespace {

const double kFailed = std::nan("");

TEST(ReplaySummaryTest, RandomBaselineIsTheExpectedBestWithoutReplacement) {
  auto expected = random_search_expected_best({4, 2, 1, 3}, 4);
  EXPECT_DOUBLE_EQ(expected[0], 2.5);  // the mean
  // two draws of four: the best is 1 in 3/6 pairs, 2 in 2/6, 3 in 1/6
  EXPECT_DOUBLE_EQ(expected[1], (3 * 1.0 + 2 * 2.0 + 1 * 3.0) / 6);
  EXPECT_DOUBLE_EQ(expected[3], 1.0);
}

TEST(ReplaySummaryTest, FailedConfigurationIsADrawThatFindsNothing) {
  auto expected = random_search_expected_best({1, kFailed}, 2);
  EXPECT_DOUBLE_EQ(expected[0], 1.0);  // a failed draw alone counts as the worst time (1)
  EXPECT_DOUBLE_EQ(expected[1], 1.0);
  auto two = random_search_expected_best({1, 3, kFailed}, 1);
  EXPECT_DOUBLE_EQ(two[0], (1 + 3 + 3) / 3.0);
}

TEST(ReplaySummaryTest, FractionsEvaluationsAndScore) {
  const std::vector<double> times = {1, 2, 4, 8};
  const auto random_best = random_search_expected_best(times, 4);
  // Seed 1 finds the optimum first, seed 2 last, seed 3 never reaches 95%.
  const std::vector<std::vector<double>> runs = {{1, 2, 4, 8}, {8, 4, 2, 1}, {kFailed, 2, 4, 8}};
  auto summary = summarise_replay(runs, 1.0, random_best, {1, 4});
  EXPECT_DOUBLE_EQ(summary.fraction[0], 0.125);  // median of 1, 1/8, 0
  EXPECT_DOUBLE_EQ(summary.fraction[1], 1.0);    // median of 1, 1, 1/2
  ASSERT_TRUE(summary.evals_to["0.95"].has_value());
  EXPECT_EQ(*summary.evals_to["0.95"], 4u);  // lower median of 1, 4, never
  // The optimum from the first evaluation on scores 1; here the mean lies between.
  auto perfect = summarise_replay({{1, 2, 4, 8}}, 1.0, random_best, {4});
  EXPECT_NEAR(perfect.score.value(), 1.0, 1e-12);
  EXPECT_GT(summary.score.value(), -1.0);
  EXPECT_LT(summary.score.value(), 1.0);
}

// One successful configuration among failed ones: random search's expected best is its time from
// the first draw on (a failed draw alone counts as the worst time, which is that one), so no t has
// a term and the score is undefined; it read 1.0 for a search that found nothing.
TEST(ReplaySummaryTest, ScoreWithoutAnyTermIsUndefined) {
  const std::vector<double> times = {kFailed, kFailed, kFailed, kFailed, kFailed, 2.0};
  const auto random_best = random_search_expected_best(times, 2);
  EXPECT_DOUBLE_EQ(random_best[0], 2.0);
  EXPECT_DOUBLE_EQ(random_best[1], 2.0);
  auto summary = summarise_replay({{kFailed, kFailed}}, 2.0, random_best, {1, 2});
  EXPECT_EQ(summary.fraction, (std::vector<double>{0.0, 0.0}));
  EXPECT_FALSE(summary.score.has_value());
}

TEST(ReplaySummaryTest, FewerThanHalfTheSeedsReachingIsNone) {
  const std::vector<double> times = {1, 2};
  auto summary = summarise_replay({{2, 2}, {2, 2}, {1, 2}}, 1.0, random_search_expected_best(times, 2), {2});
  EXPECT_FALSE(summary.evals_to["0.95"].has_value());
}

}  // namespace
}  // namespace optune::tuner
