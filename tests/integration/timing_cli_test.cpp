// Time to a result (issue 42) through the optune command: a candidate whose first timed runs are
// over the bail-out factor times the best so far is a `slow` record (its partial time a lower
// bound), never the first batch's nor a finalist's; one clearly slower than the best (in a first
// batch, than the default) gets fewer repeats; --bail-out off and --timing full time every candidate in full; every record says its
// check and timing seconds and the run's summary where its wall time went; every checked record
// says how far its output was from the reference (check_error).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "command_test.hpp"
#include "cpu_kernel_file.hpp"
#include "optune/db/database.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::CommandRun;
using optune::test_support::CommandTest;

// y = 2x over N floats, done WORK times over (a compiler barrier keeps every pass): a config runs
// about WORK times as long as WORK = 1 does. PAD only makes configs of equal speed.
constexpr const char* kPacedSource = R"(#include <cstdint>
extern "C" void paced(const float* x, float* y, std::int32_t n) {
  for (int pass = 0; pass < WORK + (PAD - PAD); ++pass) {
    for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i];
    asm volatile("" ::: "memory");
  }
}
extern "C" void paced_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i];
}
)";

// y = 2x, but MODE 1 is off by 1e-3 (against atol 1e-6 and rtol 1e-6) and MODE 2 does not compile.
constexpr const char* kModalSource = R"(#include <cstdint>
#if MODE == 2
#error "MODE 2 does not build"
#endif
extern "C" void modal(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + (MODE == 1 ? 1e-3f : 0.0f);
}
extern "C" void modal_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i];
}
)";

// A record timed adaptively ended before its 5 repeats only where its rank was clear: its fastest
// repeat over 1.5, 1.3 or 1.15 times the best so far (itself at least the run's fastest median)
// after 1, 2 or 3 repeats, or 3 repeats within 2% of each other.
void expect_timed_as_its_rank_needs(const optune::db::TuningRecord& record, double fastest_median) {
  const std::size_t repeats = record.costs.size();
  ASSERT_TRUE(repeats >= 1 && repeats <= 5 && repeats != 4) << record.config_text();
  if (repeats == 5) return;
  const double fastest = *std::min_element(record.costs.begin(), record.costs.end());
  const double slowest = *std::max_element(record.costs.begin(), record.costs.end());
  const double clearly_slower[] = {1.5, 1.3, 1.15};
  EXPECT_TRUE(fastest > clearly_slower[repeats - 1] * fastest_median || (repeats == 3 && slowest <= 1.02 * fastest))
      << repeats << " repeats: " << record.config_text();
}

class TimingCliTest : public CommandTest {
 protected:
  fs::path write_paced_kernel() {
    std::ofstream(dir_ / "paced.cpp") << kPacedSource;
    std::ofstream(dir_ / "paced.toml") << optune::test_support::cpu_kernel_file("paced", 65536,
                                                                               "WORK = [1, 12, 24]\nPAD = [0, 1, 2]");
    return dir_ / "paced.toml";
  }
  // Tunes the paced kernel over its whole grid, `batch_size` configs a batch.
  nlohmann::json tune(const std::string& options, int batch_size = 1) {
    CommandRun run = optune("tune --kernel " + write_paced_kernel().string() + " --tuner grid --trials 9 --batch-size " +
                            std::to_string(batch_size) + " --min-repeat-ms 5 --remeasure 1 --quiet --format json --db " +
                            db() + " " + options);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    return nlohmann::json::parse(run.out);
  }
  std::vector<optune::db::TuningRecord> records() { return Database::open(db(), Database::Mode::kReadOnly).records({}); }
  // A run with nothing cut: every record ok, each grid record timed as its rank needs. Returns how
  // many records of the slow configs (WORK 12 and 24) ended their timing before the 5th repeat.
  std::size_t slow_configs_ended_early() {
    const auto all = records();
    double fastest_median = 1e9;
    for (const auto& record : all) fastest_median = std::min(fastest_median, record.median_seconds);
    std::size_t ended_early = 0;
    for (const auto& record : all) {
      EXPECT_TRUE(record.ok()) << record.error_kind << ": " << record.error_message;
      if (record.tuner != "grid") continue;
      expect_timed_as_its_rank_needs(record, fastest_median);
      ended_early += record.config.at("WORK").get<int>() > 1 && record.costs.size() < 5;
    }
    return ended_early;
  }
};

