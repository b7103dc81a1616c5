// The final comparison's judgement of finalists measured in the same rounds: the speed-up is the
// median of the per-round ratios with their interval, a busy machine or a wide interval makes it
// unreliable, ties are called within noise, and a stored winner stays unless beaten beyond noise.
#include "optune/tuner/scheduling/final_comparison.hpp"

#include <gtest/gtest.h>

namespace optune::tuner {
namespace {

// A finalist's rounds: one median per round, on a machine as busy as `load`.
measure::MeasureResult rounds(std::vector<double> medians, double load = 0.01) {
  measure::MeasureResult result;
  result.round_medians = medians;
  result.costs = medians;
  result.median_seconds = measure::median(medians);
  result.load = load;
  return result;
}

TEST(FinalComparison, TheSpeedupIsTheMedianOfThePerRoundRatiosWithTheirInterval) {
  // The machine slows down in round 3 for both: the ratio holds.
  const auto verdict = judge_finalists({rounds({4.0, 4.1, 8.0, 4.0, 3.9}), rounds({1.0, 1.0, 2.0, 1.0, 1.0})}, 0,
                                       std::nullopt);
  ASSERT_EQ(verdict.winner, 1u);
  ASSERT_TRUE(verdict.speedup);
  EXPECT_DOUBLE_EQ(verdict.speedup->value, 4.0);
  EXPECT_DOUBLE_EQ(verdict.speedup->low, 3.9);
  EXPECT_DOUBLE_EQ(verdict.speedup->high, 4.1);
  EXPECT_EQ(verdict.unreliable, "");
  EXPECT_FALSE(verdict.is_unsettled());
}

TEST(FinalComparison, ABusyMachineMakesTheSpeedupUnreliable) {
  const auto verdict = judge_finalists({rounds({4, 4, 4, 4, 4}, 0.6), rounds({1, 1, 1, 1, 1}, 0.6)}, 0, std::nullopt);
  ASSERT_TRUE(verdict.speedup);
  EXPECT_EQ(verdict.unreliable.rfind("the machine was busy (other processes took 60%", 0), 0u) << verdict.unreliable;
  EXPECT_TRUE(verdict.is_unsettled());
}

TEST(FinalComparison, AWideIntervalMakesTheSpeedupUnreliable) {
  const auto verdict = judge_finalists({rounds({4, 2, 6, 3, 5}), rounds({1, 1, 1, 1, 1})}, 0, std::nullopt);
  ASSERT_TRUE(verdict.speedup);
  EXPECT_EQ(verdict.unreliable, "the machine was busy (the speed-up measured 2.00x to 6.00x across 5 interleaved rounds)");
}

TEST(FinalComparison, TheBestTwoWithinNoiseAreTied) {
  // best and runner-up swap places from round to round.
  const auto verdict = judge_finalists(
      {rounds({4, 4, 4, 4, 4}), rounds({1.00, 1.02, 0.99, 1.01, 1.00}), rounds({1.01, 1.00, 1.00, 1.00, 1.02})}, 0,
      std::nullopt);
  EXPECT_EQ(verdict.winner, 1u);
  EXPECT_EQ(verdict.runner_up, 2u);
  EXPECT_TRUE(verdict.tied);
  EXPECT_TRUE(verdict.is_unsettled()) << "another round may still separate them";
}

TEST(FinalComparison, AStoredWinnerStaysUnlessBeatenBeyondNoise) {
  const auto tied = judge_finalists(
      {rounds({4, 4, 4, 4, 4}), rounds({0.99, 1.00, 0.98, 1.01, 0.99}), rounds({1.00, 1.01, 0.99, 1.00, 1.00})}, 0, 2);
  EXPECT_EQ(tied.winner, 2u) << "the stored winner, within noise of a faster median";
  EXPECT_TRUE(tied.kept_stored_winner);
  EXPECT_EQ(tied.runner_up, 1u);

  const auto beaten = judge_finalists(
      {rounds({4, 4, 4, 4, 4}), rounds({0.80, 0.81, 0.79, 0.80, 0.82}), rounds({1.00, 1.01, 0.99, 1.00, 1.00})}, 0, 2);
  EXPECT_EQ(beaten.winner, 1u);
  EXPECT_FALSE(beaten.kept_stored_winner);
  EXPECT_FALSE(beaten.tied);
}

TEST(FinalComparison, TheDefaultAsWinnerHasNoSpeedup) {
  const auto verdict = judge_finalists({rounds({1, 1, 1, 1, 1}), rounds({2, 2, 2, 2, 2})}, 0, std::nullopt);
  EXPECT_EQ(verdict.winner, 0u);
  EXPECT_FALSE(verdict.speedup);
  EXPECT_EQ(verdict.unreliable, "");
}

TEST(FinalComparison, AFinalistThatFailedIsLeftOut) {
  measure::MeasureResult crashed;
  crashed.error = measure::ErrorKind::kCrash;
  const auto verdict = judge_finalists({rounds({2, 2, 2, 2, 2}), crashed, rounds({1, 1, 1, 1, 1})}, 0, std::nullopt);
  EXPECT_EQ(verdict.winner, 2u);
  EXPECT_EQ(verdict.runner_up, 0u);
  EXPECT_DOUBLE_EQ(verdict.speedup->value, 2.0);
}

// The summary's best is the database's ranking where a busy machine kept the winner unmarked: the
// default may have won the rounds while another config leads. That best's speed-up still comes
// from the rounds (here below 1), flagged unreliable; the winner's is the verdict's.
TEST(FinalComparison, AFinalistOtherThanTheWinnerGetsItsOwnRoundsRatioFlaggedUnreliable) {
  FinalComparison comparison;
  auto finalist = [&](const std::string& role, int knob, measure::MeasureResult result) {
    db::TuningRecord record;
    record.config = {{"knob", knob}};
    comparison.finalists.push_back({role, record, std::move(result)});
  };
  finalist("default", 0, rounds({1.0, 1.0, 1.0, 1.0, 1.0}, 0.6));
  finalist("best", 1, rounds({1.2, 1.2, 1.2, 1.2, 1.2}, 0.6));
  std::vector<measure::MeasureResult> results;
  for (const auto& one : comparison.finalists) results.push_back(one.result);
  comparison.verdict = judge_finalists(results, 0, std::nullopt);
  ASSERT_EQ(comparison.verdict.winner, 0u);
  EXPECT_FALSE(comparison.speedup_of(comparison.finalists[0].record.config_text())) << "the default over itself";
  const auto best = comparison.speedup_of(comparison.finalists[1].record.config_text());
  ASSERT_TRUE(best);
  EXPECT_NEAR(best->ratio.value, 1.0 / 1.2, 1e-12);
  EXPECT_EQ(best->unreliable.rfind("the machine was busy (other processes took 60%", 0), 0u) << best->unreliable;
  db::TuningRecord stranger;
  stranger.config = {{"knob", 2}};
  EXPECT_FALSE(comparison.speedup_of(stranger.config_text())) << "no finalist";
  // On a quiet machine a finalist that is not the winner is still no number to trust.
  for (auto& one : comparison.finalists) one.result.load = 0.01;
  results.clear();
  for (const auto& one : comparison.finalists) results.push_back(one.result);
  comparison.verdict = judge_finalists(results, 0, std::nullopt);
  EXPECT_EQ(comparison.speedup_of(comparison.finalists[1].record.config_text())->unreliable,
            "the final comparison measured another config fastest");
}

}  // namespace
}  // namespace optune::tuner
