// The optune command with its records on a PostgreSQL server (issue 41), end to end against the
// suite's real server: tune, query, apply-best and merge both ways give what a SQLite file gives;
// bad connection strings and refused logins are exit 2 with one line; the device's and the
// database's locks hold through the server for runs of other machines (another lock folder, another
// host name); eight tunes from eight "hosts" and a job write one database at once, one of them
// killed mid-run.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/job_command_test.hpp"
#include "optune/db/database.hpp"
#include "optune/db/server_lock.hpp"
#include "postgres_test_server.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::testing::ScratchDatabase;
using optune::test_support::CommandRun;
using optune::test_support::slurp;

constexpr const char* kQuickTuneWith =
    "tune --op gemm --shape 48,40,36 --batch-size 2 --remeasure 0 --repeat 2 --min-repeat-ms 1 --quiet --tuner ";
const std::string kQuickTune = std::string(kQuickTuneWith) + "random";

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Whether this process may give a child a host name of its own (root, or a user namespace).
bool can_name_hosts() { return std::system("unshare --uts true >/dev/null 2>&1") == 0; }

class PostgresCliTest : public optune::test_support::JobCommandTest {
 protected:
  void SetUp() override {
    OPTUNE_REQUIRE_POSTGRES();
    JobCommandTest::SetUp();
  }

  std::map<std::string, std::size_t> records_per_run(const std::string& database) {
    std::map<std::string, std::size_t> runs;
    try {
      for (const auto& record : Database::open(database, Database::Mode::kReadOnly).records({})) ++runs[record.run_id];
    } catch (const optune::db::DatabaseError&) {  // no run has made the tables yet
    }
    return runs;
  }

  // `command` run by the shell, its output captured as optune() captures it.
  CommandRun shell(const std::string& command) {
    const int status = std::system((command + " >" + (dir_ / "shell.out").string() + " 2>" + (dir_ / "shell.err").string()).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "shell.out"), slurp(dir_ / "shell.err")};
  }

  // Starts `optune <arguments>` through the shell as if on host `host` (a UTS namespace of its own,
  // where the test may name hosts), with a lock folder of that host's; stdout to <host>.out,
  // stderr to <host>.err.
  pid_t start_on_host(const std::string& host, const std::string& arguments, bool named_hosts) {
    const std::string command = std::string(named_hosts ? "hostname " + host + " && " : "") + "OPTUNE_LOCK_DIR=" +
                                (dir_ / (host + "-locks")).string() + " exec " + OPTUNE_EXECUTABLE + " " + arguments +
                                " 2>" + (dir_ / (host + ".err")).string();
    if (named_hosts) return start({"/usr/bin/unshare", "--uts", "/bin/sh", "-c", command}, host);
    return start({"/bin/sh", "-c", command}, host);
  }

  std::string export_of(const std::string& database) {
    const CommandRun run = optune("export --db '" + database + "' --out " + (dir_ / "export.jsonl").string());
    EXPECT_EQ(run.code, 0) << run.err;
    return slurp(dir_ / "export.jsonl");
  }
};

