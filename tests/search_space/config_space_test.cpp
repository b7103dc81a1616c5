// ConfigSpace: knob registration, sizes, mixed-radix indexing, permutations and views.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

// 2 * 18 * 3 * 100000 * 1000 * 120 * 11 = 1.4256e13 points.
ConfigSpace space_above_ten_to_twelve() {
  ConfigSpace space;
  space.add(BoolKnob{"vectorize"});
  space.add(SplitKnob{.name = "tile_m", .extent = 12, .num_outputs = 3});
  space.add(ChoiceKnob{"layout", {"nn", "nt", "tn"}});
  space.add(IntRangeKnob{"unroll", 0, 99999});
  space.add(IntRangeKnob{"prefetch", -5000, 4990, 10});
  space.add(PermutationKnob{"order", {"m", "n", "k", "mr", "nr"}});
  space.add(SplitKnob{.name = "tile_k", .extent = 1024, .num_outputs = 2,
                      .policy = SplitPolicy::kPowerOfTwo});
  return space;
}

void expect_random_indices_round_trip(const ConfigSpace& space, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> draw(0, space.size() - 1);
  std::vector<std::uint64_t> indices = {0, 1, space.size() - 1};
  for (int i = 0; i < 2000; ++i) indices.push_back(draw(rng));
  for (std::uint64_t index : indices) {
    const Config config = space.from_index(index);
    ASSERT_EQ(config.options.size(), space.knobs().size());
    for (std::size_t k = 0; k < config.options.size(); ++k) {
      ASSERT_LT(config.options[k], space.option_count(k));
    }
    ASSERT_EQ(space.to_index(config), index);
  }
}

TEST(ConfigSpace, SizeIsProductOfOptionCounts) {
  const ConfigSpace space = space_above_ten_to_twelve();
  EXPECT_EQ(space.option_count(0), 2u);
  EXPECT_EQ(space.option_count(1), 18u);
  EXPECT_EQ(space.option_count(4), 1000u);
  EXPECT_EQ(space.option_count(5), 120u);
  EXPECT_EQ(space.option_count(6), 11u);
  EXPECT_EQ(space.option_count(3), 100000u);
  EXPECT_EQ(space.size(), 2ull * 18 * 3 * 100000 * 1000 * 120 * 11);
}

TEST(ConfigSpace, RandomIndicesRoundTripAboveTenToTheTwelve) {
  const ConfigSpace space = space_above_ten_to_twelve();
  ASSERT_GT(space.size(), 1'000'000'000'000ull);
  expect_random_indices_round_trip(space, 1);
}

