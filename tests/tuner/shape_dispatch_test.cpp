// The dispatch of a shape range: the greedy cover's choice of configs from a configs x shapes
// matrix, the rule's leaves (where it splits, which config each leaf runs) and its JSON form.
#include "optune/tuner/results/shape_dispatch.hpp"
#include "optune/tuner/results/stored_dispatch.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace optune::tuner {
namespace {

using Seconds = std::vector<std::optional<double>>;
using Configs = std::vector<std::size_t>;

kernels::ExtentValues gemm(std::int64_t m, std::int64_t n = 64) { return {{"K", 64}, {"M", m}, {"N", n}}; }

ConfigShapeMatrix over_m(const std::vector<std::int64_t>& ms, std::vector<Seconds> seconds) {
  ConfigShapeMatrix matrix;
  for (auto m : ms) matrix.shapes.push_back(gemm(m));
  matrix.seconds = std::move(seconds);
  return matrix;
}

TEST(ShapeDispatchTest, CoverTakesTheConfigWithinReachOfMostShapesFirst) {
  // A is best on the first two shapes, B on the third; C is within 5% of the best on all three.
  auto matrix = over_m({1, 2, 3}, {{1.0, 1.0, 2.0}, {2.0, 2.0, 1.0}, {1.04, 1.03, 1.04}});
  EXPECT_EQ(greedy_cover(matrix, 8, 0.05).chosen, (Configs{2}));
  // Within 1%, C reaches none: A (two shapes), then B.
  auto strict = greedy_cover(matrix, 8, 0.01);
  EXPECT_EQ(strict.chosen, (Configs{0, 1}));
  EXPECT_TRUE(strict.uncovered.empty());
}

TEST(ShapeDispatchTest, CoverStopsAtKAndNamesTheShapesLeftOut) {
  auto matrix = over_m({1, 2, 3}, {{1.0, 1.0, 2.0}, {2.0, 2.0, 1.0}});
  auto cover = greedy_cover(matrix, 1, 0.0);
  EXPECT_EQ(cover.chosen, (Configs{0}));
  EXPECT_EQ(cover.uncovered, (Configs{2}));
}

TEST(ShapeDispatchTest, CoverBreaksTiesByTotalSlowdownAndPassesOverFailedConfigs) {
  // A and B each reach shape 0 only; B is the less slow elsewhere. C failed on every shape.
  auto matrix = over_m({1, 2}, {{1.0, 3.0}, {1.0, 1.5}, {std::nullopt, std::nullopt}, {5.0, 1.0}});
  auto cover = greedy_cover(matrix, 8, 0.05);
  EXPECT_EQ(cover.chosen, (Configs{1, 3}));
  // A shape no config ran on is never covered.
  auto failed = over_m({1}, {{std::nullopt}});
  EXPECT_EQ(greedy_cover(failed, 8, 0.05).uncovered, (Configs{0}));
}

TEST(ShapeDispatchTest, OneRangedExtentGivesIntervalsSplitAtTheGeometricMiddle) {
  // X wins up to M=16, Y from M=64.
  auto matrix = over_m({1, 4, 16, 64, 256}, {{1.0, 1.0, 1.0, 2.0, 2.0}, {1.5, 1.5, 1.5, 1.0, 1.0}});
  auto leaves = fit_leaves(matrix, {0, 1}, gemm(1), {{"K", 64}, {"M", 2048}, {"N", 64}});
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].high.at("M"), 32);  // floor(sqrt(16 * 64))
  EXPECT_EQ(leaves[1].low.at("M"), 33);
  EXPECT_EQ(leaves[1].high.at("M"), 2048);
  EXPECT_EQ(leaves[0].config, 0u);
  EXPECT_EQ(leaves[1].config, 1u);
  DispatchRule rule{{{{"a", 1}}, {{"a", 2}}}, {"x", "y"}, leaves};
  EXPECT_EQ(rule.leaf_of(gemm(32)), 0u);
  EXPECT_EQ(rule.leaf_of(gemm(33)), 1u);
  EXPECT_EQ(rule.leaf_of(gemm(2048)), 1u);
  EXPECT_FALSE(rule.leaf_of(gemm(2049)).has_value());  // past the range
  EXPECT_FALSE(rule.leaf_of(gemm(64, 128)).has_value());  // another N
  EXPECT_EQ(rule.leaf_name(0), "M=1..32");
  EXPECT_EQ(rule.leaf_name(1), "M=33..2048");
}