TEST_F(TimingCliTest, CandidatesOverTheBailOutBoundAreSlowRecordsAndTheRestAreTimedAsTheirRankNeeds) {
  const auto summary = tune("");
  const auto all = records();
  double fastest_median = 1e9;
  for (const auto& record : all)
    if (record.ok()) fastest_median = std::min(fastest_median, record.median_seconds);
  std::size_t slow = 0, retimed = 0;
  for (const auto& record : all) {
    const int work = record.config.at("WORK").get<int>();
    ASSERT_TRUE(record.ok() || record.is_slow()) << record.error_kind << ": " << record.error_message;
    // The check ran for every one of them, and the timing too.
    ASSERT_TRUE(record.check_seconds && record.timing_seconds) << record.config_text();
    EXPECT_GE(*record.check_seconds, 0);
    // On a busy machine a cut is not trusted: the config is timed again in full, and says so.
    const bool timed_again = record.error_message.starts_with("timed in full: cut as slow while other processes took");
    retimed += timed_again;
    if (record.is_slow()) {
      ++slow;
      EXPECT_GE(work, 12) << "a config as fast as the best was cut: " << record.config_text();
      EXPECT_EQ(record.tuner, "grid") << "the default and finalists are never cut";
      EXPECT_NE(record.error_message.find("over 2x the best so far"), std::string::npos) << record.error_message;
      // At least that slow: its partial time is a lower bound, well over the best's.
      ASSERT_EQ(record.costs.size(), 1u);
      EXPECT_GT(record.median_seconds, 0);
      EXPECT_GT(record.gflops, 0);
    } else if (record.tuner == "grid") {
      expect_timed_as_its_rank_needs(record, fastest_median);
    }
  }
  // The grid's first config is the first batch, timed in full whatever it is; the other slow
  // configs (WORK 12 and 24: 6 of the 9, the default's twin aside) are cut, or timed again in full
  // where the machine was busy when they were cut.
  EXPECT_GE(slow + retimed, 4u);
  EXPECT_EQ(summary["slow"], slow);
  EXPECT_EQ(summary["failures"], 0) << "a slow record is no failure";
  if (slow > 0) EXPECT_GT(summary["time"]["saved_seconds"].get<double>(), 0);
  // Where the wall time went: its parts add up to no more than it.
  const auto& time = summary["time"];
  double parts = 0;
  for (const char* part : {"building", "checking", "timing", "choosing", "waiting"}) {
    ASSERT_TRUE(time.contains(part)) << time.dump();
    EXPECT_GE(time[part].get<double>(), 0) << part;
    parts += time[part].get<double>();
  }
  EXPECT_GT(time["building"].get<double>(), 0);
  EXPECT_GT(time["timing"].get<double>(), 0);
  EXPECT_NEAR(parts, summary["seconds"].get<double>(), 0.05 * summary["seconds"].get<double>() + 0.1);
  // The best is a WORK = 1 config, measured in full.
  EXPECT_EQ(summary["best"]["config"]["WORK"], 1) << summary["best"].dump();
}

// A run's first batch (here the whole grid) is timed against the default alone: none of it is cut
// as slow, but its clearly slower configs end their timing early all the same, as ok records.
TEST_F(TimingCliTest, AFirstBatchIsNeverCutButItsClearlySlowerCandidatesEndEarly) {
  const auto summary = tune("", 9);
  EXPECT_EQ(summary["slow"], 0);
  EXPECT_GE(slow_configs_ended_early(), 4u) << "WORK 12 and 24 are clearly slower than the default";
  EXPECT_GT(summary["time"]["saved_seconds"].get<double>(), 0);
}

