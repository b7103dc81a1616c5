// The verdicts of revalidate on measurements given as numbers, and its JUnit's escaping and counts
// (the command end to end: tests/integration/revalidate_cli_test.cpp).
#include "optune/tuner/results/revalidation.hpp"

#include <gtest/gtest.h>

#include "optune/tuner/results/junit.hpp"

namespace optune::tuner {
namespace {

measure::MeasureResult timed(double seconds) {
  measure::MeasureResult result;
  result.median_seconds = seconds;
  return result;
}

measure::MeasureResult failed(measure::ErrorKind kind, const std::string& message) {
  measure::MeasureResult result;
  result.error = kind;
  result.message = message;
  return result;
}

TEST(RevalidationTest, HoldsRegressedAndBrokenFollowTheToleranceAndTheErrorKind) {
  RegressionCase c{"w", "gemm.f32.M8.N8.K8", 1.0, timed(1.04), timed(2.0), 0.1};
  EXPECT_EQ(judge_revalidation(c, 0.05).status, Revalidation::kHolds);
  c.tuned_now = timed(1.2);  // 20% slower than recorded
  auto verdict = judge_revalidation(c, 0.05);
  EXPECT_EQ(verdict.status, Revalidation::kRegressed);
  EXPECT_NE(verdict.reason.find("against its recorded 1000.0000 ms: speed-up 0.83x"), std::string::npos) << verdict.reason;
  EXPECT_EQ(judge_revalidation(c, 0.5).status, Revalidation::kHolds);
  c.recorded_seconds = 3.0;
  c.tuned_now = timed(2.5);  // faster than recorded, slower than the default
  EXPECT_EQ(judge_revalidation(c, 0.1).status, Revalidation::kRegressed);
  c.recorded_seconds = 1.0;
  // A compiler's output runs to many lines: the verdict quotes the kind and the first.
  c.tuned_now = failed(measure::ErrorKind::kBuildError, "compiler exited with 1:\nx.cpp:3: error: no");
  verdict = judge_revalidation(c, 10);
  EXPECT_EQ(verdict.status, Revalidation::kBroken);
  EXPECT_EQ(verdict.reason, "build_error: compiler exited with 1:");
  c.tuned_now = failed(measure::ErrorKind::kWrongAnswer, "");
  EXPECT_EQ(judge_revalidation(c, 10).reason, "wrong_answer");
  c.recorded_seconds.reset();
  EXPECT_EQ(judge_revalidation(c, 0.05).status, Revalidation::kUntuned);
}

TEST(RevalidationTest, AfterTuningAgainOnlyANewBestThatFailsOrLosesToTheDefaultFails) {
  EXPECT_EQ(judge_retuned(timed(1.0), timed(2.0), 0.05).status, Revalidation::kHolds);
  EXPECT_EQ(judge_retuned(timed(1.0), std::nullopt, 0.05).status, Revalidation::kHolds);
  EXPECT_EQ(judge_retuned(timed(2.2), timed(2.0), 0.05).status, Revalidation::kRegressed);
  EXPECT_EQ(judge_retuned(std::nullopt, timed(2.0), 0.05).status, Revalidation::kBroken);
  EXPECT_EQ(judge_retuned(failed(measure::ErrorKind::kCrash, ""), timed(2.0), 0.05).status, Revalidation::kBroken);
  EXPECT_EQ(revalidation_name(Revalidation::kCurrent), "current");
  EXPECT_EQ(revalidation_name(Revalidation::kBroken), "broken");
}

TEST(JunitTest, CountsFailuresAndSkipsAndEscapes) {
  const std::string xml = junit_xml("revalidate", "net\"1",
                                    {{"gemm<&>", 0.5, JUnitCase::Outcome::kPassed, "", ""},
                                     {"b", 0.25, JUnitCase::Outcome::kFailed, "broken", "build_error: 'x'"},
                                     {"c", 0.25, JUnitCase::Outcome::kSkipped, "", "untuned"}});
  EXPECT_NE(xml.find("<testsuites name=\"optune revalidate\" tests=\"3\" failures=\"1\" skipped=\"1\" time=\"1.000\">"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("classname=\"optune.revalidate.net&quot;1\" name=\"gemm&lt;&amp;&gt;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"broken\" message=\"build_error: &apos;x&apos;\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"untuned\"/>"), std::string::npos) << xml;
}

}  // namespace
}  // namespace optune::tuner