TEST(ShapeDispatchTest, NoSplitWhereOneConfigServesEveryShapeOrTheGainIsNoise) {
  auto one_best = over_m({1, 8, 64}, {{1.0, 1.0, 1.0}, {1.2, 0.9999, 1.2}});
  auto leaves = fit_leaves(one_best, {0, 1}, gemm(1), {{"K", 64}, {"M", 64}, {"N", 64}});
  ASSERT_EQ(leaves.size(), 1u);  // B saves 0.01% on one shape: not worth a leaf
  EXPECT_EQ(leaves[0].config, 0u);
  DispatchRule rule{{{{"a", 1}}, {{"a", 2}}}, {"x", "y"}, leaves};
  EXPECT_EQ(rule.leaf_name(0), "all");
}

TEST(ShapeDispatchTest, SplitsOnlyOnTheExtentThatDecides) {
  ConfigShapeMatrix matrix;
  for (std::int64_t m : {1, 64})
    for (std::int64_t n : {16, 1024}) matrix.shapes.push_back(gemm(m, n));
  // X is best at N=16, Y at N=1024, whatever M.
  matrix.seconds = {{1.0, 2.0, 1.0, 2.0}, {2.0, 1.0, 2.0, 1.0}};
  auto leaves = fit_leaves(matrix, {0, 1}, {{"K", 64}, {"M", 1}, {"N", 16}}, {{"K", 64}, {"M", 64}, {"N", 1024}});
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].high.at("N"), 128);
  EXPECT_EQ(leaves[0].high.at("M"), 64);  // M is not split
  DispatchRule rule{{{{"a", 1}}, {{"a", 2}}}, {"x", "y"}, leaves};
  EXPECT_EQ(rule.leaf_name(1), "N=129..1024");
}

TEST(ShapeDispatchTest, LeafRunsNoConfigThatFailedOnOneOfItsShapes) {
  // X is fastest on two shapes but failed on the third; Y ran everywhere.
  auto matrix = over_m({1, 2, 3}, {{1.0, 1.0, std::nullopt}, {1.1, 1.1, 1.0}});
  auto leaves = fit_leaves(matrix, {0, 1}, gemm(1), gemm(3), 1);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0].config, 1u);
}

TEST(ShapeDispatchTest, LeafTakesAConfigThatRunsOverItsWholeBox) {
  // X is fastest on both sampled shapes, but its rules break at the box's low corner (M=1).
  auto matrix = over_m({4, 64}, {{1.0, 1.0}, {1.2, 1.2}});
  auto runs_over = [](std::size_t config, const DispatchLeaf& box) { return config != 0 || box.low.at("M") > 1; };
  auto leaves = fit_leaves(matrix, {0, 1}, gemm(1), gemm(64), 16, runs_over);
  // So the box is split: Y runs from M=1, X where its rules hold.
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].config, 1u);
  EXPECT_EQ(leaves[0].high.at("M"), 16);
  EXPECT_EQ(leaves[1].config, 0u);
  // Where no config runs over the box, the fastest is taken all the same.
  auto none = [](std::size_t, const DispatchLeaf&) { return false; };
  EXPECT_EQ(fit_leaves(matrix, {0, 1}, gemm(1), gemm(64), 16, none)[0].config, 0u);
}

TEST(ShapeDispatchTest, LeavesStopAtTheirBound) {
  // Each of four shapes has its own best config.
  auto matrix = over_m({1, 2, 4, 8}, {{1, 2, 2, 2}, {2, 1, 2, 2}, {2, 2, 1, 2}, {2, 2, 2, 1}});
  EXPECT_EQ(fit_leaves(matrix, {0, 1, 2, 3}, gemm(1), gemm(8)).size(), 4u);
  EXPECT_EQ(fit_leaves(matrix, {0, 1, 2, 3}, gemm(1), gemm(8), 2).size(), 2u);
}