TEST_F(PostgresCliTest, TuneQueryApplyBestAndMergeBothWaysGiveWhatAFileGives) {
  ScratchDatabase server;
  const CommandRun tuned = optune(std::string(kQuickTune) + " --trials 4 --format json --db '" + server.uri() + "'");
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  const auto outcome = nlohmann::json::parse(tuned.out);
  EXPECT_EQ(records_per_run(server.uri())[outcome["run_id"].get<std::string>()], 5u);  // 4 trials and the default

  const CommandRun query = optune("query --format json --db '" + server.uri() + "'");
  ASSERT_EQ(query.code, 0) << query.err;
  const auto best = nlohmann::json::parse(query.out);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0]["workload"], "gemm.f32.M48.N40.K36");

  // The server's records into a file (a release's snapshot), and that file into a fresh server
  // database (a laptop's results joining the team's): the same records each way.
  const std::string file = (dir_ / "snapshot.db").string();
  ASSERT_EQ(optune("merge " + file + " '" + server.uri() + "'").code, 0);
  EXPECT_EQ(Database::open(file, Database::Mode::kReadOnly).count(), 5u);
  ScratchDatabase joined;
  const CommandRun merged = optune("merge '" + joined.uri() + "' " + file);
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(merged.out.rfind("merged 5 new records", 0), 0u) << merged.out;
  EXPECT_EQ(export_of(server.uri()), export_of(file));
  EXPECT_EQ(export_of(joined.uri()), export_of(file));
  EXPECT_EQ(optune("merge '" + joined.uri() + "' " + file).out.rfind("merged 0 new records", 0), 0u);

  // apply-best writes the same header from the server as from the file, but for the line naming
  // where it came from.
  ASSERT_EQ(optune("apply-best --db '" + server.uri() + "' --out " + (dir_ / "server.hpp").string()).code, 0);
  ASSERT_EQ(optune("apply-best --db " + file + " --out " + (dir_ / "file.hpp").string()).code, 0);
  const auto after_first_line = [](const std::string& text) { return text.substr(text.find('\n')); };
  const std::string from_server = slurp(dir_ / "server.hpp");
  EXPECT_EQ(from_server.rfind("// Generated by `optune apply-best` from " + server.uri() + " ", 0), 0u) << from_server;
  EXPECT_NE(from_server.find("{48, 40, 36, optune::kernels::cpu::GemmConfig{"), std::string::npos);
  EXPECT_EQ(after_first_line(from_server), after_first_line(slurp(dir_ / "file.hpp")));
}

TEST_F(PostgresCliTest, BadConnectionStringsRefusedLoginsAndNewerSchemasAreExitTwoWithOneLine) {
  ScratchDatabase server;
  std::string with_password = server.uri();
  with_password.insert(with_password.find('@'), ":s3cret-word");
  const CommandRun refused = optune("query --db '" + with_password + "'");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("holds a password"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("s3cret-word"), std::string::npos) << refused.err;
  expect_bad_input("query --db 'postgresql://[::1/optune'", "not a valid PostgreSQL connection string");
  expect_bad_input("query --db postgresql://optune@127.0.0.1:1/optune", "cannot connect to the PostgreSQL server");
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db postgresql://optune@127.0.0.1:1/optune",
                   "cannot connect to the PostgreSQL server");
  // No password for the user at all: libpq's own message, and where a password belongs.
  const CommandRun no_password = optune("query --db '" + server.uri() + "'", "PGPASSFILE=/nonexistent");
  EXPECT_EQ(no_password.code, 2);
  EXPECT_NE(no_password.err.find("PGPASSFILE"), std::string::npos) << no_password.err;

  ASSERT_EQ(optune(std::string(kQuickTune) + " --trials 1 --db '" + server.uri() + "'").code, 0);
  optune::testing::run_on_database(server.uri(), "UPDATE optune_schema SET version = 99");
  expect_bad_input("query --db '" + server.uri() + "'", "is newer than this optune supports");
  expect_bad_input(std::string(kQuickTune) + " --trials 1 --db '" + server.uri() + "'", "is newer than this optune supports");
}

// A device's id as DeviceInfo::fingerprint_id() makes it: FNV-1a of the fingerprint's canonical dump.
std::string fingerprint_id(const nlohmann::json& fingerprint) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : fingerprint.dump()) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// Warm start across machines: the records another device left in the shared store start this
// device's cost model (the transfer set, read from the server).
TEST_F(PostgresCliTest, AnotherDevicesRecordsOnTheServerWarmStartTheModel) {
  ScratchDatabase lab, team;
  ASSERT_EQ(optune(std::string(kQuickTune) + " --trials 8 --db '" + lab.uri() + "'").code, 0);
  // The lab machine's records, as if measured on another model of CPU, joined into the team's store.
  std::ofstream other(dir_ / "other-device.jsonl");
  std::size_t measurements = 0;  // the tuner's own and the default's, not re-measurements of finalists
  std::istringstream lines(export_of(lab.uri()));
  for (std::string line; std::getline(lines, line);) {
    auto record = nlohmann::json::parse(line);
    record["device_fingerprint"]["name"] = "Another EPYC";
    record["device_id"] = fingerprint_id(record["device_fingerprint"]);
    measurements += record["tuner"] != "remeasure" && record["tuner"] != "final";
    other << record.dump() << "\n";
  }
  other.close();
  ASSERT_EQ(optune("import --db '" + team.uri() + "' " + (dir_ / "other-device.jsonl").string()).code, 0);
  const CommandRun tuned = optune(std::string(kQuickTuneWith) + "xgb --trials 4 --format json --db '" + team.uri() + "'");
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  const auto outcome = nlohmann::json::parse(tuned.out);
  EXPECT_GE(measurements, 9u);
  EXPECT_EQ(outcome["other_device_records"].get<std::size_t>(), measurements) << tuned.out;
  EXPECT_EQ(outcome["already_recorded"], 0);  // none of them counts as this device's
}

