// The JSON form of configs and spaces: values by knob name, stable across knob order.
#include <gtest/gtest.h>

#include <random>

#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

using nlohmann::json;

ConfigSpace gemm_space() {
  ConfigSpace space;
  space.add(SplitKnob{.name = "tile_m", .extent = 12, .num_outputs = 3});
  space.add(ChoiceKnob{"layout", {"nn", "nt"}});
  space.add(BoolKnob{"vectorize"});
  space.add(IntRangeKnob{"unroll", 0, 16, 4});
  space.add(PermutationKnob{"order", {"m", "n", "k"}});
  return space;
}

// The same knobs declared in another order, plus a knob a later version added.
ConfigSpace reordered_gemm_space() {
  ConfigSpace space;
  space.add(PermutationKnob{"order", {"m", "n", "k"}});
  space.add(IntRangeKnob{"unroll", 0, 16, 4});
  space.add(BoolKnob{"vectorize"});
  space.add(ChoiceKnob{"layout", {"nn", "nt"}});
  space.add(SplitKnob{.name = "tile_m", .extent = 12, .num_outputs = 3});
  return space;
}

TEST(ConfigJson, ValuesNotIndices) {
  const ConfigSpace space = gemm_space();
  // tile_m option 8 is {2, 2, 3}; unroll option 2 is 8; order option 3 is n, k, m.
  const json expected = json::parse(R"({
    "tile_m": [2, 2, 3], "layout": "nt", "vectorize": true, "unroll": 8, "order": ["n", "k", "m"]
  })");
  EXPECT_EQ(space.to_json(Config{{8, 1, 1, 2, 3}}), expected);
}

TEST(ConfigJson, RoundTripsEveryConfig) {
  const ConfigSpace space = gemm_space();
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Config config = space.from_index(i);
    ASSERT_EQ(space.from_json(space.to_json(config)), config) << space.to_json(config).dump();
  }
}

TEST(ConfigJson, SurvivesReorderedKnobs) {
  const ConfigSpace original = gemm_space();
  const ConfigSpace reordered = reordered_gemm_space();
  std::mt19937_64 rng(4);
  for (int i = 0; i < 100; ++i) {
    const Config config = original.sample_valid(rng);
    const json stored = original.to_json(config);
    const Config read = reordered.from_json(stored);
    EXPECT_EQ(reordered.to_json(read), stored);
    const ConfigView before(original, config);
    const ConfigView after(reordered, read);
    EXPECT_EQ(after.split("tile_m"), before.split("tile_m"));
    EXPECT_EQ(after.permutation("order"), before.permutation("order"));
    EXPECT_EQ(after.integer("unroll"), before.integer("unroll"));
  }
  EXPECT_EQ(reordered.from_json(original.to_json(Config{{8, 1, 1, 2, 3}})),
            (Config{{3, 2, 1, 1, 8}}));
}

TEST(ConfigJson, DumpIsStableText) {
  const ConfigSpace space = gemm_space();
  EXPECT_EQ(space.to_json(Config{{0, 0, 0, 0, 0}}).dump(),
            R"({"layout":)"
            R"("nn","order":["m","n","k"],"tile_m":[12,1,1],"unroll":0,"vectorize":false})");
}

