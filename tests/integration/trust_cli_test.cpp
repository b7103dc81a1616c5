// Numbers to trust on a busy machine (issue 37), end to end through the optune command: records
// taken while this test loads every core are marked noisy, the progress line and the summary say
// so. Real worker processes, real busy processes, real SQLite files; no timing is asserted beyond
// generous hang bounds.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "../support/busy_processes.hpp"
#include "../support/job_command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::BusyProcesses;
using optune::test_support::CommandRun;

class TrustCliTest : public optune::test_support::JobCommandTest {
 protected:
  // A kernel file whose default (WORK = 4, its knobs' first values) does four passes where the
  // other config does one: the tuned config is about 4x faster, whatever the machine.
  fs::path write_work_kernel() {
    std::ofstream(dir_ / "work.cpp")
        << "#include <cstdint>\n"
           "extern \"C\" void work(const float* x, float* y, std::int32_t n) {\n"
           "  for (int pass = 0; pass < WORK; ++pass) {\n"
           "    for (std::int32_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n"
           "    asm volatile(\"\" ::: \"memory\");  // each pass is done, not folded into one\n"
           "  }\n"
           "}\n"
           "extern \"C\" void work_reference(const float* x, float* y, std::int32_t n) {\n"
           "  for (std::int32_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n"
           "}\n";
    std::ofstream(dir_ / "work.toml")
        << "name = \"work\"\nbackend = \"cpu\"\nsource = \"work.cpp\"\nentry = \"work\"\nbuild_options = [\"-O2\"]\n"
           "flops = \"2 * N\"\nargs = [\n"
           "  { name = \"x\", kind = \"buffer\", dtype = \"f32\", count = \"N\" },\n"
           "  { name = \"y\", kind = \"buffer\", dtype = \"f32\", count = \"N\", output = true },\n"
           "  { name = \"n\", kind = \"scalar\", dtype = \"i32\", value = \"N\" },\n]\n"
           "[extents]\nN = 65536\n[knobs]\nWORK = [4, 1]\n"
           "[check]\nreference = \"work_reference\"\nrtol = 1e-6\natol = 1e-6\n";
    return dir_ / "work.toml";
  }

  std::string tune_work(const std::string& extra) {
    return "tune --kernel " + write_work_kernel().string() + " --target cpu --tuner grid --trials 1 --repeat 3 "
           "--min-repeat-ms 20 --db " + db() + " " + extra;
  }
};

TEST_F(TrustCliTest, ABusyMachineMarksItsRecordsNoisyAndTheRunSaysSo) {
  CommandRun run;
  {
    BusyProcesses busy;  // a busy loop on every core, for the whole run
    run = optune(tune_work("--remeasure 0"));
  }
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::size_t noisy = 0, measured = 0;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({})) {
    if (!record.ok()) continue;
    ++measured;
    ASSERT_TRUE(record.load.has_value()) << "the load beside the worker is read on Linux";
    EXPECT_GT(*record.load, optune::db::kBusyLoad) << "other processes took the cores";
    noisy += record.is_noisy();
  }
  EXPECT_EQ(measured, 2u);
  EXPECT_EQ(noisy, measured);
  EXPECT_NE(run.err.find("noisy 1"), std::string::npos) << "the progress line says so\n" << run.err;
  EXPECT_NE(run.err.find("machine busy"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("noise      1 of 1 trial measured while the machine was busy"), std::string::npos) << run.out;

  CommandRun query = optune("query --db " + db());
  EXPECT_NE(query.out.find(" ok noisy "), std::string::npos) << query.out;
  CommandRun json = optune("query --format json --db " + db());
  const auto records = nlohmann::json::parse(json.out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0]["noisy"].get<bool>()) << records[0].dump();
  EXPECT_GT(records[0]["load"].get<double>(), optune::db::kBusyLoad);
  EXPECT_TRUE(records[0]["spread"].is_number());
}