TEST_F(TimingCliTest, WithoutBailOutAClearlySlowerCandidateGetsFewerRepeats) {
  const auto summary = tune("--bail-out off");
  EXPECT_EQ(summary["slow"], 0);
  EXPECT_GE(slow_configs_ended_early(), 4u) << "WORK 12 and 24 are clearly slower than the best";
  EXPECT_GT(summary["time"]["saved_seconds"].get<double>(), 0);
}

TEST_F(TimingCliTest, BailOutOffAndFullTimingTimeEveryCandidateInFull) {
  const auto summary = tune("--bail-out off --timing full");
  EXPECT_EQ(summary["slow"], 0);
  EXPECT_EQ(summary["time"]["saved_seconds"], 0.0);
  for (const auto& record : records()) {
    ASSERT_TRUE(record.ok()) << record.error_kind;
    if (record.tuner == "grid" || record.tuner == "default") EXPECT_EQ(record.costs.size(), 5u) << record.config_text();
  }
}

TEST_F(TimingCliTest, QueryShowsWhereEachRecordsTimeWent) {
  const auto summary = tune("");
  CommandRun run = optune("query --history --format json --db " + db());
  ASSERT_EQ(run.code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out);
  ASSERT_FALSE(rows.empty());
  std::size_t remeasured = 0;
  for (const auto& row : rows) {
    // A config is compiled once: its re-measurements at the end of the run reuse its object.
    if (row["tuner"] == "remeasure" || row["tuner"] == "final") {
      ++remeasured;
      EXPECT_EQ(row["build_seconds"].get<double>(), 0) << row.dump();
    } else {
      EXPECT_GT(row["build_seconds"].get<double>(), 0) << row.dump();
    }
    EXPECT_TRUE(row["check_seconds"].is_number()) << row.dump();
    EXPECT_TRUE(row["timing_seconds"].is_number()) << row.dump();
    // y = 2x in float as its reference computes it: no element off at all.
    EXPECT_EQ(row["check_error"], 0.0) << row.dump();
  }
  EXPECT_GT(remeasured, 0u);
  EXPECT_EQ(summary["time"]["reused_builds"], remeasured) << "the summary counts the candidates compiled before";
  run = optune("query --history --format csv --db " + db());
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find(",build_seconds,check_seconds,timing_seconds,check_error\n"), std::string::npos) << run.out;
}

