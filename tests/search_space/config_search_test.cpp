// Sampling and neighbour moves: every config they return satisfies the constraints.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

// A GEMM-like space: the inner tile of m times the inner tile of n must fit 64 registers.
ConfigSpace constrained_space() {
  ConfigSpace space;
  space.add(SplitKnob{.name = "tile_m", .extent = 64, .num_outputs = 2});
  space.add(SplitKnob{.name = "tile_n", .extent = 64, .num_outputs = 2});
  space.add(BoolKnob{"vectorize"});
  space.add_constraint("registers: tile_m inner * tile_n inner <= 64", [](const ConfigView& v) {
    return v.split_factor("tile_m", 1) * v.split_factor("tile_n", 1) <= 64;
  });
  space.add_constraint("vectorize needs tile_n inner >= 4", [](const ConfigView& v) {
    return !v.flag("vectorize") || v.split_factor("tile_n", 1) >= 4;
  });
  return space;
}

std::size_t count_valid(const ConfigSpace& space) {
  std::size_t valid = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.from_index(i));
  return valid;
}

std::size_t differing_knobs(const Config& a, const Config& b) {
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.options.size(); ++k) differ += a.options[k] != b.options[k];
  return differ;
}

TEST(Constraints, FirstViolationNamesTheBrokenConstraint) {
  const ConfigSpace space = constrained_space();
  // tile_m inner 64 (option 6), tile_n inner 2 (option 1), vectorize on.
  const Config too_big{{6, 1, 1}};
  EXPECT_FALSE(space.is_valid(too_big));
  EXPECT_EQ(space.first_violation(too_big), "registers: tile_m inner * tile_n inner <= 64");
  const Config narrow{{0, 1, 1}};
  EXPECT_EQ(space.first_violation(narrow), "vectorize needs tile_n inner >= 4");
  const Config fine{{3, 3, 1}};
  EXPECT_TRUE(space.is_valid(fine));
  EXPECT_EQ(space.first_violation(fine), "");
}

TEST(Constraints, MalformedConfigIsInvalid) {
  const ConfigSpace space = constrained_space();
  EXPECT_FALSE(space.is_valid(Config{{0, 0}}));
  EXPECT_FALSE(space.is_valid(Config{{0, 7, 0}}));
}

TEST(Sampling, SampleValidYieldsOnlyValidConfigs) {
  const ConfigSpace space = constrained_space();
  std::mt19937_64 rng(7);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const Config config = space.sample_valid(rng);
    ASSERT_TRUE(space.is_valid(config)) << space.first_violation(config);
    seen.insert(space.to_index(config));
  }
  // 7 x 7 x 2 = 98 points. Inner factors are 2^i, 2^j: i + j <= 6 leaves 28 pairs; with
  // vectorize also j >= 2, which leaves 15. The sampler reaches all 43.
  EXPECT_EQ(count_valid(space), 43u);
  EXPECT_EQ(seen.size(), 43u);
}

TEST(Sampling, SampleValidIsUniformOverValidConfigs) {
  ConfigSpace space;
  space.add(IntRangeKnob{"a", 0, 3});
  space.add(IntRangeKnob{"b", 0, 3});
  space.add_constraint("a <= b",
                       [](const ConfigView& v) { return v.integer("a") <= v.integer("b"); });
  std::mt19937_64 rng(11);
  std::map<std::uint64_t, int> counts;
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) ++counts[space.to_index(space.sample_valid(rng))];
  ASSERT_EQ(counts.size(), 10u);
  for (const auto& [index, count] : counts) {
    EXPECT_NEAR(count, draws / 10, 600) << "index " << index;  // ~6 standard deviations
  }
}

TEST(Sampling, SampleValidThrowsWhenNothingIsValid) {
  ConfigSpace space = constrained_space();
  space.add_constraint("never", [](const ConfigView&) { return false; });
  std::mt19937_64 rng(3);
  EXPECT_THROW(space.sample_valid(rng, 500), std::runtime_error);
}