TEST_F(TrustCliTest, TheSpeedupComesFromAnInterleavedFinalComparison) {
  CommandRun run = optune(tune_work("--format json --quiet"));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto outcome = nlohmann::json::parse(run.out);
  const auto& comparison = outcome["comparison"];
  ASSERT_TRUE(comparison.is_object()) << outcome.dump(2);
  EXPECT_GE(comparison["rounds"].get<int>(), 5);
  EXPECT_LE(comparison["rounds"].get<int>(), 11);
  std::set<std::string> roles;
  for (const auto& finalist : comparison["finalists"]) roles.insert(finalist["role"].get<std::string>());
  EXPECT_EQ(roles, (std::set<std::string>{"default", "best"})) << comparison.dump(2);
  EXPECT_EQ(outcome["speedup_source"], "final comparison");
  // Four passes against one: the tuned config is faster beyond noise, whatever the machine does.
  const auto& interval = outcome["speedup_interval"];
  ASSERT_TRUE(interval.is_array()) << outcome.dump(2);
  EXPECT_GT(interval[0].get<double>(), 1.0) << outcome.dump(2);
  EXPECT_EQ(outcome["best"]["config"]["WORK"], 1);
  if (outcome["speedup"].is_number()) {
    EXPECT_TRUE(outcome["unreliable"].is_null());
    EXPECT_LE(interval[0].get<double>(), outcome["speedup"].get<double>());
    EXPECT_GE(interval[1].get<double>(), outcome["speedup"].get<double>());
  } else {
    EXPECT_EQ(outcome["unreliable"].get<std::string>().rfind("the machine was busy", 0), 0u) << outcome.dump(2);
  }
  // Each finalist's rounds are one record, tuner "final", the winner marked; it is the best query gives.
  std::size_t finals = 0, winners = 0;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({})) {
    if (record.tuner != "final") continue;
    ++finals;
    winners += record.winner;
    EXPECT_EQ(record.costs.size(), 3u * comparison["rounds"].get<std::size_t>()) << "3 repeats a round";
    if (record.winner) EXPECT_EQ(record.config["WORK"], 1);
  }
  EXPECT_EQ(finals, 2u);
  // Marked only where the machine was quiet enough to believe the rounds.
  const bool busy = comparison["load"].is_number() && comparison["load"].get<double>() > optune::db::kBusyLoad;
  EXPECT_EQ(winners, busy ? 0u : 1u) << comparison.dump(2);
  const auto top = nlohmann::json::parse(optune("query --format json --db " + db()).out);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0]["config"], outcome["best"]["config"]);
  EXPECT_DOUBLE_EQ(top[0]["median_seconds"].get<double>(), outcome["best"]["median_seconds"].get<double>());
}

TEST_F(TrustCliTest, ABusyMachineMakesTheSummarySayUnreliableInsteadOfANumber) {
  CommandRun run;
  {
    BusyProcesses busy;
    run = optune(tune_work(""));
  }
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("speed-up unreliable: the machine was busy (other processes took"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("speed-up 4"), std::string::npos) << run.out;
  // The noisy trials that might be the best without the noise joined the closing re-measurement
  // (the machine stayed busy: they came out noisy again, and the summary counts them).
  EXPECT_NE(run.out.find("joined the closing re-measurement: "), std::string::npos) << run.out;
  std::set<std::string> noisy_trials, remeasured;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({})) {
    EXPECT_FALSE(record.winner) << "no winner is declared on a busy machine";
    if (record.ok() && record.is_noisy() && !record.is_remeasurement()) noisy_trials.insert(record.config_text());
    if (record.tuner == "remeasure") remeasured.insert(record.config_text());
  }
  ASSERT_FALSE(noisy_trials.empty());
  std::size_t noisy_remeasured = 0;
  for (const auto& config : noisy_trials) noisy_remeasured += remeasured.count(config);
  EXPECT_GE(noisy_remeasured, 1u) << "the fastest noisy config is a contender by its own slack";
}

// Records of the two best configs of the database's one task, ahead of every record: the first at
// `first` times the fastest median recorded, marked as the winner of a final comparison, the second
// measured after it at `second` times; both known to +-3%, on a quiet machine.
void plant_pair(const std::string& path, double first, double second) {
  auto database = Database::open(path);
  std::vector<optune::db::TuningRecord> records;
  for (const auto& record : database.top_k({}, 2)) records.push_back(record);
  ASSERT_EQ(records.size(), 2u);
  const double fastest = std::min(records[0].median_seconds, records[1].median_seconds);
  const double first_median = first * fastest, second_median = second * fastest;
  double timestamp = 0;
  for (const auto& record : database.records({})) timestamp = std::max(timestamp, record.timestamp);
  auto planted = [&](optune::db::TuningRecord record, double median, double at) {
    record.gflops = record.gflops * record.median_seconds / median;  // the same work in another time
    record.costs = {median * 0.97, median, median * 1.03};
    record.median_seconds = median;
    record.spread = 0.03;
    record.load = 0.0;
    record.timestamp = at;
    record.run_id = "planted";
    record.tuner = "planted";
    return record;
  };
  auto winner = planted(records[0], first_median, timestamp + 1);
  winner.winner = true;
  winner.tuner = "final";
  database.insert({winner, planted(records[1], second_median, timestamp + 2)});
}

