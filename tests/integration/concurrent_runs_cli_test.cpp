// Runs beside a running job, end to end through the optune command: a second SIGTERM stops the job
// at once with its end line in the log; tune and regress refuse to measure on the job's device or
// wait for it (--wait-lock); prune refuses while the job measures into its database. Real
// processes, real signals, real SQLite files.
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
#include <future>
#include <thread>

#include "optune/db/database.hpp"
#include "../support/job_command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::CommandRun;
using optune::test_support::slurp;
using Clock = std::chrono::steady_clock;

class ConcurrentRunsTest : public optune::test_support::JobCommandTest {
 protected:
  // `measure` is the job file's [measure] table: the timing sets how long a batch takes.
  fs::path write_job(const std::string& name, std::size_t budget, const std::string& measure,
                     const std::string& database = "") {
    fs::path file = dir_ / (name + ".toml");
    std::ofstream(file) << "name = \"" << name << "\"\nbudget = " << budget
                        << "\ntuner = \"random\"\nbatch_size = 2\nremeasure = 0\nseed = 3\ndatabase = \""
                        << (database.empty() ? db() : database)
                        << "\"\n[[workload]]\nop = \"gemm\"\nshape = \"48,40,36\"\n[measure]\n"
                        << measure;
    return file;
  }

  // Records of the job's run: (defaults, trials).
  std::pair<std::size_t, std::size_t> job_records(const std::string& name, const std::string& database = "") {
    std::pair<std::size_t, std::size_t> counts{0, 0};
    const std::string path = database.empty() ? db() : database;
    if (!fs::exists(path)) return counts;
    try {
      for (const auto& record : Database::open(path, Database::Mode::kReadOnly).records({})) {
        if (record.run_id != "job:" + name) continue;
        (record.is_default ? counts.first : counts.second) += 1;
      }
    } catch (const optune::db::DatabaseError&) {  // made, its schema not yet committed
    }
    return counts;
  }