TEST(Sampling, DistinctSamplesAreDistinctAndValid) {
  const ConfigSpace space = constrained_space();
  std::mt19937_64 rng(5);
  const auto samples = space.sample_valid_distinct(rng, 20);
  ASSERT_EQ(samples.size(), 20u);
  std::set<std::uint64_t> indices;
  for (const Config& config : samples) {
    EXPECT_TRUE(space.is_valid(config));
    indices.insert(space.to_index(config));
  }
  EXPECT_EQ(indices.size(), 20u);
}

TEST(Sampling, DistinctSamplesStopAtTheNumberOfValidConfigs) {
  const ConfigSpace space = constrained_space();
  std::mt19937_64 rng(5);
  EXPECT_EQ(space.sample_valid_distinct(rng, 1000).size(), 43u);
}

TEST(Sampling, DistinctSamplesInAHugeSpace) {
  ConfigSpace space;
  for (int i = 0; i < 6; ++i) space.add(IntRangeKnob{"k" + std::to_string(i), 0, 999});
  space.add_constraint("k0 even", [](const ConfigView& v) { return v.integer("k0") % 2 == 0; });
  std::mt19937_64 rng(9);
  const auto samples = space.sample_valid_distinct(rng, 500);
  ASSERT_EQ(samples.size(), 500u);
  for (const Config& config : samples) EXPECT_EQ(config.options[0] % 2, 0u);
}

TEST(Neighbours, AreValidAndDifferInExactlyOneKnobByOneStep) {
  const ConfigSpace space = constrained_space();
  const Config config{{3, 3, 1}};  // tile_m inner 8, tile_n inner 8, vectorize
  const auto neighbours = space.neighbours(config);
  // tile_m 2->ok, 4->16*8 too big; tile_n 2->4 ok, 4->16 too big; vectorize off ok.
  const std::vector<Config> expected = {Config{{2, 3, 1}}, Config{{3, 2, 1}}, Config{{3, 3, 0}}};
  EXPECT_EQ(neighbours, expected);
  for (const Config& n : neighbours) {
    EXPECT_TRUE(space.is_valid(n));
    EXPECT_EQ(differing_knobs(config, n), 1u);
  }
}

TEST(Neighbours, StayInsideTheOptionRange) {
  ConfigSpace space;
  space.add(IntRangeKnob{"a", 0, 2});
  space.add(BoolKnob{"b"});
  EXPECT_EQ(space.neighbours(Config{{0, 0}}),
            (std::vector<Config>{Config{{1, 0}}, Config{{0, 1}}}));
  EXPECT_EQ(space.neighbours(Config{{2, 1}}),
            (std::vector<Config>{Config{{1, 1}}, Config{{2, 0}}}));
}

TEST(Neighbours, RandomNeighbourIsValidAndDiffersInOneKnob) {
  const ConfigSpace space = constrained_space();
  std::mt19937_64 rng(13);
  const Config config{{3, 3, 1}};
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 500; ++i) {
    const Config n = space.random_neighbour(config, rng);
    ASSERT_TRUE(space.is_valid(n));
    ASSERT_EQ(differing_knobs(config, n), 1u);
    seen.insert(space.to_index(n));
  }
  // tile_m inner in {1,2,4} others, tile_n inner in {4} other (>= 4, <= 8), vectorize off.
  EXPECT_EQ(seen.size(), 5u);
}

TEST(Neighbours, RandomNeighbourReturnsConfigWhenNoMoveIsValid) {
  ConfigSpace space;
  space.add(IntRangeKnob{"a", 0, 3});
  space.add_constraint("a is 2", [](const ConfigView& v) { return v.integer("a") == 2; });
  std::mt19937_64 rng(1);
  EXPECT_EQ(space.random_neighbour(Config{{2}}, rng), Config{{2}});
}

}  // namespace
}  // namespace optune::search_space