std::string from_json_error(const ConfigSpace& space, const json& config) {
  try {
    space.from_json(config);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no error";
}

TEST(ConfigJson, MissingKnobIsNamed) {
  const ConfigSpace space = gemm_space();
  json config = space.to_json(space.from_index(0));
  config.erase("unroll");
  EXPECT_NE(from_json_error(space, config).find("'unroll'"), std::string::npos);
  EXPECT_NE(from_json_error(space, config).find("missing"), std::string::npos);
}

// A knob added later with the value that means the older schedule: configs stored before it
// existed read as that value, and a value outside the options is still refused.
TEST(ConfigJson, KnobAddedLaterReadsItsAbsentValueFromOlderConfigs) {
  const ConfigSpace older = gemm_space();
  ConfigSpace newer = gemm_space();
  newer.add(ChoiceKnob{"splitk", {"1", "2", "4"}});
  newer.read_missing_as("splitk", "1");
  const json stored = older.to_json(Config{{8, 1, 1, 2, 3}});
  const Config read = newer.from_json(stored);
  EXPECT_EQ(ConfigView(newer, read).choice("splitk"), "1");
  EXPECT_EQ(newer.to_json(read), [&] { json j = stored; j["splitk"] = "1"; return j; }());
  json wrong = stored;
  wrong["splitk"] = "3";
  EXPECT_NE(from_json_error(newer, wrong).find("'splitk'"), std::string::npos);
  EXPECT_NE(from_json_error(older, stored).find("no error"), std::string::npos);
  EXPECT_THROW(newer.read_missing_as("tile_z", "1"), std::invalid_argument);
}

TEST(ConfigJson, UnknownKnobIsAnError) {
  const ConfigSpace space = gemm_space();
  json config = space.to_json(space.from_index(0));
  config["tile_z"] = json::array({1, 1});
  EXPECT_NE(from_json_error(space, config).find("unknown knob 'tile_z'"), std::string::npos);
}

TEST(ConfigJson, InvalidValuesNameTheKnob) {
  const ConfigSpace space = gemm_space();
  const json valid = space.to_json(space.from_index(0));
  const std::vector<std::pair<std::string, json>> bad = {
      {"tile_m", json::array({5, 1, 1})},     // 5 does not divide 12
      {"tile_m", json::array({12, 1})},       // wrong number of factors
      {"tile_m", json::array({6, 1, 1})},     // outer factor inconsistent with inner ones
      {"tile_m", "12x1x1"},
      {"layout", "tt"},
      {"layout", 1},
      {"vectorize", 1},
      {"unroll", 5},                          // not on the step
      {"unroll", 20},                         // past hi
      {"unroll", 4.5},
      {"order", json::array({"m", "m", "k"})},
      {"order", json::array({"m", "n"})},
      {"order", json::array({"m", "n", "x"})},
  };
  for (const auto& [knob, value] : bad) {
    json config = valid;
    config[knob] = value;
    EXPECT_NE(from_json_error(space, config).find("'" + knob + "'"), std::string::npos)
        << knob << " = " << value.dump() << ": " << from_json_error(space, config);
  }
  EXPECT_THROW(space.from_json(json::array()), std::invalid_argument);
}

TEST(ConfigJson, DescribeListsKnobsWithKindCountAndPreview) {
  ConfigSpace space = gemm_space();
  space.add(IntRangeKnob{"threads", 1, 100});
  const json described = space.describe();
  ASSERT_EQ(described.size(), 6u);
  EXPECT_EQ(described[0]["name"], "tile_m");
  EXPECT_EQ(described[0]["kind"], "split");
  EXPECT_EQ(described[0]["option_count"], 18);
  EXPECT_EQ(described[0]["policy"], "divisors");
  EXPECT_EQ(described[0]["preview"][1], json::array({6, 1, 2}));
  EXPECT_EQ(described[1]["kind"], "choice");
  EXPECT_EQ(described[1]["preview"], json::array({"nn", "nt"}));
  EXPECT_EQ(described[2]["kind"], "bool");
  EXPECT_EQ(described[2]["preview"], json::array({false, true}));
  EXPECT_EQ(described[3]["kind"], "int");
  EXPECT_EQ(described[3]["preview"], json::array({0, 4, 8, 12, 16}));
  EXPECT_EQ(described[4]["kind"], "permutation");
  EXPECT_EQ(described[4]["option_count"], 6);
  EXPECT_EQ(described[5]["option_count"], 100);
  EXPECT_EQ(described[5]["preview"].size(), 16u);
  EXPECT_EQ(described[5]["preview"][15], 16);
}

}  // namespace
}  // namespace optune::search_space

namespace optune::search_space {
namespace {

TEST(ConfigJson, ValuesKnobReadsAndWritesNumbers) {
  ConfigSpace space;
  space.add(ValuesKnob{"block_size_x", {16, 32, 48}});
  space.add(ValuesKnob{"scale", {0.5, 1.5}});
  Config config{{2, 0}};
  const json written = space.to_json(config);
  EXPECT_EQ(written.dump(), R"({"block_size_x":48,"scale":0.5})");
  EXPECT_EQ(space.from_json(written), config);
  EXPECT_EQ(space.from_json(json{{"block_size_x", 48.0}, {"scale", 0.5}}), config);  // 48.0 is 48
  EXPECT_THROW(space.from_json(json{{"block_size_x", 40}, {"scale", 0.5}}), std::invalid_argument);
  EXPECT_EQ(space.describe()[0]["kind"], "values");
  EXPECT_DOUBLE_EQ(ConfigView(space, config).number("scale"), 0.5);
  EXPECT_THROW(space.add(ValuesKnob{"empty", {}}), std::invalid_argument);
  EXPECT_THROW(space.add(ValuesKnob{"twice", {1, 1}}), std::invalid_argument);
}

}  // namespace
}  // namespace optune::search_space