// Another machine's run: a lock folder of its own, and (where the test may name hosts) a host name
// of its own. The device's lock on the server still keeps it off this host's device, prune waits
// for every run writing the database, and a run on another host goes ahead.
TEST_F(PostgresCliTest, TheServerKeepsRunsOfOtherLockFoldersOffTheDeviceAndPruneAway) {
  ScratchDatabase server;
  fs::path job = dir_ / "nightly.toml";
  std::ofstream(job) << "name = \"nightly\"\nbudget = 400\ntuner = \"random\"\nbatch_size = 2\nremeasure = 0\n"
                        "database = \"" << server.uri() << "\"\n[[workload]]\nop = \"gemm\"\nshape = \"48,40,36\"\n"
                        "[measure]\nrepeat = 2\nmin_repeat_ms = 1\ntimeout = 10\n";
  const pid_t running = start_job(job, "nightly");
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       records_per_run(server.uri())["job:nightly"] == 0;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(dir_ / "nightly.out");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string elsewhere = "OPTUNE_LOCK_DIR=" + (dir_ / "other-machine-locks").string();
  const CommandRun tune = optune(std::string(kQuickTune) + " --trials 2 --db '" + server.uri() + "'", elsewhere);
  EXPECT_EQ(tune.code, 1) << tune.err;
  EXPECT_NE(tune.err.find("tune: another run (optune job nightly, pid " + std::to_string(running)), std::string::npos)
      << tune.err;
  EXPECT_NE(tune.err.find("locked on the database server"), std::string::npos) << tune.err;

  const CommandRun prune = optune("prune --keep 1 --db '" + server.uri() + "'", elsewhere);
  EXPECT_EQ(prune.code, 1) << prune.err;
  EXPECT_NE(prune.err.find("prune: a run (optune job nightly"), std::string::npos) << prune.err;

  if (can_name_hosts()) {
    const pid_t other_host = start_on_host("lab-2", std::string(kQuickTune) + " --trials 2 --db '" + server.uri() + "'", true);
    EXPECT_EQ(wait_job(other_host), 0) << slurp(dir_ / "lab-2.err");
  }
  ::kill(running, SIGKILL);
  wait_job(running);
  // The killed job's locks went with its connections.
  const CommandRun after = optune(std::string(kQuickTune) + " --trials 2 --db '" + server.uri() + "'", elsewhere);
  EXPECT_EQ(after.code, 0) << after.err;
  EXPECT_EQ(optune("prune --keep 1 --db '" + server.uri() + "'").code, 0);
}

// The server restarts while a tune writes to it: the tune waits, reconnects, and ends with every
// record stored once.
TEST_F(PostgresCliTest, ATuneWaitsOutAServerRestartAndStoresEveryRecord) {
  optune::testing::PrivateServer private_server(dir_ / "private-server");
  ScratchDatabase server(private_server.dir());
  const pid_t tune = start_on_host("lab-restart",
                                   std::string(kQuickTune) + " --trials 16 --format json --db '" + server.uri() + "'", false);
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120); records_per_run(server.uri()).empty();) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(dir_ / "lab-restart.err");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(private_server.run("restart"), 0);
  ASSERT_EQ(wait_job(tune), 0) << slurp(dir_ / "lab-restart.err");
  const std::string err = slurp(dir_ / "lab-restart.err");
  EXPECT_NE(err.find("the server went away"), std::string::npos) << err;
  EXPECT_NE(err.find("reconnecting for up to 60 s"), std::string::npos) << err;
  const auto outcome = nlohmann::json::parse(slurp(dir_ / "lab-restart.out"));
  EXPECT_EQ(records_per_run(server.uri())[outcome["run_id"].get<std::string>()], 17u);  // 16 trials and the default
}