  void wait_until(const std::function<bool()>& done, const std::string& what) {
    for (auto deadline = Clock::now() + std::chrono::seconds(120); !done();) {
      ASSERT_LT(Clock::now(), deadline) << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  fs::path write_suite() {
    fs::path suite = dir_ / "suite.toml";
    std::ofstream(suite) << "name = \"tiny\"\n[[workload]]\nname = \"gemm48\"\nop = \"gemm\"\nshape = \"48,40,36\"\n";
    return suite;
  }

  static std::string last_line(const std::string& text) {
    auto end = text.find_last_not_of('\n');
    if (end == std::string::npos) return "";
    auto begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
  }

};

constexpr const char* kSlowBatches = "repeat = 3\nmin_repeat_ms = 400\ntimeout = 30\n";  // seconds a batch
constexpr const char* kQuickBatches = "repeat = 2\nmin_repeat_ms = 1\ntimeout = 10\n";

TEST_F(ConcurrentRunsTest, SecondSigtermStopsAJobAtOnceAndItsLogStillEnds) {
  pid_t pid = start_job(write_job("hurried", 40, kSlowBatches), "hurried");
  wait_until([&] { return job_records("hurried").second >= 2; }, "the job recorded no batch in time");
  // Into the next batch (2 configs of at least 1.2 s each): a signal right after the record could
  // still meet the check before that batch, and the job would end there before the second signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGTERM);  // stop after this batch ...
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(pid, SIGTERM);  // ... no: now
  const auto signalled = Clock::now();
  EXPECT_EQ(wait_job(pid), 128 + SIGTERM) << slurp(dir_ / "hurried.out");
  EXPECT_LT(Clock::now() - signalled, std::chrono::seconds(5)) << "the second signal did not stop it at once";
  const std::string log = slurp(dir_ / "hurried.log");
  EXPECT_NE(last_line(log).find("job hurried: stopped at once by a second signal 15"), std::string::npos) << log;
  EXPECT_EQ(log.find("finished"), std::string::npos) << log;
  EXPECT_EQ(Database::open(db(), Database::Mode::kReadOnly).integrity_check(), "ok");
}

TEST_F(ConcurrentRunsTest, TuneRegressAndPruneKeepAwayFromARunningJob) {
  pid_t job = start_job(write_job("nightly", 400, kQuickBatches), "nightly");
  wait_until([&] { return job_records("nightly").first > 0; }, slurp(dir_ / "nightly.out"));  // measuring now

  const std::string tune = "tune --op gemm --shape 48,40,36 --tuner random --trials 2 --batch-size 2 --remeasure 0 "
                           "--repeat 2 --min-repeat-ms 1 --quiet --db " + db();
  CommandRun refused = optune(tune);
  EXPECT_EQ(refused.code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("tune: another run (pid " + std::to_string(job) + ", job nightly) is measuring on device"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--wait-lock"), std::string::npos) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;

  CommandRun regress = optune("regress --suite " + write_suite().string() + " --repeat 2 --min-repeat-ms 1 --db " + db());
  EXPECT_EQ(regress.code, 1) << regress.out << regress.err;
  EXPECT_NE(regress.err.find("regress: another run (pid " + std::to_string(job)), std::string::npos) << regress.err;

  const std::size_t before = Database::open(db(), Database::Mode::kReadOnly).count();
  CommandRun prune = optune("prune --keep 1 --db " + db());
  EXPECT_EQ(prune.code, 1) << prune.out << prune.err;
  EXPECT_NE(prune.err.find("prune: a run (pid " + std::to_string(job) + ", job nightly) is measuring into"),
            std::string::npos)
      << prune.err;
  EXPECT_EQ(std::count(prune.err.begin(), prune.err.end(), '\n'), 1) << prune.err;
  EXPECT_GE(Database::open(db(), Database::Mode::kReadOnly).count(), before) << "prune deleted records mid-run";
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({}))
    EXPECT_EQ(record.run_id, "job:nightly") << "a refused tune measured";
  EXPECT_EQ(optune("prune --keep 1 --dry-run --db " + db()).code, 0);  // counting deletes nothing

  // --wait-lock: the tune waits, and measures once the job has gone.
  auto waiting = std::async(std::launch::async, [&] { return optune(tune + " --wait-lock"); });
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(2)), std::future_status::timeout) << "did not wait";
  ::kill(job, SIGKILL);
  EXPECT_EQ(wait_job(job), 128 + SIGKILL);
  CommandRun waited = waiting.get();
  EXPECT_EQ(waited.code, 0) << waited.out << waited.err;
  EXPECT_NE(waited.err.find("waiting for another run (pid " + std::to_string(job) + ", job nightly)"),
            std::string::npos)
      << waited.err;
  // With the job gone, prune goes ahead.
  CommandRun pruned = optune("prune --keep 1 --db " + db());
  EXPECT_EQ(pruned.code, 0) << pruned.err;
}

// The device lock is the machine's, not a database folder's (issue 37): a tune writing another
// database, in another folder, is still refused while a job measures on the device, or waits.
TEST_F(ConcurrentRunsTest, RunsWritingDatabasesInOtherFoldersAreKeptApartOnOneDevice) {
  fs::create_directories(dir_ / "a");
  fs::create_directories(dir_ / "b");
  const std::string job_db = (dir_ / "a" / "job.db").string();
  const std::string other_db = (dir_ / "b" / "other.db").string();
  pid_t job = start_job(write_job("nightly", 400, kQuickBatches, job_db), "nightly");
  wait_until([&] { return job_records("nightly", job_db).first > 0; }, slurp(dir_ / "nightly.out"));

  const std::string tune = "tune --op gemm --shape 48,40,36 --tuner random --trials 2 --batch-size 2 --remeasure 0 "
                           "--repeat 2 --min-repeat-ms 1 --quiet --db " + other_db;
  CommandRun refused = optune(tune);
  EXPECT_EQ(refused.code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("tune: another run (pid " + std::to_string(job) + ", job nightly) is measuring on device"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_EQ(Database::open(other_db, Database::Mode::kReadOnly).count(), 0u) << "the refused tune measured";

  const pid_t waiting = start_optune(tune + " --wait-lock", "waiting");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Database::open(other_db, Database::Mode::kReadOnly).count(), 0u) << "did not wait";
  ::kill(job, SIGKILL);
  EXPECT_EQ(wait_job(job), 128 + SIGKILL);
  EXPECT_EQ(wait_job(waiting), 0) << slurp(dir_ / "waiting.out");
  EXPECT_NE(slurp(dir_ / "waiting.out").find("waiting for another run (pid " + std::to_string(job) + ", job nightly)"),
            std::string::npos);
  EXPECT_EQ(Database::open(other_db, Database::Mode::kReadOnly).count(), 3u) << "the default and two trials";
}

// The database lock is the file's, not its name's (issue 40, item 1): prune through a symlink or a
// hard link of the database a job writes is refused, and deletes nothing.
TEST_F(ConcurrentRunsTest, PruneThroughAnotherNameOfTheDatabaseIsRefusedUnderARun) {
  pid_t job = start_job(write_job("nightly", 400, kQuickBatches), "nightly");
  wait_until([&] { return job_records("nightly").second >= 2; }, slurp(dir_ / "nightly.out"));
  fs::create_directories(dir_ / "elsewhere");
  const fs::path symlink = dir_ / "link.db";
  const fs::path hard_link = dir_ / "elsewhere" / "hard.db";
  fs::create_symlink(db(), symlink);
  fs::create_hard_link(db(), hard_link);
  for (const fs::path& name : {symlink, hard_link}) {
    const std::size_t before = Database::open(db(), Database::Mode::kReadOnly).count();
    CommandRun prune = optune("prune --keep 1 --db " + name.string());
    EXPECT_EQ(prune.code, 1) << name << "\n" << prune.out << prune.err;
    EXPECT_NE(prune.err.find("prune: a run (pid " + std::to_string(job) + ", job nightly) is measuring into"),
              std::string::npos)
        << prune.err;
    EXPECT_GE(Database::open(db(), Database::Mode::kReadOnly).count(), before) << "prune deleted records mid-run";
  }
  ::kill(job, SIGKILL);
  EXPECT_EQ(wait_job(job), 128 + SIGKILL);
  CommandRun pruned = optune("prune --keep 1 --db " + symlink.string());
  EXPECT_EQ(pruned.code, 0) << pruned.err;
}

}  // namespace