TEST(ConfigSpace, RandomIndicesRoundTripAboveTenToTheFifteen) {
  ConfigSpace space = space_above_ten_to_twelve();
  space.add(IntRangeKnob{"threads", 1, 16});
  space.add(PermutationKnob{"outer_order", {"a", "b", "c"}});
  ASSERT_GT(space.size(), 1'000'000'000'000'000ull);
  expect_random_indices_round_trip(space, 2);
}

TEST(ConfigSpace, FirstKnobIsLeastSignificantDigit) {
  ConfigSpace space;
  space.add(IntRangeKnob{"a", 0, 2});  // radix 3
  space.add(IntRangeKnob{"b", 0, 4});  // radix 5
  space.add(BoolKnob{"c"});            // radix 2
  EXPECT_EQ(space.from_index(0).options, (std::vector<std::uint32_t>{0, 0, 0}));
  EXPECT_EQ(space.from_index(1).options, (std::vector<std::uint32_t>{1, 0, 0}));
  EXPECT_EQ(space.from_index(3).options, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(space.from_index(2 + 3 * 4 + 15).options, (std::vector<std::uint32_t>{2, 4, 1}));
  EXPECT_EQ(space.to_index(Config{{2, 4, 1}}), 29u);
}

TEST(ConfigSpace, IndexOutsideSpaceIsRejected) {
  ConfigSpace space;
  space.add(IntRangeKnob{"a", 0, 2});
  EXPECT_THROW(space.from_index(3), std::out_of_range);
  EXPECT_THROW(space.to_index(Config{{3}}), std::out_of_range);
  EXPECT_THROW(space.to_index(Config{{0, 0}}), std::out_of_range);
}

TEST(ConfigSpace, SizePastTwoToTheSixtyFourThrowsOverflow) {
  ConfigSpace space;
  for (int i = 0; i < 4; ++i) space.add(IntRangeKnob{"k" + std::to_string(i), 0, 65535});
  EXPECT_THROW(space.size(), std::overflow_error);  // exactly 2^64 does not fit either
  ConfigSpace fits;
  for (int i = 0; i < 3; ++i) fits.add(IntRangeKnob{"k" + std::to_string(i), 0, 65535});
  fits.add(IntRangeKnob{"last", 0, 65534});
  EXPECT_EQ(fits.size(), 65536ull * 65536 * 65536 * 65535);
  EXPECT_EQ(fits.to_index(fits.from_index(fits.size() - 1)), fits.size() - 1);
}

TEST(ConfigSpace, DuplicateKnobNameIsRejected) {
  ConfigSpace space;
  space.add(BoolKnob{"unroll"});
  EXPECT_THROW(space.add(IntRangeKnob{"unroll", 0, 4}), std::invalid_argument);
  EXPECT_EQ(space.knobs().size(), 1u);
  EXPECT_EQ(space.knob_index("unroll"), 0u);
  EXPECT_THROW(space.knob_index("missing"), std::out_of_range);
}

TEST(ConfigSpace, KnobsWithoutOptionsAreRejected) {
  ConfigSpace space;
  EXPECT_THROW(space.add(ChoiceKnob{"empty", {}}), std::invalid_argument);
  EXPECT_THROW(space.add(ChoiceKnob{"twice", {"a", "a"}}), std::invalid_argument);
  EXPECT_THROW(space.add(IntRangeKnob{"backwards", 5, 4}), std::invalid_argument);
  EXPECT_THROW(space.add(IntRangeKnob{"still", 0, 4, 0}), std::invalid_argument);
  EXPECT_THROW(space.add(PermutationKnob{"none", {}}), std::invalid_argument);
  EXPECT_THROW(space.add(BoolKnob{""}), std::invalid_argument);
  EXPECT_TRUE(space.knobs().empty());
}

// A measured landscape's parameter may hold 100,000 values (optune replay --landscape): checked
// pair by pair they took seconds; sorted, milliseconds. A duplicate far from its twin is still found.
TEST(KnobOptions, ValuesKnobOfTwoHundredThousandValuesIsCheckedInMilliseconds) {
  ValuesKnob knob{"p", {}};
  for (int i = 0; i < 200000; ++i) knob.values.push_back(i);
  ConfigSpace space;
  const auto start = std::chrono::steady_clock::now();
  space.add(knob);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  knob.values.back() = 0;
  EXPECT_THROW(ConfigSpace().add(knob), std::invalid_argument);
}

TEST(ConfigSpace, PermutationOfFiveFollowsNextPermutationOrder) {
  const std::vector<std::string> items = {"a", "b", "c", "d", "e"};
  ConfigSpace space;
  space.add(PermutationKnob{"order", items});
  ASSERT_EQ(space.option_count(0), 120u);
  std::vector<std::string> expected = items;
  for (std::uint32_t option = 0; option < 120; ++option) {
    const Config config{{option}};
    ASSERT_EQ(ConfigView(space, config).permutation("order"), expected) << "option " << option;
    const bool more = std::next_permutation(expected.begin(), expected.end());
    ASSERT_EQ(more, option + 1 < 120);
  }
}

TEST(ConfigSpace, PermutationIndexesTwelveItemsWithoutEnumerating) {
  std::vector<std::string> items;
  for (char c = 'a'; c < 'a' + 12; ++c) items.emplace_back(1, c);
  ConfigSpace space;
  space.add(PermutationKnob{"order", items});
  EXPECT_EQ(space.option_count(0), 479001600u);  // 12!
  std::vector<std::string> reversed(items.rbegin(), items.rend());
  EXPECT_EQ(ConfigView(space, Config{{479001599u}}).permutation("order"), reversed);
  std::vector<std::string> second = items;
  std::swap(second[10], second[11]);
  EXPECT_EQ(ConfigView(space, Config{{1u}}).permutation("order"), second);
}

TEST(ConfigSpace, PermutationTooLargeForConfigIndexIsRejected) {
  std::vector<std::string> items;
  for (char c = 'a'; c < 'a' + 13; ++c) items.emplace_back(1, c);
  ConfigSpace space;
  EXPECT_THROW(space.add(PermutationKnob{"order", items}), std::invalid_argument);
}

TEST(ConfigView, ReadsEachKindOfValue) {
  const ConfigSpace space = space_above_ten_to_twelve();
  // tile_m option 7 is {3, 2, 2}; prefetch option 3 is -5000 + 30.
  const Config config{{1, 7, 2, 42, 3, 119, 4}};
  const ConfigView view(space, config);
  EXPECT_TRUE(view.flag("vectorize"));
  EXPECT_EQ(view.split("tile_m"), (SplitValue{3, 2, 2}));
  EXPECT_EQ(view.split_factor("tile_m", 1), 2);
  EXPECT_EQ(view.split("tile_k"), (SplitValue{64, 16}));
  EXPECT_EQ(view.choice("layout"), "tn");
  EXPECT_EQ(view.integer("unroll"), 42);
  EXPECT_EQ(view.integer("prefetch"), -4970);
  EXPECT_EQ(view.permutation("order"), (PermutationValue{"nr", "mr", "k", "n", "m"}));
}

TEST(ConfigView, WrongKindOrNameThrows) {
  const ConfigSpace space = space_above_ten_to_twelve();
  const Config config = space.from_index(0);
  const ConfigView view(space, config);
  EXPECT_THROW(view.split("layout"), std::invalid_argument);
  EXPECT_THROW(view.integer("vectorize"), std::invalid_argument);
  EXPECT_THROW(view.choice("nope"), std::out_of_range);
  EXPECT_THROW(view.split_factor("tile_m", 3), std::out_of_range);
  EXPECT_TRUE(view.has("layout"));
  EXPECT_FALSE(view.has("nope"));
}

TEST(ConfigHash, DistinguishesConfigsThatDifferInOneKnob) {
  const ConfigHash hash;
  EXPECT_EQ(hash(Config{{1, 2, 3}}), hash(Config{{1, 2, 3}}));
  EXPECT_NE(hash(Config{{1, 2, 3}}), hash(Config{{1, 2, 4}}));
  EXPECT_NE(hash(Config{{1, 2, 3}}), hash(Config{{2, 1, 3}}));
}

}  // namespace
}  // namespace optune::search_space
