// Using the results, end to end through the optune command: overnight jobs (stopped by SIGTERM
// and SIGKILL, resumed, kept apart by the device lock), query --since, merge, prune, regress
// (with JUnit XML) and report. Real processes, real compiles, real SQLite files; tiny GEMMs and
// short timing keep it fast.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "optune/db/database.hpp"
#include "../support/job_command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;

using optune::test_support::CommandRun;
using optune::test_support::slurp;

constexpr const char* kWorkload = "gemm.f32.M48.N40.K36";
constexpr const char* kTiming = "--repeat 2 --min-repeat-ms 1 --quiet";
constexpr const char* kRegressTiming = "--repeat 2 --min-repeat-ms 1";

class ResultsCliTest : public optune::test_support::JobCommandTest {
 protected:
  fs::path write_job(const std::string& name, std::size_t budget, const std::string& extra = "") {
    fs::path file = dir_ / (name + ".toml");
    std::ofstream(file) << "name = \"" << name << "\"\nbudget = " << budget
                        << "\ntuner = \"random\"\nbatch_size = 2\nremeasure = 1\nseed = 3\ndatabase = \"" << db()
                        << "\"\n"
                        << extra
                        << "[[workload]]\nop = \"gemm\"\nshape = \"48,40,36\"\n"
                           "[measure]\nrepeat = 2\nmin_repeat_ms = 1\ntimeout = 10\n";
    return file;
  }

  // The job's records, read back: trials (neither default nor re-measurement) and defaults.
  struct JobRecords {
    std::size_t trials = 0;
    std::size_t defaults = 0;
    std::set<std::string> trial_configs;
  };
  JobRecords job_records(const std::string& name) {
    JobRecords result;
    if (!fs::exists(db())) return result;
    std::optional<Database> database;
    try {
      database.emplace(Database::open(db(), Database::Mode::kReadOnly));
    } catch (const optune::db::DatabaseError& error) {
      // A job just started has made the file but not yet committed its schema: nothing yet.
      if (std::string(error.what()).find("it is empty") != std::string::npos) return result;
      throw;
    }
    for (const auto& record : database->records({})) {
      if (record.run_id != "job:" + name) continue;
      if (record.is_default) {
        ++result.defaults;
      } else if (!record.is_remeasurement()) {
        ++result.trials;
        EXPECT_TRUE(result.trial_configs.insert(record.config_text()).second)
            << "measured twice: " << record.config_text();
      }
    }
    return result;
  }

  void wait_for_trials(const std::string& name, std::size_t trials) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (job_records(name).trials < trials) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the job recorded no batch in time";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void expect_intact_database() {
    auto database = Database::open(db(), Database::Mode::kReadOnly);
    EXPECT_EQ(database.integrity_check(), "ok");
  }

  void tune_tiny(const std::string& database, int seed, int trials = 2) {
    CommandRun run =
        optune("tune --op gemm --shape 48,40,36 --tuner random --batch-size 2 --remeasure 1 --trials " +
               std::to_string(trials) + " --seed " + std::to_string(seed) + " " + kTiming + " --db " + database);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }

  fs::path write_suite() {
    fs::path suite = dir_ / "suite.toml";
    std::ofstream(suite) << "name = \"tiny\"\n[[workload]]\nname = \"gemm48\"\nop = \"gemm\"\nshape = \"48,40,36\"\n";
    return suite;
  }

};

constexpr std::size_t kBudget = 8;

TEST_F(ResultsCliTest, JobStoppedBySigtermResumesAndCompletesTheBudget) {
  fs::path job = write_job("tiny", kBudget);
  pid_t pid = start_job(job, "first");
  wait_for_trials("tiny", 2);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_job(pid), 128 + SIGTERM) << slurp(dir_ / "first.out");
  EXPECT_NE(slurp(dir_ / "first.out").find("stopped by signal 15"), std::string::npos) << slurp(dir_ / "first.out");
  auto stopped = job_records("tiny");
  EXPECT_LT(stopped.trials, kBudget);
  EXPECT_EQ(stopped.trials % 2, 0u) << "a clean stop ends after a whole batch";

  CommandRun again = optune("job run " + job.string());
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find(std::to_string(stopped.trials) + " trials already recorded"), std::string::npos)
      << again.out;
  auto done = job_records("tiny");
  EXPECT_EQ(done.trials, kBudget);  // the budget counts the first run's trials
  EXPECT_EQ(done.defaults, 1u);     // the default is not measured again
  expect_intact_database();

  // The log holds both runs and the summary; a third run has nothing left to do.
  std::string log = slurp(dir_ / "tiny.log");
  EXPECT_NE(log.find("stopped by signal 15"), std::string::npos) << log;
  EXPECT_NE(log.find("finished"), std::string::npos) << log;
  EXPECT_NE(log.find("workload1"), std::string::npos) << log;  // the summary's row
  CommandRun third = optune("job run " + job.string());
  EXPECT_EQ(third.code, 0) << third.err;
  EXPECT_EQ(job_records("tiny").trials, kBudget);
}

