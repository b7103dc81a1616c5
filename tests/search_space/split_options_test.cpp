// Split knobs: which factorisations each policy enumerates, and in which order.
#include <gtest/gtest.h>

#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

std::vector<SplitValue> all_splits(const SplitKnob& knob) {
  ConfigSpace space;
  space.add(knob);
  std::vector<SplitValue> splits;
  for (std::uint32_t option = 0; option < space.option_count(0); ++option) {
    splits.push_back(space.split_value(0, option));
  }
  return splits;
}

TEST(SplitOptions, DivisorsOfTwelveIntoThreeAreAllOrderedFactorisations) {
  const std::vector<SplitValue> expected = {
      {12, 1, 1}, {6, 1, 2}, {4, 1, 3}, {3, 1, 4}, {2, 1, 6}, {1, 1, 12},
      {6, 2, 1},  {3, 2, 2}, {2, 2, 3}, {1, 2, 6}, {4, 3, 1}, {2, 3, 2},
      {1, 3, 4},  {3, 4, 1}, {1, 4, 3}, {2, 6, 1}, {1, 6, 2}, {1, 12, 1}};
  EXPECT_EQ(all_splits({.name = "t", .extent = 12, .num_outputs = 3}), expected);
}

TEST(SplitOptions, DivisorSplitsMultiplyToTheExtentExactly) {
  for (const SplitValue& split : all_splits({.name = "t", .extent = 360, .num_outputs = 4})) {
    EXPECT_EQ(split[0] * split[1] * split[2] * split[3], 360);
  }
  // Ordered factorisations of 360 = 2^3 3^2 5 into 4 factors: C(6,3) * C(5,3) * C(4,3).
  EXPECT_EQ(all_splits({.name = "t", .extent = 360, .num_outputs = 4}).size(), 20u * 10u * 4u);
}

TEST(SplitOptions, MaxFactorBoundsInnerFactorsOnly) {
  const std::vector<SplitValue> expected = {{12, 1}, {6, 2}, {4, 3}, {3, 4}};
  EXPECT_EQ(all_splits({.name = "t", .extent = 12, .num_outputs = 2, .max_factor = 4}), expected);
}

TEST(SplitOptions, PowerOfTwoFactorsMayOvershootTheExtent) {
  const std::vector<SplitValue> expected = {{12, 1}, {6, 2}, {3, 4}, {2, 8}, {1, 16}};
  EXPECT_EQ(all_splits({.name = "t", .extent = 12, .num_outputs = 2,
                        .policy = SplitPolicy::kPowerOfTwo}),
            expected);
}

TEST(SplitOptions, PowerOfTwoInnerProductStaysWithinNextPowerOfTwo) {
  const auto splits =
      all_splits({.name = "t", .extent = 5, .num_outputs = 3, .policy = SplitPolicy::kPowerOfTwo});
  // Pairs of powers of two with product <= 8: exponent pairs (a, b) with a + b <= 3.
  ASSERT_EQ(splits.size(), 10u);
  EXPECT_EQ(splits.front(), (SplitValue{5, 1, 1}));
  EXPECT_EQ(splits[1], (SplitValue{3, 1, 2}));
  EXPECT_EQ(splits.back(), (SplitValue{1, 8, 1}));
  for (const SplitValue& split : splits) {
    EXPECT_LE(split[1] * split[2], 8);
    EXPECT_EQ(split[0], (5 + split[1] * split[2] - 1) / (split[1] * split[2]));
  }
}

TEST(SplitOptions, CandidatesAreSortedDeduplicatedAndBounded) {
  const std::vector<SplitValue> expected = {{10, 1}, {3, 4}, {2, 8}};
  EXPECT_EQ(all_splits({.name = "t", .extent = 10, .num_outputs = 2,
                        .policy = SplitPolicy::kCandidates, .candidates = {8, 1, 4, 8, 32},
                        .max_factor = 16}),
            expected);
}

TEST(SplitOptions, SingleOutputIsTheExtentItself) {
  EXPECT_EQ(all_splits({.name = "t", .extent = 7, .num_outputs = 1}),
            (std::vector<SplitValue>{{7}}));
}

TEST(SplitOptions, PrimeExtentHasOnlyTrivialDivisorSplits) {
  EXPECT_EQ(all_splits({.name = "t", .extent = 7, .num_outputs = 2}),
            (std::vector<SplitValue>{{7, 1}, {1, 7}}));
}

TEST(SplitOptions, RejectsMalformedSplits) {
  ConfigSpace space;
  EXPECT_THROW(space.add(SplitKnob{.name = "zero", .extent = 0}), std::invalid_argument);
  EXPECT_THROW(space.add(SplitKnob{.name = "none", .extent = 8, .num_outputs = 0}),
               std::invalid_argument);
  EXPECT_THROW(space.add(SplitKnob{.name = "nocand", .extent = 8,
                                   .policy = SplitPolicy::kCandidates}),
               std::invalid_argument);
  EXPECT_THROW(space.add(SplitKnob{.name = "negcand", .extent = 8,
                                   .policy = SplitPolicy::kCandidates, .candidates = {-2, 4}}),
               std::invalid_argument);
  EXPECT_TRUE(space.knobs().empty());
}

}  // namespace
}  // namespace optune::search_space