// An operator's records carry the relative L2 error of their output against the float64
// reference, within the f32 tolerance (1e-4) where they passed.
TEST_F(TimingCliTest, AGemmsRecordsCarryTheirRelativeErrorWithinTheTolerance) {
  CommandRun run = optune("tune --op gemm --shape 64,48,40 --trials 4 --batch-size 2 --repeat 2 --min-repeat-ms 1 "
                          "--remeasure 0 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::size_t checked = 0;
  for (const auto& record : records()) {
    if (!record.ok() && !record.is_slow()) continue;
    ASSERT_TRUE(record.check_error) << record.config_text();
    EXPECT_TRUE(std::isfinite(*record.check_error));
    EXPECT_GE(*record.check_error, 0);
    EXPECT_LT(*record.check_error, 1e-4) << record.config_text();
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

// A kernel file's records carry the worst element's error in units of its tolerance: at most 1
// where they passed, over it for a wrong answer, none for a config that did not build; query's
// JSON (null) and CSV (an empty last field) say so too.
TEST_F(TimingCliTest, AWrongAnswerCarriesItsErrorAndABuildErrorNone) {
  std::ofstream(dir_ / "modal.cpp") << kModalSource;
  std::ofstream(dir_ / "modal.toml") << optune::test_support::cpu_kernel_file("modal", 4096, "MODE = [0, 1, 2]");
  CommandRun run = optune("tune --kernel " + (dir_ / "modal.toml").string() + " --tuner grid --trials 3 --repeat 2 "
                          "--min-repeat-ms 1 --bail-out off --remeasure 0 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::map<int, optune::db::TuningRecord> by_mode;
  for (const auto& record : records()) by_mode[record.config.at("MODE").get<int>()] = record;
  ASSERT_EQ(by_mode.size(), 3u);
  ASSERT_EQ(by_mode[0].error_kind, "ok") << by_mode[0].error_message;
  ASSERT_TRUE(by_mode[0].check_error);
  EXPECT_EQ(*by_mode[0].check_error, 0) << "y = 2x in float, as the reference computes it";
  ASSERT_EQ(by_mode[1].error_kind, "wrong_answer");
  ASSERT_TRUE(by_mode[1].check_error);
  // 1e-3 off, against 1e-6 + 1e-6 |2x| for x in [-1, 1]: over 300 tolerances.
  EXPECT_GT(*by_mode[1].check_error, 300);
  ASSERT_EQ(by_mode[2].error_kind, "build_error");
  EXPECT_FALSE(by_mode[2].check_error) << "no check ran";

  run = optune("query --history --format json --db " + db());
  ASSERT_EQ(run.code, 0) << run.err;
  for (const auto& row : nlohmann::json::parse(run.out)) {
    const int mode = row["config"]["MODE"];
    if (mode == 2) EXPECT_TRUE(row["check_error"].is_null()) << row.dump();
    else EXPECT_EQ(row["check_error"].get<double>(), *by_mode[mode].check_error) << row.dump();
  }
  run = optune("query --history --format csv --db " + db());
  ASSERT_EQ(run.code, 0) << run.err;
  // Each row's last field, the check_error, by the row's error kind (the heading's by "heading").
  std::map<std::string, std::string> last_field;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::string kind = "heading";
    for (const char* listed : {"ok", "wrong_answer", "build_error"})
      if (line.find(std::string(",") + listed + ",") != std::string::npos) kind = listed;
    last_field[kind] = line.substr(line.rfind(',') + 1);
  }
  EXPECT_EQ(last_field["heading"], "check_error");
  EXPECT_EQ(last_field["ok"], "0");
  EXPECT_EQ(last_field["build_error"], "");
  EXPECT_GT(std::stod(last_field["wrong_answer"]), 300);
}

// --budget for one workload: a time alone bounds the run (no batch starts past it); with --trials
// both bound it; trials as a count replace --trials.
TEST_F(TimingCliTest, ATimeBudgetBoundsOneWorkloadsRun) {
  const std::string tune = "tune --op gemm --shape 64,48,40 --repeat 2 --min-repeat-ms 1 --batch-size 2 --remeasure 0 "
                           "--quiet --format json --db " + db();
  CommandRun run = optune(tune + " --budget 6s");
  ASSERT_EQ(run.code, 0) << run.err;
  auto summary = nlohmann::json::parse(run.out);
  EXPECT_GE(summary["trials"].get<int>(), 2);
  EXPECT_LT(summary["trials"].get<int>(), 1000) << "time, not trials, ended it";
  // The last batch started before 6 s, and one batch of two takes a few seconds at most.
  EXPECT_LT(summary["seconds"].get<double>(), 6 + 30);
  run = optune(tune + " --budget 1h --trials 3");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["trials"], 3) << "the trials end it first";
  run = optune(tune + " --budget 2");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["trials"], 2) << "a count replaces --trials";
  expect_bad_input(tune + " --budget 5x", "--budget");
}

TEST_F(TimingCliTest, ABailOutFactorOutOfRangeIsBadInput) {
  for (const char* factor : {"1", "0.5", "-2", "fast", "1e9"})
    expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db " + db() + " --bail-out " + factor, "--bail-out");
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db " + db() + " --timing sometimes", "--timing");
  EXPECT_FALSE(fs::exists(db()));
}

}  // namespace