TEST_F(ResultsCliTest, JobKilledBySigkillResumesWithoutLosingOrRemeasuring) {
  fs::path job = write_job("killed", kBudget);
  pid_t pid = start_job(job, "first");
  wait_for_trials("killed", 2);
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_job(pid), 128 + SIGKILL);
  auto killed = job_records("killed");  // every committed batch is there
  EXPECT_GE(killed.trials, 2u);
  expect_intact_database();

  CommandRun again = optune("job run " + job.string());  // the kernel freed the lock of the killed job
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  auto done = job_records("killed");
  EXPECT_EQ(done.trials, kBudget);
  for (const auto& config : killed.trial_configs) EXPECT_TRUE(done.trial_configs.count(config)) << config;
  expect_intact_database();
}

TEST_F(ResultsCliTest, TwoJobsOnOneDeviceAreKeptApart) {
  pid_t first = start_job(write_job("first", 40), "first");
  // Its default config recorded: it holds the lock and is measuring.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (job_records("first").defaults == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(dir_ / "first.out");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CommandRun second = optune("job run " + write_job("second", 4).string());
  EXPECT_EQ(second.code, 1) << second.out << second.err;
  EXPECT_NE(second.err.find("another run (pid " + std::to_string(first) + ", job first) is measuring on device"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  EXPECT_EQ(job_records("second").trials + job_records("second").defaults, 0u);
  ::kill(first, SIGKILL);  // its clean stop is another test's subject
  EXPECT_EQ(wait_job(first), 128 + SIGKILL);
}

TEST_F(ResultsCliTest, BadJobFilesAndArgumentsExitTwoWithOneLine) {
  expect_bad_input("job run " + (dir_ / "missing.toml").string(), "cannot read the job file");
  fs::path broken = dir_ / "broken.toml";
  std::ofstream(broken) << "name = \"broken\"\nbudget = \"forever\"\n";
  expect_bad_input("job run " + broken.string(), "broken.toml:2: 'budget'");
  // Nothing listens on port 1: the job names the tracker it cannot use and measures nothing.
  expect_bad_input("job run " + write_job("remote", 4, "rpc = \"pi@127.0.0.1:1\"\n").string(), "tracker 127.0.0.1:1");
  expect_bad_input("job run " + write_job("cross", 4, "target = \"gpu\"\n").string(), "gpu");
  expect_bad_input("job frobnicate", "subcommand");
  expect_bad_input("job run", "file");
  expect_bad_input("query --since yesterday-ish --db " + db(), "--since");
  expect_bad_input("merge " + db() + " " + (dir_ / "nope.db").string(), "nope.db");
  expect_bad_input("merge " + db() + " " + db(), "same database");
  expect_bad_input("prune --keep 0 --db " + db(), "--keep");
  expect_bad_input("regress --db " + db(), "--suite");
  expect_bad_input("regress --suite " + write_suite().string() + " --tolerance -1 --db " + db(), "--tolerance");
  expect_bad_input("report --db " + (dir_ / "none.db").string(), "none.db");
  EXPECT_FALSE(fs::exists(db())) << "a rejected command must not create a database";
}

TEST_F(ResultsCliTest, QuerySinceMergePruneAndReport) {
  const std::string a = (dir_ / "a.db").string(), b = (dir_ / "b.db").string(), merged = (dir_ / "m.db").string();
  tune_tiny(a, 1);
  fs::copy_file(a, b);
  tune_tiny(b, 2);  // b = a's records and a second run's
  const std::size_t in_a = Database::open(a, Database::Mode::kReadOnly).count();
  const std::size_t in_b = Database::open(b, Database::Mode::kReadOnly).count();
  ASSERT_GT(in_b, in_a);

  // query --since: a duration back from now, a date long past, a date to come.
  auto count_since = [&](const std::string& since) {
    CommandRun run = optune("query --history --format json --since " + since + " --db " + a);
    EXPECT_EQ(run.code, 0) << run.err;
    return nlohmann::json::parse(run.out).size();
  };
  EXPECT_EQ(count_since("1h"), in_a);
  EXPECT_EQ(count_since("2020-01-01"), in_a);
  EXPECT_EQ(count_since("2999-01-01T00:00"), 0u);

  // Overlapping databases: the shared records once, nothing lost; merging again adds nothing.
  CommandRun merge = optune("merge " + a + " " + b + " --into " + merged);
  ASSERT_EQ(merge.code, 0) << merge.err;
  EXPECT_EQ(Database::open(merged, Database::Mode::kReadOnly).count(), in_b);
  ASSERT_EQ(optune("merge " + a + " " + b).code, 0);
  EXPECT_EQ(Database::open(a, Database::Mode::kReadOnly).count(), in_b);
  ASSERT_EQ(optune("merge " + a + " " + b).code, 0);
  EXPECT_NE(optune("merge " + a + " " + b).out.find("merged 0 new records"), std::string::npos);

  // Report: a page with the table and one svg per task.
  const std::string page = (dir_ / "report.html").string();
  CommandRun report = optune("report --db " + merged + " --out " + page);
  ASSERT_EQ(report.code, 0) << report.err;
  std::string html = slurp(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find(kWorkload), std::string::npos);
  EXPECT_NE(html.find("<table class=\"summary\">"), std::string::npos);
  std::size_t svgs = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 1u);  // one task
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 10, true);
  // Read as a DOM (report_dom.py; report_cli_test.cpp checks the page in detail): every record of
  // both tuning runs a point of the one task's plot, numbered by trial across the runs.
  const std::string parsed = page + ".json";
  ASSERT_EQ(std::system(("python3 " + std::string(OPTUNE_SOURCE_DIR) + "/tests/integration/report_dom.py " + page +
                         " > " + parsed).c_str()),
            0);
  const auto dom = nlohmann::json::parse(slurp(parsed));
  ASSERT_EQ(dom["tasks"].size(), 1u);
  EXPECT_EQ(dom["tasks"][0]["points"].size(), Database::open(merged, Database::Mode::kReadOnly).count());
  EXPECT_FALSE(dom["tasks"][0]["best_so_far"].empty());
  EXPECT_EQ(dom["tasks"][0]["x_ticks"].back(), "4") << "two runs of 2 trials each";

  // Prune: the best survives, and the best record is the same before and after.
  auto best_before = Database::open(merged, Database::Mode::kReadOnly).top_k({}, 1).at(0);
  CommandRun prune = optune("prune --keep 1 --db " + merged);
  ASSERT_EQ(prune.code, 0) << prune.err;
  auto pruned = Database::open(merged, Database::Mode::kReadOnly);
  EXPECT_LT(pruned.count(), in_b);
  EXPECT_EQ(pruned.top_k({}, 1).at(0).config_text(), best_before.config_text());
  EXPECT_EQ(pruned.integrity_check(), "ok");
}

