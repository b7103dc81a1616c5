// The timing policy as it travels to a worker, local or remote: its JSON form (read by workers
// and RPC servers of older versions too), the policy a comparison times with, and the server's
// check of a request's timing before its upload is written.
#include "optune/measure/timing_policy.hpp"

#include <gtest/gtest.h>

#include "optune/measure/rpc/rpc_server.hpp"

namespace optune::measure {
namespace {

TEST(TimingPolicy, RoundTripsThroughJsonWithTheComparisonsRepeat) {
  TimingPolicy policy;
  policy.warmup = 2;
  policy.number = 0;
  policy.repeat = 7;
  policy.min_repeat_ms = 5;
  policy.comparison_min_repeat_ms = 40;
  policy.timeout_seconds = 12;
  policy.max_relative_error = 1e-3;
  policy.bail_out = 3;
  policy.adaptive = false;
  const TimingPolicy read = timing_policy_from_json(nlohmann::json::parse(to_json(policy).dump()));
  EXPECT_EQ(read.warmup, 2);
  EXPECT_EQ(read.repeat, 7);
  EXPECT_EQ(read.min_repeat_ms, 5);
  EXPECT_EQ(read.comparison_min_repeat_ms, 40);
  EXPECT_EQ(read.timeout_seconds, 12);
  EXPECT_EQ(read.max_relative_error, 1e-3);
  EXPECT_EQ(read.bail_out, 3);
  EXPECT_FALSE(read.adaptive);
}

// A peer that predates the field sends none: its comparisons are timed as its batches.
TEST(TimingPolicy, AnOlderPeersPolicyTimesAComparisonAsABatch) {
  const TimingPolicy read =
      timing_policy_from_json({{"warmup", 1}, {"number", 0}, {"repeat", 3}, {"min_repeat_ms", 5},
                               {"timeout_seconds", 30}, {"max_relative_error", 1e-4}});
  EXPECT_EQ(read.comparison_min_repeat_ms, 0);
  EXPECT_EQ(comparison_policy(read).min_repeat_ms, 5);
  EXPECT_EQ(comparison_policy(read).repeat, 3);
}

// A comparison's repeats last the longer of the two lengths; nothing else of the policy changes.
TEST(TimingPolicy, AComparisonsRepeatIsTheLongerOfTheTwoLengths) {
  TimingPolicy policy;
  policy.min_repeat_ms = 5;
  policy.comparison_min_repeat_ms = 40;
  policy.repeat = 4;
  policy.bail_out = 1.5;
  const TimingPolicy compared = comparison_policy(policy);
  EXPECT_EQ(compared.min_repeat_ms, 40);
  EXPECT_EQ(compared.repeat, 4);
  EXPECT_EQ(compared.bail_out, 1.5);
  EXPECT_EQ(compared.timeout_seconds, policy.timeout_seconds);
  policy.min_repeat_ms = 100;  // the user's, longer than the comparison's
  EXPECT_EQ(comparison_policy(policy).min_repeat_ms, 100);
  policy.comparison_min_repeat_ms = 0;  // none: the same as every repeat
  EXPECT_EQ(comparison_policy(policy).min_repeat_ms, 100);
}

// An RPC server holds a request's comparison length to --min-repeat-ms's range, 0 to 60000 ms.
TEST(TimingPolicy, TheRpcServerRefusesAComparisonsRepeatOutOfRange) {
  const auto problem = [](const nlohmann::json& comparison_min_repeat_ms) {
    nlohmann::json timing = to_json(TimingPolicy{});
    timing["comparison_min_repeat_ms"] = comparison_min_repeat_ms;
    return rpc::measure_request_problem({{"request", {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", timing}}}});
  };
  EXPECT_EQ(problem(0), "");
  EXPECT_EQ(problem(40), "");
  EXPECT_EQ(problem(60000), "");
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(60001), nlohmann::json(1e300),
                                    nlohmann::json("long")})
    EXPECT_EQ(problem(bad), "timing.comparison_min_repeat_ms: expected a number from 0.0 to 60000.0") << bad;
  nlohmann::json older = to_json(TimingPolicy{});
  older.erase("comparison_min_repeat_ms");
  EXPECT_EQ(rpc::measure_request_problem({{"request", {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", older}}}}), "")
      << "an older client's request, without the field";
}

}  // namespace
}  // namespace optune::measure
