// The optune command under the faults of issue 40: its environment failing under it (a full
// TMPDIR, a read-only mount, a log that cannot be written) and hostile input (numbers of hundreds
// of digits, hostile kernel files). Real processes, file systems and SQLite files; each test states
// the behaviour it pins: bad input is exit code 2 and one line, a failure of the environment is
// exit 1 and never recorded as the candidates'.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "../support/command_test.hpp"
#include "../support/cpu_kernel_file.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::CommandRun;

constexpr const char* kTiming = "--repeat 2 --min-repeat-ms 1 --quiet";
// Room for a few candidates' compiles and objects, not for a batch of 15 (each object alone is
// some 16 KiB; the compiler's temporary files take more while it runs).
constexpr int kSmallTmpKilobytes = 160;

// A tmpfs of `kilobytes` mounted at `folder` while it lives (the tests run as root; where mounting
// is not permitted, mounted() is false and the test skips itself).
class TmpfsMount {
 public:
  TmpfsMount(const fs::path& folder, int kilobytes) : folder_(folder) {
    fs::create_directories(folder);
    const std::string size = "size=" + std::to_string(kilobytes) + "k";
    mounted_ = ::mount("tmpfs", folder.c_str(), "tmpfs", 0, size.c_str()) == 0;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(folder_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  bool remount_read_only() const {
    return ::mount("tmpfs", folder_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  fs::path folder_;
  bool mounted_ = false;
};

class FaultsCliTest : public optune::test_support::CommandTest {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  std::vector<optune::db::TuningRecord> records(const std::string& path) {
    if (!fs::exists(path)) return {};
    return Database::open(path, Database::Mode::kReadOnly).records({});
  }
  // A cpu kernel file of y = 2x over 1024 floats, whatever the value of its knob V (`values`).
  fs::path write_kernel(const std::string& values) {
    write("twice.cpp", optune::test_support::doubling_source("twice"));
    return write("twice.toml", optune::test_support::cpu_kernel_file("twice", 1024, "V = " + values));
  }
};

// A TMPDIR too small for a batch: the compiles that fail for want of space (their compiler's
// message lost with it, or saying so) stop the run, and none of the batch is recorded, though the
// default config and the batch's first compiles succeeded. They were build_error records with an
// empty message, skipped by every later run.
TEST_F(FaultsCliTest, AFullTmpdirFailsTheRunNotItsCandidates) {
  const fs::path kernel = write_kernel("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]");
  const std::string tune = "tune --kernel " + kernel.string() + " --target cpu --tuner grid --trials 15 --batch-size 15 "
                           "--jobs 1 --remeasure 0 " + kTiming + " --db " + db();
  TmpfsMount small(dir_ / "small_tmp", kSmallTmpKilobytes);
  if (!small.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
  CommandRun run = optune(tune, "TMPDIR=" + (dir_ / "small_tmp").string());
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("build_error of the environment, not of the candidates: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("nothing of the batch recorded"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  const auto kept = records(db());
  for (const auto& record : kept) EXPECT_TRUE(record.ok()) << record.config_text() << ": " << record.error_message;
  EXPECT_LE(kept.size(), 1u);  // the default, measured before the batch
  // With room to build, every config is measured: none was recorded as a failure.
  CommandRun again = optune(tune);
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  std::size_t ok = 0;
  for (const auto& record : records(db())) ok += record.ok() ? 1 : 0;
  EXPECT_EQ(ok, kept.size() + 16);
}

// A database on a read-only mount is read as immutable by every reading command (each failed with
// "unable to open database file": SQLite could not make the WAL's -shm file there).
TEST_F(FaultsCliTest, ADatabaseOnAReadOnlyMountIsRead) {
  const std::string saxpy = (fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels" / "saxpy_cpu.toml").string();
  ASSERT_EQ(optune("tune --kernel " + saxpy + " --shape N=1024 --target cpu --trials 2 --remeasure 0 " +
                   std::string(kTiming) + " --db " + db()).code, 0);
  const std::size_t stored = records(db()).size();
  TmpfsMount mount(dir_ / "read_only", 4096);
  if (!mount.mounted()) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
  fs::copy_file(db(), dir_ / "read_only" / "optune.db");
  ASSERT_TRUE(mount.remount_read_only());
  const std::string database = (dir_ / "read_only" / "optune.db").string();
  CommandRun query = optune("query --history --format json --db " + database);
  ASSERT_EQ(query.code, 0) << query.err;
  EXPECT_EQ(nlohmann::json::parse(query.out).size(), stored) << query.out;
  CommandRun exported = optune("export --db " + database + " --out " + (dir_ / "records.jsonl").string());
  EXPECT_EQ(exported.code, 0) << exported.err;
  EXPECT_EQ(records(db()).size(), stored);
  CommandRun pick = optune("pick --op gemm --shape 16,16,16 --target cpu --format json --db " + database);
  EXPECT_EQ(pick.code, 0) << pick.err;
  CommandRun prune = optune("prune --dry-run --keep 1 --db " + database);
  EXPECT_EQ(prune.code, 0) << prune.err;
}

// A job whose log cannot be written stops with one line and exit 1, before it measures (it exited
// 0, its log lost); a log that is the job's database is bad input (lines were appended to the
// database). The records already stored stay, the database intact.
TEST_F(FaultsCliTest, AJobLogThatCannotBeWrittenStopsTheJobAndLosesNoRecord) {
  const std::string saxpy = (fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels" / "saxpy_cpu.toml").string();
  auto job_file = [&](int budget, const std::string& log) {
    return write("nightly.toml", "name = \"nightly\"\nbudget = " + std::to_string(budget) +
                                     "\ntuner = \"random\"\nbatch_size = 2\nremeasure = 0\ndatabase = \"" + db() + "\"\n" +
                                     (log.empty() ? "" : "log = \"" + log + "\"\n") +
                                     "[[workload]]\nkernel = \"" + saxpy + "\"\nshape = \"N=1024\"\n"
                                     "[measure]\nrepeat = 2\nmin_repeat_ms = 1\n");
  };
  ASSERT_EQ(optune("job run " + job_file(2, "").string()).code, 0);
  const auto before = records(db());
  ASSERT_FALSE(before.empty());

  CommandRun full = optune("job run " + job_file(4, "/dev/full").string());
  EXPECT_EQ(full.code, 1) << full.out << full.err;
  EXPECT_NE(full.err.find("job nightly: cannot write the log file /dev/full: No space left on device"),
            std::string::npos) << full.err;
  EXPECT_EQ(std::count(full.err.begin(), full.err.end(), '\n'), 1) << full.err;
  EXPECT_EQ(records(db()).size(), before.size());

  expect_bad_input("job run " + job_file(4, db()).string(), "is the job's database or the job file itself");
  expect_bad_input("job run " + job_file(4, db() + "-wal").string(), "is the job's database or the job file itself");
  EXPECT_EQ(records(db()).size(), before.size());
  EXPECT_EQ(Database::open(db(), Database::Mode::kReadOnly).integrity_check(), "ok");
}

// Hostile kernel files, as the command shows them: knobs of more than 2^64 configs are named so
// (it said "no config of the knobs is valid"), and a NUL in a knob's name does not cut the line.
TEST_F(FaultsCliTest, HostileKernelFilesGetTheMessageOfTheirFault) {
  std::string knobs;
  for (int knob = 0; knob < 17; ++knob) knobs += "K" + std::to_string(knob) + "x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]\n";
  write("twice.cpp", optune::test_support::doubling_source("twice"));
  write("huge.toml", optune::test_support::cpu_kernel_file("twice", 1024, "V = [0, 1]\n" + knobs));
  expect_bad_input("space --kernel " + (dir_ / "huge.toml").string(), "knobs' values make more than 2^64 configs");
  write("nul.toml", optune::test_support::cpu_kernel_file("twice", 1024, "V = [0, 1]\n\"W\\u0000X\" = [1]"));
  expect_bad_input("space --kernel " + (dir_ / "nul.toml").string(), "knobs.W\\x00X: 'W\\x00X' must be an identifier");
}

// A duration of 400 digits, wherever a duration is read: one line naming the limit, exit 2 (it
// was "failed: stod" with exit 1 for query, and "stod" alone for a budget).
TEST_F(FaultsCliTest, DurationsOfHundredsOfDigitsAreBadInput) {
  const std::string digits(400, '9');
  expect_bad_input("query --since " + digits + "s --db " + db(), "is longer than 3650d");
  expect_bad_input("tune --suite x.toml --budget " + digits + "m --db " + db(), "--budget: duration '");
  const fs::path job = write("long.toml", "name = \"long\"\nbudget = \"" + digits + "h\"\ndatabase = \"" + db() +
                                              "\"\n[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n");
  expect_bad_input("job run " + job.string(), "is longer than 3650d");
  write("long.toml", "name = \"long\"\nbudget = \"" + digits + "\"\ndatabase = \"" + db() +
                         "\"\n[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n");
  expect_bad_input("job run " + job.string(), "'budget' in trials must be at least 1 and at most 100000000");
  EXPECT_FALSE(fs::exists(db()));
}

// A range spends --trials and no more, and says how: 2 trials over N=1000..64000 tune its two ends
// with one trial each (it tuned 6 shapes, 6 trials and 6 defaults).
TEST_F(FaultsCliTest, ARangeSpendsItsTrialsAndSaysHowTheyAreSplit) {
  const std::string saxpy = (fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels" / "saxpy_cpu.toml").string();
  CommandRun run = optune("tune --kernel " + saxpy + " --shape N=1000..64000 --target cpu --tuner random --trials 2 "
                          "--remeasure 0 " + kTiming + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("range N=1000..64000: 2 representative shapes (N=1000; N=64000) (2 of its 6: each shape "
                         "needs a trial); --trials 2 split 1, 1 among them, each shape's default config measured "
                         "besides"),
            std::string::npos) << run.out;
  std::size_t trials = 0, defaults = 0;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({}))
    ++(record.is_default ? defaults : trials);
  EXPECT_EQ(trials, 2u);
  EXPECT_EQ(defaults, 2u);
}

}  // namespace
