// The optune command under hostile input (issue 24): numbers that wrap or are not numbers, a
// broken environment, forged records, stale defaults, a full disk. Real processes and SQLite
// files; each test states the behaviour it pins and checks that a rejected command leaves the
// database as it was.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>

#include "optune/db/database.hpp"
#include "../support/command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::CommandRun;

constexpr const char* kTiming = "--repeat 2 --min-repeat-ms 1 --quiet";

class HostileInputCliTest : public optune::test_support::CommandTest {
 protected:
  // Every record of the database, as export writes it: what "unchanged" is compared by.
  std::vector<std::string> stored_records(const std::string& path) {
    std::vector<std::string> lines;
    if (!fs::exists(path)) return lines;
    auto database = Database::open(path, Database::Mode::kReadOnly);
    for (const auto& record : database.records({})) lines.push_back(optune::db::to_json(record).dump());
    return lines;
  }

  // Inserts a copy of the database's fastest record, changed by `change`, through the database's
  // own API (which checks types only): a record forged or corrupted after the tuner wrote it.
  optune::db::TuningRecord plant(const std::string& path,
                                 const std::function<void(optune::db::TuningRecord&)>& change) {
    auto database = Database::open(path);
    auto records = database.top_k({}, 1);
    EXPECT_FALSE(records.empty());
    optune::db::TuningRecord record = records.front();
    change(record);
    database.insert({record});
    return record;
  }

  void tune_tiny(const std::string& database, int seed, int trials = 2) {
    CommandRun run = optune("tune --op gemm --shape 48,40,36 --tuner random --batch-size 2 --remeasure 1 --trials " +
                            std::to_string(trials) + " --seed " + std::to_string(seed) + " " + kTiming + " --db " +
                            database);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }

  // Good records to import: a second database's, tuned with another seed and exported to `lines`.
  std::vector<nlohmann::json> exported_records(const fs::path& lines) {
    const std::string source = (dir_ / "source.db").string();
    tune_tiny(source, 2);
    EXPECT_EQ(optune("export --db " + source + " --out " + lines.string()).code, 0);
    std::vector<nlohmann::json> records;
    std::ifstream in(lines);
    for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
    return records;
  }
};

// --- Items 1 and 2: numbers on the command line -------------------------------------------------

TEST_F(HostileInputCliTest, NegativeOverflowingAndNotANumberOptionsAreRejectedNamingTheOption) {
  tune_tiny(db(), 1);
  const auto before = stored_records(db());
  const std::string tune = "tune --op gemm --shape 48,40,36 --quiet --db " + db() + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tune + "--trials -5", "--trials"},
      {tune + "--trials 99999999999999999999999", "--trials"},
      {tune + "--trials 18446744073709551615", "--trials"},
      {tune + "--trials 0x10", "--trials"},
      {tune + "--trials +5", "--trials"},
      {tune + "--jobs -3", "--jobs"},
      {tune + "--seed -1", "--seed"},
      {tune + "--remeasure -1", "--remeasure"},
      {tune + "--early-stopping -2", "--early-stopping"},
      {tune + "--batch-size 1e3", "--batch-size"},
      {tune + "--number -1", "--number"},
      {tune + "--timeout nan", "--timeout"},
      {tune + "--timeout inf", "--timeout"},
      {tune + "--min-repeat-ms nan", "--min-repeat-ms"},
      {tune + "--compile-timeout -inf", "--compile-timeout"},
      {tune + "--rpc-wait nan", "--rpc-wait"},
      {tune + "--trials-per-task -1", "--trials-per-task"},
      {"tune --suite x.toml --budget 99999999999999999999 --db " + db(), "--budget"},
      {"tune --suite x.toml --budget 0 --db " + db(), "--budget"},
      {"prune --keep -1 --db " + db(), "--keep"},
      {"prune --keep 99999999999999999999 --db " + db(), "--keep"},
      {"query --top -1 --db " + db(), "--top"},
      {"regress --suite x.toml --tolerance nan --db " + db(), "--tolerance"},
      {"regress --suite x.toml --attempts -1 --db " + db(), "--attempts"},
      {"rpc server --port -1", "--port"},
      {"rpc server --port 70000", "--port"},
      {"rpc server --max-artifact-mb nan", "--max-artifact-mb"},
      {"rpc server --heartbeat nan", "--heartbeat"},
      {"rpc tracker --heartbeat-timeout nan", "--heartbeat-timeout"},
  };
  // A command that took the number would measure or serve: the limit ends it and fails the case.
  for (const auto& [arguments, option] : cases) {
    CommandRun run = optune(arguments, "timeout 20");
    EXPECT_EQ(run.code, 2) << arguments << "\n" << run.out << run.err;
    EXPECT_NE(run.err.find(option), std::string::npos) << arguments << "\nstderr: " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << arguments << "\n" << run.err;
  }
  EXPECT_EQ(stored_records(db()), before);
}