TEST(ShapeDispatchTest, RuleReadsBackFromItsJsonAndRefusesMalformedOnes) {
  auto matrix = over_m({1, 64}, {{1.0, 2.0}, {2.0, 1.0}});
  DispatchRule rule{{{{"tile", 8}}, {{"tile", 32}}}, {"gemm.f32.M1.N64.K64", "gemm.f32.M64.N64.K64"},
                    fit_leaves(matrix, {0, 1}, gemm(1), gemm(64))};
  auto again = rule_from_json(rule_json(rule));
  EXPECT_EQ(again.configs, rule.configs);
  EXPECT_EQ(again.configs_from, rule.configs_from);
  ASSERT_EQ(again.leaves.size(), 2u);
  EXPECT_EQ(again.leaves[1].low, rule.leaves[1].low);
  EXPECT_EQ(again.leaves[1].config, 1u);
  auto broken = rule_json(rule);
  broken["leaves"][0]["config"] = 7;
  EXPECT_THROW(rule_from_json(broken), std::invalid_argument);
  broken = rule_json(rule);
  broken["leaves"][0]["high"]["M"] = 0;
  EXPECT_THROW(rule_from_json(broken), std::invalid_argument);
  EXPECT_THROW(rule_from_json(nlohmann::json{{"configs", 3}}), std::invalid_argument);
  EXPECT_THROW(rule_from_json(nlohmann::json{{"configs", nlohmann::json::array()}, {"leaves", nlohmann::json::array()}}),
               std::invalid_argument);
}

db::DispatchRecord stored(std::int64_t id, const std::string& low, const std::string& high, nlohmann::json rule) {
  return {id, "gemm.cpu", "cpu", "dev", low, high, std::move(rule), 1000.0 - static_cast<double>(id), "0.1.0"};
}

TEST(StoredDispatchTest, TheNewestRuleWhoseRangeHoldsTheWorkloadAnswersWithItsLeaf) {
  auto matrix = over_m({1, 64}, {{1.0, 2.0}, {2.0, 1.0}});
  DispatchRule rule{{{{"tile", 8}}, {{"tile", 32}}}, {"a", "b"},
                    fit_leaves(matrix, {0, 1}, gemm(1, 32), {{"K", 64}, {"M", 64}, {"N", 32}})};
  for (auto& leaf : rule.leaves) leaf.low["N"] = leaf.high["N"] = 32;
  const std::vector<db::DispatchRecord> in_force = {
      stored(1, "gemm.f32.M1.N32.K64", "gemm.f32.M64.N32.K64", nlohmann::json{{"leaves", 3}}),  // unreadable
      stored(2, "gemm.f32.M1.N32.K64", "gemm.f32.M64.N32.K64", rule_json(rule)),
      stored(3, "gemm.bf16.M1.N32.K64", "gemm.bf16.M64.N32.K64", rule_json(rule))};
  std::vector<std::string> passed_over;
  auto match = dispatch_for(in_force, kernels::parse_workload_key("gemm.f32.M50.N32.K64"), passed_over);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->record.id, 2);
  EXPECT_EQ(match->leaf, 1u);
  ASSERT_EQ(passed_over.size(), 1u);
  EXPECT_NE(passed_over[0].find("dispatch rule 1"), std::string::npos);
  EXPECT_EQ(dispatch_for(in_force, kernels::parse_workload_key("gemm.bf16.M2.N32.K64"), passed_over)->record.id, 3);
  // Outside every range: another N, past M's bound, another operator.
  EXPECT_FALSE(dispatch_for(in_force, kernels::parse_workload_key("gemm.f32.M50.N33.K64"), passed_over));
  EXPECT_FALSE(dispatch_for(in_force, kernels::parse_workload_key("gemm.f32.M65.N32.K64"), passed_over));
  EXPECT_FALSE(dispatch_for(in_force, kernels::parse_workload_key("conv2d.nchw.f32.N1.C32.H8.W8.K64.R3.S3.st1.pad1.dil1.g1"),
                            passed_over));
  EXPECT_EQ(range_text(in_force[1]), "gemm.f32.M1.N32.K64 .. gemm.f32.M64.N32.K64");
}

}  // namespace
}  // namespace optune::tuner