// Issue 41's done-when: eight tunes and a job write one server database at once (eight hosts where
// the test may name them; else they take the one device in turn, --wait-lock), one tune SIGKILLed
// mid-run. Every finished run's records are all there; the killed one keeps what it had committed.
TEST_F(PostgresCliTest, EightTunesAndAJobWriteOneDatabaseAndAKilledWriterLosesAtMostItsBatch) {
  ScratchDatabase server;
  const bool hosts = can_name_hosts();
  constexpr int kTrials = 6;
  const auto wait_for = [&](const std::function<bool()>& done, const std::string& what) {
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300); !done();) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  // The one to be killed: a long run, started first, so that its records are the first seen.
  const pid_t victim =
      start_on_host("lab-victim", std::string(kQuickTune) + " --trials 400 --wait-lock --db '" + server.uri() + "'", hosts);
  std::string victim_run;
  wait_for([&] {
    const auto runs = records_per_run(server.uri());
    if (!runs.empty()) victim_run = runs.begin()->first;
    return !runs.empty();
  }, slurp(dir_ / "lab-victim.err"));

  std::vector<pid_t> tunes;
  for (int i = 0; i < 7; ++i)
    tunes.push_back(start_on_host("lab-" + std::to_string(i),
                                  std::string(kQuickTune) + " --trials " + std::to_string(kTrials) + " --seed " +
                                      std::to_string(i + 1) + " --wait-lock --format json --db '" + server.uri() + "'",
                                  hosts));
  fs::path job = dir_ / "nightly.toml";
  std::ofstream(job) << "name = \"nightly\"\nbudget = 6\ntuner = \"random\"\nbatch_size = 2\nremeasure = 0\n"
                        "database = \"" << server.uri() << "\"\n[[workload]]\nop = \"gemm\"\nshape = \"40,40,40\"\n"
                        "[measure]\nrepeat = 2\nmin_repeat_ms = 1\ntimeout = 10\n";
  const pid_t nightly = start_on_host("lab-job", "job run --wait-lock " + job.string(), hosts);
  // Killed while the others write too (where they can run beside it).
  if (hosts) wait_for([&] { return records_per_run(server.uri()).size() >= 3; }, "no other run wrote");
  const std::size_t committed = records_per_run(server.uri())[victim_run];
  ::kill(victim, SIGKILL);
  EXPECT_EQ(wait_job(victim), 128 + SIGKILL);

  std::set<std::string> finished_runs;
  for (int i = 0; i < 7; ++i) {
    const std::string host = "lab-" + std::to_string(i);
    ASSERT_EQ(wait_job(tunes[i]), 0) << slurp(dir_ / (host + ".err"));
    const auto outcome = nlohmann::json::parse(slurp(dir_ / (host + ".out")));
    EXPECT_EQ(outcome["trials"], kTrials);
    finished_runs.insert(outcome["run_id"].get<std::string>());
  }
  ASSERT_EQ(wait_job(nightly), 0) << slurp(dir_ / "lab-job.err");

  const auto runs = records_per_run(server.uri());
  EXPECT_EQ(finished_runs.size(), 7u);
  for (const auto& run : finished_runs) EXPECT_EQ(runs.at(run), static_cast<std::size_t>(kTrials + 1)) << run;  // and the default
  EXPECT_GE(runs.at("job:nightly"), 6u);
  EXPECT_EQ(runs.size(), 7u + 2u);  // and the job's, and the victim's
  // Everything the victim had committed is there; at most the batch it was writing then came in.
  EXPECT_GE(runs.at(victim_run), committed);
  EXPECT_LE(runs.at(victim_run), committed + 2);
  const CommandRun query = optune("query --format json --db '" + server.uri() + "'");
  EXPECT_EQ(query.code, 0) << query.err;
}

}  // namespace