// Every numeric option of every command, as its --help lists them (INT, UINT, FLOAT), rejects
// what no range takes: an option added later without a range of its own is covered too.
TEST_F(HostileInputCliTest, EveryNumericOptionOfEveryCommandRejectsWrappingAndNotANumber) {
  const std::regex option_line(R"(^\s+(?:-\w,)?(--[\w-]+) (INT|UINT|FLOAT)\b)");
  const std::regex subcommand_line(R"(^\s{2}([a-z][\w-]*)\s{2,}\S)");
  std::vector<std::string> commands = {""};
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> numeric;  // command -> (option, type)
  for (std::size_t i = 0; i < commands.size(); ++i) {
    CommandRun help = optune(commands[i] + " --help");
    ASSERT_EQ(help.code, 0) << commands[i] << help.err;
    std::istringstream lines(help.out);
    bool in_subcommands = false;
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (line.rfind("Subcommands:", 0) == 0) in_subcommands = true;
      else if (!line.empty() && line[0] != ' ') in_subcommands = false;
      if (in_subcommands && std::regex_search(line, match, subcommand_line))
        commands.push_back((commands[i].empty() ? "" : commands[i] + " ") + match[1].str());
      else if (std::regex_search(line, match, option_line))
        numeric[commands[i]].emplace_back(match[1], match[2]);
    }
  }
  ASSERT_GE(numeric.size(), 6u) << "the help walk found too few commands with numeric options";
  std::size_t checked = 0;
  for (const auto& [command, options] : numeric) {
    for (const auto& [option, type] : options) {
      std::vector<std::string> values = {"99999999999999999999999", "nan", "1x"};
      if (type == "UINT") values.push_back("-5");
      if (type == "FLOAT") values.insert(values.end(), {"inf", "-inf", "1e999"});
      for (const auto& value : values) {
        const std::string arguments = command + " " + option + " " + value;
        CommandRun run = optune(arguments, "timeout 20");
        EXPECT_EQ(run.code, 2) << arguments << "\n" << run.out << run.err;
        EXPECT_NE(run.err.find(option), std::string::npos) << arguments << "\nstderr: " << run.err;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << arguments << "\n" << run.err;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 60u);
}

// --- Item 3: a broken environment is the run's failure, not the candidates' ----------------------

TEST_F(HostileInputCliTest, MissingCompilerStopsTheRunAndRecordsNothing) {
  tune_tiny(db(), 1);
  const auto before = stored_records(db());
  CommandRun run = optune("tune --op gemm --shape 40,40,40 --tuner random --trials 4 --batch-size 2 --compiler "
                          "/nonexistent/cc " + std::string(kTiming) + " --db " + db());
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("build_error"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("/nonexistent/cc"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(stored_records(db()), before);
  // With the compiler back, the same configs are measured, not skipped as known failures.
  CommandRun again = optune("tune --op gemm --shape 40,40,40 --tuner random --trials 4 --batch-size 2 --remeasure 0 " +
                            std::string(kTiming) + " --db " + db());
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("4 measured, 0 failed"), std::string::npos) << again.out;
}

TEST_F(HostileInputCliTest, WorkerThatCannotStartStopsTheRunAndRecordsNothing) {
  // optune looks for its worker beside itself: a copy beside a worker that dies at once.
  fs::create_directories(dir_ / "bin");
  fs::copy_file(OPTUNE_EXECUTABLE, dir_ / "bin" / "optune");
  std::ofstream(dir_ / "bin" / "optune-worker") << "#!/bin/sh\necho 'worker: cannot start' >&2\nexit 3\n";
  fs::permissions(dir_ / "bin" / "optune-worker", fs::perms::owner_all);
  tune_tiny(db(), 1);
  const auto before = stored_records(db());
  const std::string command = (dir_ / "bin" / "optune").string() +
                              " tune --op gemm --shape 40,40,40 --tuner random --trials 4 --batch-size 2 " + kTiming +
                              " --db " + db() + " >" + (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
  const int status = std::system(command.c_str());
  const std::string err = optune::test_support::slurp(dir_ / "err");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("the default config and all"), std::string::npos) << err;
  EXPECT_EQ(stored_records(db()), before);
}

TEST_F(HostileInputCliTest, JobWithAMissingCompilerFailsWithALogLineAndRecordsNothing) {
  fs::path job = dir_ / "broken.toml";
  std::ofstream(job) << "name = \"broken\"\nbudget = 4\ntuner = \"random\"\nbatch_size = 2\ndatabase = \"" << db()
                     << "\"\n[[workload]]\nop = \"gemm\"\nshape = \"48,40,36\"\n"
                        "[measure]\nrepeat = 2\nmin_repeat_ms = 1\ncompiler = \"/nonexistent/cc\"\n";
  CommandRun run = optune("job run " + job.string());
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("/nonexistent/cc"), std::string::npos) << run.err;
  const std::string log = optune::test_support::slurp(dir_ / "broken.log");
  EXPECT_NE(log.find("job broken: failed:"), std::string::npos) << log;
  EXPECT_TRUE(stored_records(db()).empty());
}

// --- Item 4: import and merge check values, readers pass over bad records --------------------------

// The forgeries of issue 24 and their kin, each one line of an otherwise good file.
std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> forgeries() {
  return {
      {"median_seconds", [](nlohmann::json& r) { r["median_seconds"] = -1; }},
      {"gflops", [](nlohmann::json& r) { r["gflops"] = 1e300; }},
      {"gflops", [](nlohmann::json& r) { r["gflops"] = 1e6; }},
      {"error_kind", [](nlohmann::json& r) { r["error_kind"] = "exploded"; }},
      {"config", [](nlohmann::json& r) { r["config"]["turbo"] = 1; }},
      {"config", [](nlohmann::json& r) { r["config"].erase(r["config"].begin()); }},
      {"workload_key", [](nlohmann::json& r) { r["workload_key"] = "gemm.f32.M-1.N0.K99999999999"; }},
      {"workload_key", [](nlohmann::json& r) { r["workload_key"] = "conv2d.f32.M48.N40.K36"; }},
      {"template", [](nlohmann::json& r) { r["template_name"] = "gemm.fpga"; }},
      {"template", [](nlohmann::json& r) { r["template_name"] = "conv2d.cpu"; }},
      {"target", [](nlohmann::json& r) { r["target"] = "opencl"; }},
      {"device_id", [](nlohmann::json& r) { r["device_id"] = "0123456789abcdef"; }},
      {"timestamp", [](nlohmann::json& r) { r["timestamp"] = 4e9; }},
      {"costs", [](nlohmann::json& r) { r["costs"] = nlohmann::json::array(); }},
      {"median", [](nlohmann::json& r) { r["costs"] = {1.0, 2.0, 3.0}; }},
      // Consistent figures, 5,000,000 GFLOP/s: faster than any device.
      {"beyond any device", [](nlohmann::json& r) {
         const double seconds = 2.0 * 48 * 40 * 36 / 5e6 / 1e9;
         r["costs"] = {seconds};
         r["median_seconds"] = seconds;
         r["gflops"] = 5e6;
       }},
  };
}

TEST_F(HostileInputCliTest, ImportRejectsAFileWithOneRecordTheTunerWouldNotWrite) {
  tune_tiny(db(), 1);
  const fs::path lines = dir_ / "records.jsonl";
  const auto records = exported_records(lines);
  ASSERT_GE(records.size(), 3u);
  const auto before = stored_records(db());
  for (const auto& [problem, forge] : forgeries()) {
    // The fastest record forged, as the second line of three.
    std::size_t fastest = 0;
    for (std::size_t i = 0; i < records.size(); ++i)
      if (records[i]["error_kind"] == "ok" && records[i]["median_seconds"] < records[fastest]["median_seconds"])
        fastest = i;
    nlohmann::json forged = records[fastest];
    forge(forged);
    const fs::path file = dir_ / "forged.jsonl";
    std::ofstream(file) << records[0].dump() << "\n" << forged.dump() << "\n" << records[1].dump() << "\n";
    CommandRun run = optune("import " + file.string() + " --db " + db());
    EXPECT_EQ(run.code, 2) << problem << "\n" << run.out << run.err;
    EXPECT_NE(run.err.find("line 2: "), std::string::npos) << problem << "\n" << run.err;
    EXPECT_NE(run.err.find(problem), std::string::npos) << problem << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(stored_records(db()), before) << problem;
  }
  // The file as exported imports.
  CommandRun good = optune("import " + lines.string() + " --db " + db());
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(stored_records(db()).size(), before.size() + records.size());
}

TEST_F(HostileInputCliTest, MergeRefusesADatabaseHoldingABadRecordAndWritesNothing) {
  tune_tiny(db(), 1);
  const std::string other = (dir_ / "other.db").string();
  tune_tiny(other, 2);
  plant(other, [](optune::db::TuningRecord& record) { record.gflops = 1e300; });
  const auto before = stored_records(db());
  const auto other_before = stored_records(other);
  CommandRun run = optune("merge " + db() + " " + other);
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("record "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("gflops"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(stored_records(db()), before);
  EXPECT_EQ(stored_records(other), other_before);
  // Into a third file: the good first database is not written there either.
  const std::string into = (dir_ / "into.db").string();
  CommandRun into_run = optune("merge " + db() + " " + other + " --into " + into);
  EXPECT_EQ(into_run.code, 2) << into_run.out << into_run.err;
  EXPECT_TRUE(stored_records(into).empty());
}

TEST_F(HostileInputCliTest, ApplyBestPassesOverBadRecordsWithANote) {
  tune_tiny(db(), 1);
  plant(db(), [](optune::db::TuningRecord& record) { record.gflops = 1e6; });
  plant(db(), [](optune::db::TuningRecord& record) { record.workload_key = "gemm.f32.M-1.N0.K99999999999"; });
  const fs::path header = dir_ / "tuned.hpp";
  CommandRun run = optune("apply-best --db " + db() + " --target cpu --out " + header.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("note: passed over a bad record of gemm.f32.M-1.N0.K99999999999"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("gflops"), std::string::npos) << run.err;
  const std::string text = optune::test_support::slurp(header);
  EXPECT_NE(text.find("// 1 tuned workload."), std::string::npos) << text;
  EXPECT_EQ(text.find("M-1"), std::string::npos) << text;
  EXPECT_EQ(text.find("1000000.0 GFLOP/s"), std::string::npos) << text;
}

TEST_F(HostileInputCliTest, QueryIsNotLedByAForgedRecord) {
  tune_tiny(db(), 1);
  const auto best = Database::open(db(), Database::Mode::kReadOnly).top_k({}, 1).front();
  plant(db(), [](optune::db::TuningRecord& record) {
    record.gflops = 2e6;
    record.median_seconds = 2.0 * 48 * 40 * 36 / 2e6 / 1e9;
    record.costs = {record.median_seconds};
    record.config = nlohmann::json::parse(R"({"forged": true})");
  });
  CommandRun run = optune("query --db " + db() + " --top 1 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  auto shown = nlohmann::json::parse(run.out);
  ASSERT_EQ(shown.size(), 1u) << run.out;
  EXPECT_EQ(shown[0]["config"], best.config) << run.out;
  EXPECT_NE(run.err.find("note: passed over 1 bad record"), std::string::npos) << run.err;
}

// A database edited by hand or damaged on disk: rows whose JSON columns nest 200,000 deep (a stack
// overflow in every reader before), are not JSON, or belong to no device row are passed over with
// a note; text that is no UTF-8 reads with U+FFFD. A FIFO, a negative schema version and an --out
// naming the database are refused with one line, and the records stay.
TEST_F(HostileInputCliTest, DamagedRowsArePassedOverAndDangerousPathsRefused) {
  tune_tiny(db(), 1, 4);
  const auto before = stored_records(db());
  const std::string damaged = (dir_ / "damaged.db").string();
  fs::copy_file(db(), damaged);
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(damaged.c_str(), &handle), SQLITE_OK);
  // Without the final comparison's winner mark (which keeps its config first), the fastest record
  // leads the ranking: its config is the one damaged first, in every record of it (damaging only
  // the latest would let an earlier, faster measurement of that config lead in its place).
  ASSERT_EQ(sqlite3_exec(handle, "UPDATE records SET winner = 0", nullptr, nullptr, nullptr), SQLITE_OK);
  const std::string best = std::to_string(Database::open(damaged, Database::Mode::kReadOnly).top_k({}, 1).front().id);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const std::string& sql :
       {"UPDATE records SET config = '" + deep + "' WHERE config = (SELECT config FROM records WHERE id = " + best + ")",
        std::string("UPDATE records SET costs = '[1, \"x\"' WHERE id = (SELECT max(id) FROM records)"),
        std::string("UPDATE records SET error_message = CAST(x'636166e920ff' AS TEXT) WHERE id = 1"),
        // a time no run gives, and a template of another operator (apply-best crashed on it), on a
        // record made a consistent 1 s: under that template of its own it is the latest record of
        // its config, and an early one fast on a busy machine would otherwise rank first
        std::string("UPDATE records SET median_seconds = -1 WHERE id = 2"),
        std::string("UPDATE records SET template_name = 'conv2d.cpu', costs = '[1.0]', median_seconds = 1, "
                    "gflops = 2.0 * 48 * 40 * 36 / 1e9, spread = NULL WHERE id = 3")})
    ASSERT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
  const std::vector<std::string> readers = {"query --top 1 --format json", "query --history --format json",
                                            "report --out " + (dir_ / "r.html").string(),
                                            "apply-best --target cpu --out " + (dir_ / "t.hpp").string()};
  for (const std::string& command : readers) {
    CommandRun run = optune(command + " --db " + damaged);
    EXPECT_EQ(run.code, 0) << command << "\n" << run.out << run.err;
  }
  CommandRun query = optune("query --top 1 --format json --db " + damaged);
  EXPECT_NE(query.err.find("note: passed over"), std::string::npos) << query.err;
  EXPECT_NE(optune("query --history --db " + damaged).out.find("unreadable config: nested too deep"), std::string::npos);
  EXPECT_EQ(query.out.find("unreadable"), std::string::npos) << query.out;
  EXPECT_NE(optune("query --history --format json --db " + damaged).out.find("caf\xef\xbf\xbd"), std::string::npos);
  const std::string report = optune::test_support::slurp(dir_ / "r.html");
  EXPECT_EQ(report.find("-1000.0000"), std::string::npos) << "a forged time is no task's best";
  EXPECT_NE(report.find("bad records passed over"), std::string::npos);

  const std::string fifo = (dir_ / "fifo.db").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_bad_input("query --db " + fifo, "not a regular file");
  const std::string negative = (dir_ / "negative.db").string();
  fs::copy_file(db(), negative);
  ASSERT_EQ(sqlite3_open(negative.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "PRAGMA user_version = -1", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(handle);
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db " + negative, "schema version -1");
  for (const std::string command : {"export --out ", "report --out ", "apply-best --target cpu --out "})
    expect_bad_input(command + db() + " --db " + db(), "is the database");
  EXPECT_EQ(stored_records(db()), before);
}

// A database in a folder its reader may not write (a results folder mounted read-only, a database
// shipped beside the sources for apply-best): SQLite cannot make a WAL database's -shm file there,
// and readers open it as immutable instead of failing with "attempt to write a readonly database".
TEST_F(HostileInputCliTest, ADatabaseInAFolderTheReaderMayNotWriteIsRead) {
  if (geteuid() != 0 || std::system("command -v runuser > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "reads as the user nobody: needs root and runuser";
  tune_tiny(db(), 1);
  const fs::path folder = dir_ / "read_only";
  fs::create_directory(folder);
  fs::copy_file(db(), folder / "optune.db");
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  CommandRun run = optune("query --format json --db " + (folder / "optune.db").string(), "runuser -u nobody --");
  fs::permissions(folder, fs::perms::owner_all);  // the fixture removes it
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out).size(), 1u) << run.out;
}

// --- Item 7: summaries count the default with its latest record -----------------------------------

// Records of the default config: its first measurement taken in a busy spell (100x slower), then
// re-measured at the end faster than every other config. The default is the best config.
void make_default_stale_and_best(const std::string& path, const std::string& run_id) {
  auto database = Database::open(path);
  std::optional<optune::db::TuningRecord> default_record, fastest;
  for (const auto& record : database.records({})) {
    if (record.run_id != run_id || !record.ok()) continue;
    if (record.is_default) default_record = record;
    if (!fastest || record.median_seconds < fastest->median_seconds) fastest = record;
  }
  ASSERT_TRUE(default_record && fastest);
  auto scaled = [](optune::db::TuningRecord record, double scale, double timestamp) {
    for (double& cost : record.costs) cost *= scale;
    record.median_seconds *= scale;
    record.gflops /= scale;
    record.timestamp = timestamp;
    // Exact and taken on a quiet machine: the planted figures are to be believed, whatever noise
    // the run's own records had (a noisy record cannot displace the run's declared winner).
    record.costs.assign(record.costs.size(), record.median_seconds);
    record.spread = 0.0;
    record.load = 0.0;
    return record;
  };
  optune::db::TuningRecord busy = scaled(*default_record, 100, default_record->timestamp + 0.001);
  optune::db::TuningRecord remeasured =
      scaled(*default_record, 0.5 * fastest->median_seconds / default_record->median_seconds, busy.timestamp + 3600);
  remeasured.is_default = false;
  remeasured.tuner = "remeasure";
  database.insert({busy, remeasured});
  // Without the final comparison's winner mark, which keeps its config first unless a record
  // beats it beyond the noise of the run's own (wide on a busy machine), the latest default leads.
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(handle, "UPDATE records SET winner = 0", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(handle);
}

TEST_F(HostileInputCliTest, JobSummaryAndReportCountTheDefaultWithItsLatestRecord) {
  const fs::path job = dir_ / "nightly.toml";
  std::ofstream(job) << "name = \"nightly\"\nbudget = 2\ntuner = \"random\"\nbatch_size = 2\nremeasure = 1\nseed = 3\n"
                        "database = \"" << db() << "\"\n[[workload]]\nname = \"gemm48\"\nop = \"gemm\"\n"
                        "shape = \"48,40,36\"\n[measure]\nrepeat = 2\nmin_repeat_ms = 1\n";
  CommandRun first = optune("job run " + job.string());
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  make_default_stale_and_best(db(), "job:nightly");
  // The budget is spent: the job only prints its summary, read from the database.
  CommandRun again = optune("job run " + job.string());
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  std::string row;
  std::istringstream lines(again.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("gemm48 ", 0) == 0) row = line;
  ASSERT_FALSE(row.empty()) << again.out;
  EXPECT_NE(row.find(" default"), std::string::npos) << row;
  EXPECT_EQ(row.find("x"), std::string::npos) << "a speed-up against the stale default: " << row;

  const fs::path report = dir_ / "report.html";
  CommandRun made = optune("report --db " + db() + " --out " + report.string());
  ASSERT_EQ(made.code, 0) << made.err;
  const std::string html = optune::test_support::slurp(report);
  EXPECT_NE(html.find("<td>default</td>"), std::string::npos) << html.substr(0, 3000);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\d\.\d\dx</td>)"))) << html.substr(0, 3000);
}

TEST_F(HostileInputCliTest, TuneSummaryShowsTheDefaultsLatestRecordAndSaysWhenItIsTheBest) {
  CommandRun run = optune("tune --op gemm --shape 48,40,36 --tuner random --trials 2 --batch-size 2 --remeasure 2 "
                          "--seed 7 " + std::string(kTiming) + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  auto database = Database::open(db(), Database::Mode::kReadOnly);
  std::optional<optune::db::TuningRecord> first_default, latest_default;
  for (const auto& record : database.records({})) {
    if (record.is_default) first_default = record;
  }
  ASSERT_TRUE(first_default);
  for (const auto& record : database.records({}))
    if (record.ok() && record.config_text() == first_default->config_text()) latest_default = record;
  ASSERT_NE(latest_default->tuner, "default") << "the closing re-measurement takes in the default";
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.4f ms", latest_default->median_seconds * 1e3);
  std::string default_line = run.out.substr(run.out.find("default    "));
  default_line = default_line.substr(0, default_line.find('\n'));
  EXPECT_NE(default_line.find(expected), std::string::npos) << default_line << " vs " << expected;
  const auto best = database.top_k({}, 1).front();
  const bool best_is_default = best.config_text() == first_default->config_text();
  EXPECT_EQ(run.out.find("no speed-up: the best config is the default") != std::string::npos, best_is_default)
      << run.out;
}

// --- Item 9: a full disk is the run's failure ---------------------------------------------------

TEST_F(HostileInputCliTest, FullDiskIsAFailureOfTheRunNotBadInput) {
  tune_tiny(db(), 1);
  const auto before = stored_records(db());
  // Many good records to import: the exported ones, each at other timestamps (new records).
  const fs::path lines = dir_ / "records.jsonl";
  const auto records = exported_records(lines);
  const fs::path many = dir_ / "many.jsonl";
  {
    std::ofstream out(many);
    for (int copy = 0; copy < 1000; ++copy)
      for (auto record : records) {
        record["timestamp"] = record["timestamp"].get<double>() - copy;
        out << record.dump() << "\n";
      }
  }
  ASSERT_GT(fs::file_size(many), 4u << 20);
  // A file-size limit of 1 MiB stands in for a full disk: SQLite's writes past it fail (SIGXFSZ
  // ignored, as a full disk raises no signal either).
  const fs::path limited = dir_ / "import.sh";
  std::ofstream(limited) << "trap '' XFSZ\nulimit -f 2048\nexec \"$@\"\n";
  CommandRun run = optune("import " + many.string() + " --db " + db(), "sh " + limited.string());
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("optune: failed: "), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(stored_records(db()), before);
  auto database = Database::open(db(), Database::Mode::kReadOnly);
  EXPECT_EQ(database.integrity_check(), "ok");
}

}  // namespace
