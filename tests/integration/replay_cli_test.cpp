// optune replay end to end on small landscape files written here: a Kernel Tuner cache file (plain
// and gzip) and a T4 results file of the same 11 configurations, whose optimum is known.
#include <zlib.h>

#include <set>

#include <nlohmann/json.hpp>

#include "command_test.hpp"

namespace optune {
namespace {

using test_support::CommandTest;

// a in {1, 2, 4, 8}, b in {0, 1, 2}: 12 combinations, of which the kernel's restrictions removed
// (8, 2) (absent) and (8, 1) (InvalidConfig); (1, 2) failed to compile. The optimum is (4, 1).
constexpr double kOptimum = 0.5;
nlohmann::ordered_json cache_file() {
  nlohmann::ordered_json file = {{"device_name", "Synthetic GPU"},
                                 {"kernel_name", "synthetic_kernel"},
                                 {"problem_size", {64, 64}},
                                 {"tune_params_keys", {"a", "b"}},
                                 {"tune_params", {{"a", {1, 2, 4, 8}}, {"b", {0, 1, 2}}}},
                                 {"objective", "time"},
                                 {"cache", nlohmann::ordered_json::object()}};
  for (int a : {1, 2, 4, 8})
    for (int b : {0, 1, 2}) {
      if (a == 8 && b == 2) continue;
      nlohmann::ordered_json entry = {{"a", a}, {"b", b}};
      if (a == 8 && b == 1) entry["time"] = "InvalidConfig";
      else if (a == 1 && b == 2) entry["time"] = "CompilationFailedConfig";
      else entry["time"] = a == 4 && b == 1 ? kOptimum : 1.0 + a * 0.1 + b * 0.01;
      file["cache"][std::to_string(a) + "," + std::to_string(b)] = entry;
    }
  return file;
}
constexpr int kSpaceSize = 10;  // 12 - absent - InvalidConfig, the failed one included

nlohmann::ordered_json t4_file() {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  const auto cache = cache_file();
  for (const auto& [key, entry] : cache["cache"].items()) {
    nlohmann::ordered_json result = {{"configuration", {{"a", entry["a"]}, {"b", entry["b"]}}},
                                     {"objectives", {"time"}}};
    if (entry["time"].is_number()) {
      result["invalidity"] = "correct";
      result["measurements"] = {{{"name", "time"}, {"value", entry["time"]}, {"unit", "ms"}}};
    } else {
      result["invalidity"] = entry["time"] == "InvalidConfig" ? "constraints" : "compile";
      result["measurements"] = nlohmann::ordered_json::array();
    }
    results.push_back(result);
  }
  return {{"schema_version", "1.0.0"}, {"results", results}};
}

class ReplayCliTest : public CommandTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::string write_gzip(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    gzFile file = gzopen(path.c_str(), "wb");
    gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
    gzclose(file);
    return path.string();
  }
};

TEST_F(ReplayCliTest, GridAtFullBudgetFindsTheKnownOptimum) {
  const auto file = write("synthetic_A.json", cache_file().dump());
  auto run = optune("replay --landscape " + file + " --tuner grid,random --seeds 3 --budgets 1," +
                    std::to_string(kSpaceSize) + " --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  std::stringstream lines(run.out);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  auto grid = nlohmann::json::parse(line);
  EXPECT_EQ(grid["landscape"], "synthetic_A");
  EXPECT_EQ(grid["tuner"], "grid");
  EXPECT_EQ(grid["seeds"], 3);
  EXPECT_EQ(grid["budgets"], nlohmann::json({1, kSpaceSize}));
  EXPECT_DOUBLE_EQ(grid["fraction"][1].get<double>(), 1.0);
  EXPECT_TRUE(grid["evals_to"].contains("0.95"));
  EXPECT_TRUE(grid["evals_to"]["0.99"].is_number());
  EXPECT_TRUE(grid.contains("score"));
  ASSERT_TRUE(std::getline(lines, line));
  auto random = nlohmann::json::parse(line);
  EXPECT_DOUBLE_EQ(random["fraction"][1].get<double>(), 1.0);  // every config, in any order
}

TEST_F(ReplayCliTest, TableSaysNothingIsMeasuredAndNamesTheOptimum) {
  const auto file = write_gzip("synthetic_A.json.gz", cache_file().dump());
  auto run = optune("replay --landscape " + file + " --tuner xgb --seeds 2 --budgets 5,10");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("nothing is measured"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("10 configurations, optimum 0.5"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("xgb"), std::string::npos) << run.out;
}

TEST_F(ReplayCliTest, T4ResultsFileReplaysLikeTheCacheFile) {
  const auto file = write("synthetic_t4.json", t4_file().dump());
  auto run = optune("replay --landscape " + file + " --tuner grid --seeds 1 --budgets 10 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  auto grid = nlohmann::json::parse(run.out);
  EXPECT_DOUBLE_EQ(grid["fraction"][0].get<double>(), 1.0);
  EXPECT_TRUE(grid["evals_to"]["0.99"].is_number());
}

TEST_F(ReplayCliTest, FirstSeedPicksAnotherSetOfSeeds) {
  // Random search's first draw, one seed at a time: seeds 1..6 do not all draw the same config of
  // ten (they would if --first-seed were ignored), and a seed replays the same every time.
  const auto file = write("synthetic_A.json", cache_file().dump());
  std::set<std::string> first_draws;
  for (int seed = 1; seed <= 6; ++seed) {
    const std::string command = "replay --landscape " + file + " --tuner random --seeds 1 --first-seed " +
                                std::to_string(seed) + " --budgets 1 --format json";
    auto run = optune(command);
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(optune(command).out, run.out);
    first_draws.insert(nlohmann::json::parse(run.out)["fraction"].dump());
  }
  EXPECT_GT(first_draws.size(), 1u);
}

TEST_F(ReplayCliTest, TransferFromAnotherDeviceRuns) {
  const auto target = write("synthetic_A.json", cache_file().dump());
  auto other = cache_file();
  other["device_name"] = "Other GPU";
  const auto source = write("synthetic_B.json", other.dump());
  auto run = optune("replay --landscape " + target + " --transfer-from " + source +
                    " --tuner xgb --seeds 2 --budgets 3 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tuner"], "xgb");
}

TEST_F(ReplayCliTest, MalformedLandscapeFileGetsExitTwoWithOneLine) {
  expect_bad_input("replay --landscape " + write("broken.json", "{\"cache\": {"), "not JSON");
  expect_bad_input("replay --landscape " + (dir_ / "missing.json").string(), "cannot open");
  auto wrong_value = cache_file();
  wrong_value["cache"]["1,0"]["a"] = 3;
  expect_bad_input("replay --landscape " + write("wrong.json", wrong_value.dump()), "not one of its values");
  expect_bad_input("replay --landscape " + write("neither.json", "{\"x\": 1}"), "neither a Kernel Tuner cache");
  auto no_params = cache_file();
  no_params.erase("tune_params");
  expect_bad_input("replay --landscape " + write("no_params.json", no_params.dump()), "tune_params");
}

TEST_F(ReplayCliTest, BadOptionsGetExitTwoWithOneLine) {
  const auto file = write("synthetic_A.json", cache_file().dump());
  expect_bad_input("replay --landscape " + file + " --budgets 5,x", "--budgets");
  expect_bad_input("replay --landscape " + file + " --budgets 11", "exceeds");
  expect_bad_input("replay --landscape " + file + " --tuner nope", "unknown tuner");
  expect_bad_input("replay --landscape " + file + " --first-seed 0", "--first-seed");
  auto other = nlohmann::ordered_json::parse(cache_file().dump());
  other["tune_params_keys"] = {"b", "a"};
  expect_bad_input("replay --landscape " + file + " --transfer-from " + write("b.json", other.dump()),
                   "other tunable parameters");
}

}  // namespace
}  // namespace optune
