// optune replay end to end on small landscape files written here: a Kernel Tuner cache file (plain
// and gzip) and a T4 results file of the same 11 configurations, whose optimum is known.
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include "command_test.hpp"

namespace optune {
namespace {

using test_support::CommandTest;
using test_support::slurp;

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
  auto other = cache_file();
  other["device_name"] = "Other GPU";
  other["tune_params_keys"] = {"a", "c"};
  other["tune_params"]["c"] = other["tune_params"]["b"];
  other["tune_params"].erase("b");
  for (auto& [key, entry] : other["cache"].items()) {
    entry["c"] = entry["b"];
    entry.erase("b");
  }
  expect_bad_input("replay --landscape " + file + " --transfer-from " + write("c.json", other.dump()),
                   "other tunable parameters");
}

TEST_F(ReplayCliTest, TunerNamedTwiceReplaysOnce) {
  const auto file = write("synthetic_A.json", cache_file().dump());
  auto run = optune("replay --landscape " + file + " --tuner grid,grid --seeds 1 --budgets 1 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
}

// Kernel Tuner 1.5 writes `objective` as a list, and a configuration it could not time with its
// failure string in `__error__` and no `time` (InvalidConfig too).
TEST_F(ReplayCliTest, KernelTuner15CacheReplays) {
  auto file = cache_file();
  file["objective"] = {"time"};
  for (const char* key : {"1,2", "8,1"}) {
    auto& entry = file["cache"][key];
    entry["__error__"] = entry["time"];
    entry.erase("time");
  }
  auto run = optune("replay --landscape " + write("kt15.json", file.dump()) + " --tuner grid --seeds 1 --budgets " +
                    std::to_string(kSpaceSize) + " --format json");
  ASSERT_EQ(run.code, 0) << run.err;  // the failed configuration is in the space, the invalid one is not
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(run.out)["fraction"][0].get<double>(), 1.0);
}

// Values nested 100,000 deep overflowed the stack (nlohmann's copies and dumps recurse); a value of
// 100 KB was quoted whole in the message.
TEST_F(ReplayCliTest, DeeplyNestedOrHugeValuesAreBadInputOfOneShortLine) {
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  auto with_deep = [&](const nlohmann::ordered_json& file) {
    std::string text = file.dump();
    return text.replace(text.find("\"DEEP\""), 6, deep);
  };
  auto parameter = cache_file();
  parameter["tune_params"]["b"].push_back("DEEP");
  auto times = cache_file();
  times["cache"]["1,0"]["times"] = "DEEP";
  auto configuration = t4_file();
  configuration["results"][0]["configuration"]["b"] = "DEEP";
  for (const auto& file : {parameter, times, configuration})
    expect_bad_input("replay --landscape " + write("deep.json", with_deep(file)),
                     "deep.json: arrays and objects nested deeper than 64");
  auto huge = cache_file();
  huge["cache"]["1,0"]["a"] = std::string(100000, 'x');
  expect_bad_input("replay --landscape " + write("huge.json", huge.dump()), "is not one of its values");
  EXPECT_LT(optune("replay --landscape " + (dir_ / "huge.json").string()).err.size(), 400u);
}

TEST_F(ReplayCliTest, FieldsOfTheWrongTypeAreBadInputNamingFileAndField) {
  auto device = cache_file();
  device["device_name"] = nullptr;
  expect_bad_input("replay --landscape " + write("device.json", device.dump()), "device.json: 'device_name' is null");
  expect_bad_input("replay --landscape " + write("A.json", cache_file().dump()) + " --transfer-from " +
                       (dir_ / "device.json").string(),
                   "device.json: 'device_name' is null");
  auto kernel = cache_file();
  kernel["kernel_name"] = 5;
  expect_bad_input("replay --landscape " + write("kernel.json", kernel.dump()), "kernel.json: 'kernel_name' is 5");
  auto objective = cache_file();
  objective["objective"] = 3;
  expect_bad_input("replay --landscape " + write("objective.json", objective.dump()),
                   "objective.json: 'objective' is 3");
  auto invalidity = t4_file();
  invalidity["results"][1]["invalidity"] = 5;
  expect_bad_input("replay --landscape " + write("invalidity.json", invalidity.dump()), "result 1: 'invalidity' is 5");
  auto name = t4_file();
  name["results"][0]["measurements"][0]["name"] = 7;
  expect_bad_input("replay --landscape " + write("name.json", name.dump()), "result 0: 'name' is 7");
  std::string overflow = cache_file().dump();
  overflow.replace(overflow.find("\"time\":0.5"), 10, "\"time\":1e400");
  expect_bad_input("replay --landscape " + write("overflow.json", overflow), "overflow.json: not JSON");
}

// A replay minimises the objective: GFLOP/s, which Kernel Tuner maximises, would have been taken for times.
TEST_F(ReplayCliTest, ObjectiveOtherThanTimeIsBadInput) {
  auto cache = cache_file();
  cache["objective"] = "GFLOP/s";
  for (auto& [key, entry] : cache["cache"].items()) {
    const auto& time = entry["time"];
    entry["GFLOP/s"] = time.is_number() ? nlohmann::ordered_json(1 / time.get<double>()) : time;
  }
  expect_bad_input("replay --landscape " + write("gflops.json", cache.dump()), "objective 'GFLOP/s' is not time");
  auto t4 = t4_file();
  for (auto& result : t4["results"]) {
    result["objectives"] = {"GFLOP/s"};
    for (auto& measurement : result["measurements"]) measurement["name"] = "GFLOP/s";
  }
  expect_bad_input("replay --landscape " + write("t4_gflops.json", t4.dump()),
                   "result 0: objective 'GFLOP/s' is not time");
}

// Times are milliseconds from 1e-100 to 1e100, so that 1 / time and one time over another stay
// finite: 5e-324 made the fraction NaN and 1e308 the score infinite.
TEST_F(ReplayCliTest, TimeOutsideTheRangeIsBadInputNamingTheEntry) {
  for (const std::string time : {"5e-324", "1e-310", "1e308", "0", "-1"}) {
    std::string text = cache_file().dump();
    text.replace(text.find("\"time\":0.5"), 10, "\"time\":" + time);
    expect_bad_input("replay --landscape " + write("time.json", text), "cache entry '4,1': 'time' = ");
  }
  // Checked before a T4 file's repeated configuration is passed over.
  auto t4 = t4_file();
  auto repeated = t4["results"][0];
  repeated["measurements"][0]["value"] = 0;
  t4["results"].push_back(repeated);
  expect_bad_input("replay --landscape " + write("t4.json", t4.dump()),
                   "result " + std::to_string(t4["results"].size() - 1) + ": 'time' = 0");
}

// One successful configuration among failed ones: random search's expected best is the optimum
// from the first draw on, so no term of the score is defined. It read 1.0 while grid found nothing.
TEST_F(ReplayCliTest, ScoreWithoutAnyTermIsNullOrDash) {
  auto file = cache_file();
  for (auto& [key, entry] : file["cache"].items())
    if (key != "4,1" && entry["time"].is_number()) entry["time"] = "RuntimeFailedConfig";
  const auto path = write("one_success.json", file.dump());
  auto json = optune("replay --landscape " + path + " --tuner grid --seeds 1 --budgets 1,2 --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto grid = nlohmann::json::parse(json.out);
  EXPECT_EQ(grid["fraction"], nlohmann::json({0.0, 0.0}));
  EXPECT_TRUE(grid["score"].is_null()) << json.out;
  auto table = optune("replay --landscape " + path + " --tuner grid --seeds 1 --budgets 1,2");
  ASSERT_EQ(table.code, 0) << table.err;
  std::stringstream row(table.out.substr(table.out.find("\ngrid") + 1));
  std::vector<std::string> cells;
  for (std::string cell; row >> cell && cells.size() < 7;) cells.push_back(cell);
  ASSERT_EQ(cells.size(), 7u) << table.out;
  EXPECT_EQ(cells[6], "-") << table.out;  // grid, @1, @2, to90%, to95%, to99%, score
}

// Kernel Tuner keys an entry by its values; two entries of one configuration, or tune_params_keys
// naming other parameters than tune_params, say the entries are not what their keys say.
TEST_F(ReplayCliTest, CacheWhoseKeysAndParametersDisagreeIsBadInput) {
  auto duplicate = cache_file();
  duplicate["cache"]["1,0"]["a"] = 4;
  duplicate["cache"]["1,0"]["b"] = 1;
  expect_bad_input("replay --landscape " + write("dup.json", duplicate.dump()),
                   "cache entries '1,0' and '4,1' hold the same configuration");
  auto fewer = cache_file();
  fewer["tune_params_keys"] = {"a"};
  expect_bad_input("replay --landscape " + write("fewer.json", fewer.dump()),
                   "parameter 'b' of 'tune_params' is not in 'tune_params_keys'");
  auto none = cache_file();
  none["tune_params_keys"] = nlohmann::ordered_json::array();
  none["tune_params"] = nlohmann::ordered_json::object();
  expect_bad_input("replay --landscape " + write("none.json", none.dump()), "no tunable parameters");
  auto object = cache_file();
  object["tune_params_keys"] = {{"a", 1}};
  expect_bad_input("replay --landscape " + write("object.json", object.dump()), "'tune_params_keys' is {");
  // A T4 file may repeat a configuration: the first counts.
  auto t4 = t4_file();
  t4["results"].push_back(t4["results"][0]);
  const auto repeated = write("t4.json", t4.dump());
  EXPECT_EQ(optune("replay --landscape " + repeated + " --tuner grid --seeds 1 --budgets 1").code, 0);
}

// A source's parameters match by name, in any order; one that shares no configuration with the
// target was passed over by the model without a word; files without device_name are told apart
// by their names.
TEST_F(ReplayCliTest, TransferSourcesMatchByNameAndMustShareAConfiguration) {
  const auto target = write("synthetic_A.json", cache_file().dump());
  auto swapped = cache_file();
  swapped["device_name"] = "Other GPU";
  swapped["tune_params_keys"] = {"b", "a"};
  auto run = optune("replay --landscape " + target + " --transfer-from " + write("swapped.json", swapped.dump()) +
                    " --tuner xgb,grid --seeds 1 --budgets 3");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("warm-start the model of xgb (not read by grid)"), std::string::npos) << run.out;

  auto other_values = cache_file();
  other_values["device_name"] = "Other GPU";
  other_values["tune_params"]["a"] = {16, 32, 64, 128};
  for (auto& [key, entry] : other_values["cache"].items()) entry["a"] = entry["a"].get<int>() * 16;
  expect_bad_input("replay --landscape " + target + " --transfer-from " + write("values.json", other_values.dump()),
                   "shares no configuration with synthetic_A");
  auto strings = cache_file();
  strings["device_name"] = "Other GPU";
  strings["tune_params"]["b"] = {"0", "1", "2"};
  for (auto& [key, entry] : strings["cache"].items()) entry["b"] = std::to_string(entry["b"].get<int>());
  expect_bad_input("replay --landscape " + target + " --transfer-from " + write("strings.json", strings.dump()),
                   "shares no configuration with synthetic_A");

  auto nameless = cache_file();
  nameless.erase("device_name");
  EXPECT_EQ(optune("replay --landscape " + write("nameless_A.json", nameless.dump()) + " --transfer-from " +
                   write("nameless_B.json", nameless.dump()) + " --seeds 1 --budgets 3")
                .code,
            0);
}

TEST_F(ReplayCliTest, FileNameNotUtf8OrHoldingALineBreakIsReported) {
  const auto latin = write("lat\xe9n.json", cache_file().dump());
  auto run = optune("replay --landscape '" + latin + "' --tuner grid --seeds 1 --budgets 1 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["landscape"], "lat\xEF\xBF\xBDn");  // U+FFFD for the odd byte
  auto broken = cache_file();
  broken["cache"]["1,0"]["time"] = 0;
  expect_bad_input("replay --landscape '" + write("new\nline.json", broken.dump()) + "'", "new\\nline.json");
}

// 100,000 configurations of one parameter took 11 s on a Kernel Tuner cache (ordered JSON inserted
// each key by a linear search, the values were checked for duplicates pair by pair) and longer on
// a T4 file (each parameter's distinct values found by a linear search); now under a second.
TEST_F(ReplayCliTest, LandscapeOfOneHundredThousandConfigurationsLoadsInSeconds) {
  constexpr int kConfigs = 100000;
  nlohmann::json values = nlohmann::json::array(), cache = nlohmann::json::object(), results = nlohmann::json::array();
  for (int i = 0; i < kConfigs; ++i) {
    const double time = 1.0 + (i * 7919 % kConfigs);
    values.push_back(i);
    cache[std::to_string(i)] = {{"p", i}, {"time", time}};
    results.push_back({{"configuration", {{"p", i}}},
                       {"invalidity", "correct"},
                       {"measurements", {{{"name", "time"}, {"value", time}, {"unit", "ms"}}}}});
  }
  const nlohmann::json kernel_tuner = {{"tune_params_keys", {"p"}}, {"tune_params", {{"p", values}}}, {"cache", cache}};
  const nlohmann::json t4 = {{"results", results}};
  for (const auto& file : {write("big_kt.json", kernel_tuner.dump()), write("big_t4.json", t4.dump())}) {
    const auto start = std::chrono::steady_clock::now();
    auto run = optune("replay --landscape " + file + " --tuner grid --seeds 1 --budgets 1 --format json");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_LT(seconds, 5.0) << file;
  }
}

TEST_F(ReplayCliTest, EndlessOrTruncatedInputIsBadInput) {
  expect_bad_input("replay --landscape /dev/zero", "larger than 1 GiB");
  const auto whole = slurp(write_gzip("whole.json.gz", cache_file().dump()));
  expect_bad_input("replay --landscape " + write("cut.json.gz", whole.substr(0, whole.size() / 2)), "truncated");
}

}  // namespace
}  // namespace optune