TEST_F(TrustCliTest, QueryAndPickSayWhenTheBestTwoAreTiedAndTheWinnerStays) {
  ASSERT_EQ(optune("tune --op gemm --shape 48,40,36 --tuner random --trials 2 --batch-size 2 --remeasure 0 "
                   "--repeat 2 --min-repeat-ms 1 --quiet --db " + db()).code, 0);
  plant_pair(db(), 0.5, 0.49);  // 2% faster than the winner, within +-3% either side
  const auto top = nlohmann::json::parse(optune("query --format json --db " + db()).out);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_TRUE(top[0]["winner"].get<bool>()) << "the winner stays first: " << top[0].dump();
  EXPECT_TRUE(top[0].contains("tied_with")) << top[0].dump();
  CommandRun table = optune("query --db " + db());
  EXPECT_NE(table.out.find("tied: gemm.f32.M48.N40.K36"), std::string::npos) << table.out;
  CommandRun pick = optune("pick --op gemm --shape 48,40,36 --db " + db());
  EXPECT_NE(pick.out.find("tied within noise with"), std::string::npos) << pick.out;
  const auto picked = nlohmann::json::parse(optune("pick --op gemm --shape 48,40,36 --format json --db " + db()).out);
  EXPECT_EQ(picked["record"]["median_seconds"], top[0]["median_seconds"]);
  EXPECT_TRUE(picked["tied_with"].is_object());

  // Now 30% faster than a new winner, measured after it on a quiet machine: it replaces the winner.
  plant_pair(db(), 0.5, 0.35);
  const auto replaced = nlohmann::json::parse(optune("query --format json --db " + db()).out);
  EXPECT_FALSE(replaced[0]["winner"].get<bool>()) << replaced[0].dump();
  EXPECT_FALSE(replaced[0].contains("tied_with"));
}

// Records of the database by tuner ("default", "random", "final", ...).
std::map<std::string, std::size_t> records_by_tuner(const std::string& path) {
  std::map<std::string, std::size_t> counts;
  if (!fs::exists(path)) return counts;
  try {
    for (const auto& record : Database::open(path, Database::Mode::kReadOnly).records({})) ++counts[record.tuner];
  } catch (const optune::db::DatabaseError&) {  // made, its schema not yet committed
  }
  return counts;
}

TEST_F(TrustCliTest, CtrlCKeepsTheBatchInFlightAndSaysHowToContinue) {
  const std::string tune = "tune --op gemm --shape 48,40,36 --tuner random --trials 40 --batch-size 2 --repeat 3 "
                           "--min-repeat-ms 300 --db " + db();
  const pid_t pid = start_optune(tune, "tune");
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
       records_by_tuner(db())["random"] < 2;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << optune::test_support::slurp(dir_ / "tune.out");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Into the second batch (two configs of at least 0.9 s each), which must be kept.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::size_t before = records_by_tuner(db())["random"];
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_job(pid), 128 + SIGINT);
  const std::string out = optune::test_support::slurp(dir_ / "tune.out");
  auto after = records_by_tuner(db());
  EXPECT_GE(after["random"], before + 2) << "the batch in flight was measured to its end and recorded\n" << out;
  EXPECT_EQ(after["random"] % 2, 0u) << "whole batches only";
  EXPECT_LT(after["random"], 40u);
  EXPECT_EQ(after["final"], 0u) << "a stopped run does not start its closing comparison";
  EXPECT_NE(out.find("stopped    by signal 2 after the batch in flight: " + std::to_string(after["random"]) +
                     " trials of this run recorded in " + db() + "; run the same command again to continue"),
            std::string::npos)
      << out;
  EXPECT_EQ(Database::open(db(), Database::Mode::kReadOnly).integrity_check(), "ok");

  // The same command again continues, and says what it found.
  CommandRun again = optune("tune --op gemm --shape 48,40,36 --tuner random --trials 2 --batch-size 2 --repeat 2 "
                            "--min-repeat-ms 1 --remeasure 0 --db " + db());
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  const std::size_t recorded = after["random"] + 1;  // and the default
  EXPECT_NE(again.err.find(std::to_string(recorded) + " configs of this task already recorded in " + db() +
                           ": not measured again"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.out.find("; " + std::to_string(recorded) + " configs recorded before, not measured again"),
            std::string::npos)
      << again.out;
}

}  // namespace