// A database `to` of one record: the first record of `from` (lowest median first) that `wanted`
// accepts, changed by `change`, with its figures scaled: by 1/1000, a recorded figure far better
// than reachable (a planted regression).
void plant_record(const std::string& from, const std::string& to, double scale,
                  const std::function<bool(const optune::db::TuningRecord&)>& wanted = {},
                  const std::function<void(optune::db::TuningRecord&)>& change = {}) {
  auto source = Database::open(from, Database::Mode::kReadOnly);
  std::optional<optune::db::TuningRecord> chosen;
  for (auto& record : source.top_k({}, 0))
    if (!chosen && (!wanted || wanted(record))) chosen = record;
  ASSERT_TRUE(chosen);
  if (change) change(*chosen);
  chosen->median_seconds *= scale;
  chosen->gflops /= scale;
  for (double& cost : chosen->costs) cost *= scale;
  Database::open(to).insert({*chosen});
}

// The default config made single-threaded, as a tuned config: its timing a busy machine hardly
// disturbs (a multi-threaded kernel's swings by orders of magnitude on shared cores, as its
// threads wait for each other).
void plant_single_thread_record(const std::string& from, const std::string& to, double scale) {
  plant_record(
      from, to, scale, [](const optune::db::TuningRecord& record) { return record.is_default; },
      [](optune::db::TuningRecord& record) {
        record.config["threads"] = 1;
        record.config["parallel_loop"] = "jc";  // with one thread the only valid choice
        record.is_default = false;
      });
}

bool valid_junit(const fs::path& file, const std::string& expect) {
  std::string command =
      "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
      "s = r.find('testsuite'); c = s.findall('testcase'); "
      "print(r.tag, s.get('tests'), s.get('failures'), len(c), len(c[0].findall('failure')))\" " +
      file.string() + " > " + file.string() + ".parsed";
  if (std::system(command.c_str()) != 0) return false;
  std::string parsed = slurp(file.string() + ".parsed");
  EXPECT_EQ(parsed, expect + "\n");
  return parsed == expect + "\n";
}

TEST_F(ResultsCliTest, RegressPassesOnReachableRecordsAndFailsOnAPlantedRegression) {
  tune_tiny(db(), 7);
  const std::string suite = write_suite().string();
  // Reachable: a single-threaded config as the tuned one, recorded far slower than it runs, and a
  // wide tolerance against the (multi-threaded) default: what this checks is the command around
  // the verdicts, whose arithmetic job_test.cpp tests exactly. regress itself measures a
  // suspected regression again (--attempts, best of each config), so one slow run under load
  // does not fail it.
  const std::string reachable = (dir_ / "reachable.db").string();
  plant_single_thread_record(db(), reachable, 1e4);
  fs::path junit = dir_ / "pass.xml";
  CommandRun pass = optune("regress --db " + reachable + " --suite " + suite + " --tolerance 10 " + kRegressTiming +
                           " --junit " + junit.string());
  EXPECT_EQ(pass.code, 0) << pass.out << pass.err;
  EXPECT_NE(pass.out.find(kWorkload), std::string::npos) << pass.out;
  EXPECT_NE(pass.out.find("0 regressed"), std::string::npos) << pass.out;
  EXPECT_EQ(pass.out.find("another toolchain"), std::string::npos) << "tuned and checked with today's compiler";
  EXPECT_TRUE(valid_junit(junit, "testsuites 1 0 1 0"));

  const std::string planted = (dir_ / "planted.db").string();
  // ... tuned, it says, by an older compiler with other flags.
  plant_record(db(), planted, 1e-3, {}, [](optune::db::TuningRecord& record) {
    record.toolchain = {{"compiler", "g++ (GCC) 4.8.5"}, {"flags", "-O2"}};
  });
  fs::path failed = dir_ / "fail.xml";
  CommandRun fail =
      optune("regress --db " + planted + " --suite " + suite + " " + kRegressTiming + " --junit " + failed.string());
  EXPECT_EQ(fail.code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("REGRESSION"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("1 regressed"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("(best of 3 measurements)"), std::string::npos) << "measured again before failing";
  EXPECT_NE(fail.out.find("note: tuned under another toolchain: compiler g++ (GCC) 4.8.5, now "), std::string::npos)
      << fail.out;
  EXPECT_NE(fail.out.find("; flags -O2, now -std=c++20"), std::string::npos) << fail.out;
  EXPECT_TRUE(valid_junit(failed, "testsuites 1 1 1 1"));
  // regress only reads: the planted database still holds its one record.
  EXPECT_EQ(Database::open(planted, Database::Mode::kReadOnly).count(), 1u);
}

// A record of an older space (here a knob this optune does not know), faster than every other:
// apply-best compiles in the fastest record it can read, and regress re-measures that one,
// instead of failing the build or the gate.
TEST_F(ResultsCliTest, RecordsOfAnOlderSpaceArePassedOverByApplyBestAndRegress) {
  tune_tiny(db(), 4);
  plant_record(db(), db(), 1e-3, {}, [](optune::db::TuningRecord& record) { record.config["retired_knob"] = "x"; });
  const fs::path header = dir_ / "tuned.hpp";
  CommandRun apply = optune("apply-best --db " + db() + " --target cpu --out " + header.string());
  ASSERT_EQ(apply.code, 0) << apply.out << apply.err;
  const std::string text = slurp(header);
  EXPECT_NE(text.find("// 1 tuned workload."), std::string::npos) << text;
  EXPECT_NE(text.find(std::string("// ") + kWorkload), std::string::npos) << text;
  EXPECT_EQ(text.find("retired_knob"), std::string::npos) << text;

  CommandRun regress =
      optune("regress --db " + db() + " --suite " + write_suite().string() + " --tolerance 10 " + kRegressTiming);
  EXPECT_TRUE(regress.code == 0 || regress.code == 1) << regress.code << regress.out << regress.err;
  EXPECT_NE(regress.out.find(kWorkload), std::string::npos) << regress.out;
}

}  // namespace
