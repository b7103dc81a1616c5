// How far a record is to be trusted: its spread and load are stored and read back, exported and
// imported, unknown where they were not measured, and a database of schema 1 (before them) is read
// as it is and migrated with them unknown. And the tie rule: a winner a final comparison declared
// stays the best until a config is measured faster beyond noise.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <limits>
#include <sstream>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

using testing::TempDir;
using testing::kGemmTask;
using testing::failed_record;
using testing::ok_record;
using testing::read_bytes;

void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(handle);
}

// A database as optune wrote it at schema 1, with one record of kGemmTask (tile_m 8, 5 ms).
void write_schema_one_database(const std::string& path) {
  run_sql(path, R"sql(
    PRAGMA journal_mode = WAL;
    CREATE TABLE devices (id TEXT PRIMARY KEY, name TEXT NOT NULL, fingerprint TEXT NOT NULL);
    CREATE TABLE workloads (key TEXT PRIMARY KEY, op TEXT NOT NULL);
    CREATE TABLE records (
      id INTEGER PRIMARY KEY, content_hash TEXT NOT NULL UNIQUE, workload_key TEXT NOT NULL REFERENCES workloads(key),
      template_name TEXT NOT NULL, target TEXT NOT NULL, device_id TEXT NOT NULL REFERENCES devices(id),
      config TEXT NOT NULL, costs TEXT NOT NULL, median_seconds REAL NOT NULL, gflops REAL NOT NULL,
      error_kind TEXT NOT NULL, error_message TEXT NOT NULL, build_seconds REAL NOT NULL, timestamp REAL NOT NULL,
      tuner TEXT NOT NULL, run_id TEXT NOT NULL, optune_version TEXT NOT NULL, is_default INTEGER NOT NULL);
    CREATE INDEX records_by_task ON records (workload_key, template_name, target, device_id, config);
    CREATE INDEX records_best ON records (workload_key, target, device_id, median_seconds) WHERE error_kind = 'ok';
    CREATE INDEX records_by_time ON records (timestamp);
    INSERT INTO devices VALUES ('dev0001', 'Intel(R) Xeon(R) Platinum 8480', '{"kind":"cpu","name":"Intel(R) Xeon(R) Platinum 8480"}');
    INSERT INTO workloads VALUES ('gemm.f32.M512.N512.K512', 'gemm');
    INSERT INTO records VALUES (1, 'hash-of-the-old-record', 'gemm.f32.M512.N512.K512', 'cpu_gemm', 'cpu', 'dev0001',
      '{"tile_m":8}', '[0.005,0.005,0.005]', 0.005, 53.7, 'ok', '', 0.25, 1000, 'xgb', 'run-0', '0.0.9', 0);
    PRAGMA application_id = 1330664533;
    PRAGMA user_version = 1;
  )sql");
}

// A successful record of kGemmTask known to +-`spread`, measured beside a load of `load`.
TuningRecord measured(int tile, double median, double spread, double load) {
  TuningRecord record = ok_record(tile, median);
  record.spread = spread;
  record.load = load;
  return record;
}

TEST(RecordTrust, SpreadAndLoadAreWrittenAndReadBack) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({measured(8, 0.004, 0.012, 0.0), measured(16, 0.003, 0.02, 0.47)});
  const auto stored = db.task_records(kGemmTask);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].spread, 0.012);
  EXPECT_EQ(stored[0].load, 0.0);
  EXPECT_FALSE(stored[0].is_noisy());
  EXPECT_EQ(stored[1].spread, 0.02);
  EXPECT_EQ(stored[1].load, 0.47);
  EXPECT_TRUE(stored[1].is_noisy()) << "measured while other processes took half the machine";
}

TEST(RecordTrust, TheGpuSharedWithAnotherProcessIsStoredExportedAndNoisy) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  TuningRecord shared = measured(8, 0.004, 0.03, 0.01);
  shared.device_load = 0.46;  // a second process ran kernels on the GPU half the time
  TuningRecord alone = measured(16, 0.003, 0.03, 0.01);
  alone.device_load = 0.0;
  db.insert({shared, alone});
  const auto stored = db.task_records(kGemmTask);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].device_load, 0.46);
  EXPECT_TRUE(stored[0].is_noisy());
  EXPECT_EQ(noise_text(stored[0]), "measured while other processes took 46% of the GPU");
  EXPECT_EQ(stored[1].device_load, 0.0);
  EXPECT_FALSE(stored[1].is_noisy());
  EXPECT_EQ(busy_text(0.3, 0.2), "other processes took 20% of the GPU") << "a GPU is judged by its own load";
  EXPECT_EQ(busy_text(0.3, std::nullopt), "other processes took 30% of the CPU");
  EXPECT_FALSE(is_busy(0.6, 0.02)) << "the host's compiles beside a GPU's quiet kernels";
  EXPECT_EQ(busy_share(0.6, 0.02), 0.02);
  EXPECT_EQ(busy_text(0.05, 0.02), "");

  std::stringstream lines;
  db.export_jsonl(lines, {});
  auto copy = Database::open(dir.file("copy.db"));
  EXPECT_EQ(copy.import_jsonl(lines).records, 2u);
  EXPECT_EQ(copy.task_records(kGemmTask)[0].device_load, 0.46);
  EXPECT_FALSE(to_json(ok_record(8, 0.004)).contains("device_load")) << "unknown stays out of the line";
}

TEST(RecordTrust, AQuietEstimateTakesTheLargerBusyShareOff) {
  EXPECT_DOUBLE_EQ(quiet_gflops_estimate(100, 0.5, std::nullopt), 200);
  EXPECT_DOUBLE_EQ(quiet_gflops_estimate(100, 0.2, 0.75), 400) << "the GPU's share is the larger";
  EXPECT_DOUBLE_EQ(quiet_gflops_estimate(100, std::nullopt, std::nullopt), 100) << "unknown loads take nothing off";
  EXPECT_DOUBLE_EQ(quiet_gflops_estimate(100, 1.0, std::nullopt), 1000) << "at most kMaxBusyShare is taken off";
  EXPECT_DOUBLE_EQ(quiet_gflops_estimate(0, 0.5, 0.5), 0) << "a failure stays a failure";
}

TEST(RecordTrust, AWideSpreadAloneMakesARecordNoisy) {
  TuningRecord record = ok_record(8, 0.004);
  record.spread = kNoisySpread * 2;
  EXPECT_TRUE(record.is_noisy());
  record.spread = kNoisySpread / 2;
  EXPECT_FALSE(record.is_noisy());
  record.spread.reset();
  EXPECT_FALSE(record.is_noisy()) << "unknown is not noisy: an old record is read as it always was";
}

TEST(RecordTrust, UnknownFieldsStayUnknownAndOutOfTheJsonLine) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({ok_record(8, 0.004)});
  const auto stored = db.task_records(kGemmTask).front();
  EXPECT_FALSE(stored.spread.has_value());
  EXPECT_FALSE(stored.load.has_value());
  const auto line = to_json(stored);
  EXPECT_FALSE(line.contains("spread")) << line.dump();
  EXPECT_FALSE(line.contains("load")) << line.dump();
}

TEST(RecordTrust, ExportAndImportCarryThemAndNullReadsAsUnknown) {
  TempDir dir;
  auto source = Database::open(dir.file("a.db"));
  source.insert({measured(8, 0.004, 0.031, 0.25)});
  std::stringstream lines;
  source.export_jsonl(lines, {});
  auto copy = Database::open(dir.file("b.db"));
  EXPECT_EQ(copy.import_jsonl(lines).records, 1u);
  const auto stored = copy.task_records(kGemmTask).front();
  EXPECT_EQ(stored.spread, 0.031);
  EXPECT_EQ(stored.load, 0.25);

  auto with_nulls = to_json(ok_record(16, 0.005));
  with_nulls["spread"] = nullptr;
  with_nulls["load"] = nullptr;
  std::stringstream null_line(with_nulls.dump() + "\n");
  EXPECT_EQ(copy.import_jsonl(null_line).records, 1u);
  for (const auto& r : copy.task_records(kGemmTask))
    if (r.config["tile_m"] == 16) EXPECT_FALSE(r.spread || r.load);

  auto mistyped = to_json(ok_record(32, 0.005));
  mistyped["load"] = "busy";
  std::stringstream bad(mistyped.dump() + "\n");
  try {
    copy.import_jsonl(bad);
    FAIL() << "a load that is not a number was imported";
  } catch (const DatabaseError& error) {
    EXPECT_STREQ(error.what(), "line 1: field \"load\" must be a number or null");
  }
}

TEST(RecordTrust, ALineWithoutThemImportsOnceAsBefore) {
  // An export of an older optune has no spread or load: importing it twice, or into a database that
  // already holds its records, adds nothing (the content hash is the one it always had).
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  const std::string line = to_json(ok_record(8, 0.004)).dump() + "\n";
  std::stringstream first(line), second(line);
  EXPECT_EQ(db.import_jsonl(first).records, 1u);
  EXPECT_EQ(db.import_jsonl(second).records, 0u);
}

TEST(RecordTrust, SchemaOneDatabaseIsReadAsItIsAndMigratesWithTheFieldsUnknown) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  write_schema_one_database(path);
  const std::string before = read_bytes(path);
  {
    // Read-only (query, export, pick, regress): read as it is, nothing written to it.
    auto reader = Database::open(path, Database::Mode::kReadOnly);
    EXPECT_EQ(reader.schema_version(), 1);
    const auto records = reader.task_records(kGemmTask);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_FALSE(records[0].spread.has_value());
    EXPECT_FALSE(records[0].load.has_value());
    ASSERT_TRUE(reader.best(kGemmTask));
    EXPECT_EQ(reader.best(kGemmTask)->config["tile_m"], 8);
  }
  EXPECT_EQ(read_bytes(path), before);

  auto writer = Database::open(path);
  EXPECT_EQ(writer.schema_version(), kSchemaVersion);
  writer.insert({measured(16, 0.003, 0.02, 0.01)});
  const auto records = writer.task_records(kGemmTask);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].spread.has_value()) << "the old record's spread is unknown, not 0";
  EXPECT_FALSE(records[0].load.has_value());
  EXPECT_FALSE(records[0].device_load.has_value());
  EXPECT_FALSE(records[0].check_seconds.has_value()) << "schema 5's fields are unknown in old rows";
  EXPECT_FALSE(records[0].timing_seconds.has_value());
  EXPECT_FALSE(records[0].check_error.has_value()) << "and schema 8's";
  EXPECT_EQ(records[1].spread, 0.02);
  EXPECT_EQ(writer.integrity_check(), "ok");
}

// Where a record's time went (schema 5) and how far its output was from the reference (schema 8):
// stored, exported and imported; and a slow record (its timing cut by the bail-out) keeps its
// partial time as a lower bound, neither a best nor a success.
TEST(RecordTrust, CheckAndTimingSecondsAndSlowRecordsAreStoredAndTravel) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  TuningRecord timed_record = ok_record(8, 0.004);
  timed_record.check_seconds = 0.0125;
  timed_record.timing_seconds = 0.21;
  timed_record.check_error = 2.5e-7;
  TuningRecord slow = ok_record(16, 0.011);
  slow.error_kind = "slow";
  slow.costs = {0.011};
  slow.check_seconds = 0.02;
  slow.timing_seconds = 0.012;
  slow.check_error = 4e-6;
  TuningRecord wrong = failed_record(32, "wrong_answer");
  wrong.check_error = 0.013;
  db.insert({timed_record, slow, wrong, failed_record(64, "build_error")});
  const auto stored = db.task_records(kGemmTask);
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(stored[0].check_seconds, 0.0125);
  EXPECT_EQ(stored[0].timing_seconds, 0.21);
  EXPECT_EQ(stored[0].check_error, 2.5e-7);
  EXPECT_EQ(stored[1].check_error, 4e-6);
  EXPECT_EQ(stored[2].check_error, 0.013);
  EXPECT_FALSE(stored[3].check_error.has_value()) << "no check ran";
  EXPECT_TRUE(stored[1].is_slow());
  EXPECT_FALSE(stored[1].ok());
  EXPECT_EQ(stored[1].median_seconds, 0.011);
  ASSERT_TRUE(db.best(kGemmTask));
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 8) << "a slow record is never a best";

  std::stringstream lines;
  db.export_jsonl(lines, {});
  auto copy = Database::open(dir.file("copy.db"));
  EXPECT_EQ(copy.import_jsonl(lines).records, 4u);
  const auto copied = copy.task_records(kGemmTask);
  EXPECT_EQ(copied[0].timing_seconds, 0.21);
  EXPECT_EQ(copied[0].check_error, 2.5e-7);
  EXPECT_EQ(copied[1].error_kind, "slow");
  EXPECT_EQ(copied[2].check_error, 0.013);
  EXPECT_FALSE(copied[3].check_error.has_value());
  EXPECT_FALSE(to_json(ok_record(8, 0.004)).contains("check_seconds")) << "unknown stays out of the line";
  EXPECT_FALSE(to_json(ok_record(8, 0.004)).contains("check_error"));

  TuningRecord not_finite = ok_record(128, 0.004);
  not_finite.check_error = std::numeric_limits<double>::infinity();
  EXPECT_THROW(db.insert({not_finite}), DatabaseError);
}

// A database of schema 7 (before check_error) is read as it is, and a writer upgrades it in place:
// every record kept as it was, its check_error unknown, and the records of the same content not
// stored twice (their JSON lines, and so their content hashes, are those they had).
TEST(RecordTrust, SchemaSevenDatabaseKeepsItsRecordsAndUpgradesWithTheCheckErrorUnknown) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  TuningRecord old_record = ok_record(8, 0.004);
  old_record.check_seconds = 0.0125;
  old_record.timing_seconds = 0.21;
  old_record.toolchain = {{"compiler", "c++ (Debian 12.2.0-14) 12.2.0"}, {"flags", "-O3"}};
  Database::open(path).insert({old_record, failed_record(16, "build_error")});
  // What schema 7 had: every column but check_error.
  run_sql(path, "ALTER TABLE records DROP COLUMN check_error; PRAGMA user_version = 7");
  const std::string before = read_bytes(path);
  {
    auto reader = Database::open(path, Database::Mode::kReadOnly);
    EXPECT_EQ(reader.schema_version(), 7);
    const auto records = reader.task_records(kGemmTask);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].check_seconds, 0.0125);
    EXPECT_FALSE(records[0].check_error.has_value());
  }
  EXPECT_EQ(read_bytes(path), before) << "a reader writes nothing";

  auto writer = Database::open(path);
  EXPECT_EQ(writer.schema_version(), kSchemaVersion);
  EXPECT_EQ(writer.insert({old_record}), std::vector<std::int64_t>{0}) << "already stored: the same content hash";
  TuningRecord checked = ok_record(32, 0.003);
  checked.check_error = 6.5e-8;
  writer.insert({checked});
  const auto records = writer.task_records(kGemmTask);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(to_json(records[0]), to_json(old_record)) << "every field as it was";
  EXPECT_FALSE(records[0].check_error.has_value());
  EXPECT_EQ(records[1].error_kind, "build_error");
  EXPECT_EQ(records[2].check_error, 6.5e-8);
  EXPECT_EQ(writer.integrity_check(), "ok");
}

}  // namespace
}  // namespace optune::db

// --- The tie rule: a declared winner stays the best until a config is faster beyond noise ------

namespace optune::db {
namespace {

// A record of kGemmTask at `median` seconds known to +-`spread`, measured at `timestamp`.
TuningRecord timed(int tile, double median, double spread, double timestamp, const std::string& run = "run-2") {
  TuningRecord record = measured(tile, median, spread, 0.01);
  record.timestamp = timestamp;
  record.run_id = run;
  return record;
}

TuningRecord marked_winner(TuningRecord record) {
  record.winner = true;
  record.tuner = "final";
  return record;
}

TEST(TieRule, AWinnerStaysTheBestAgainstAConfigFasterWithinNoise) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({marked_winner(timed(8, 0.0100, 0.03, 1000, "run-1")), timed(16, 0.0098, 0.03, 2000)});
  ASSERT_TRUE(db.best(kGemmTask));
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 8) << "2% faster, within +-3% either side: tied";
  const auto top = db.top_k({}, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].config["tile_m"], 8);
  EXPECT_EQ(top[1].config["tile_m"], 16);
  EXPECT_TRUE(are_tied(top[0], top[1]));
  EXPECT_EQ(db.top_k({}, 1).at(0).config["tile_m"], 8);
}

TEST(TieRule, AConfigFasterBeyondNoiseOnAQuietMachineReplacesTheWinner) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({marked_winner(timed(8, 0.0100, 0.02, 1000, "run-1")), timed(16, 0.0080, 0.02, 2000)});
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 16);
  EXPECT_EQ(db.top_k({}, 1).at(0).config["tile_m"], 16);
}

TEST(TieRule, ANoisyOrOlderRecordCannotReplaceTheWinner) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  TuningRecord busy = timed(16, 0.0050, 0.02, 2000);
  busy.load = 0.6;  // twice as fast, on a busy machine: not to be believed over the winner
  TuningRecord older = timed(32, 0.0060, 0.02, 500, "run-0");  // measured before the winner was declared
  db.insert({marked_winner(timed(8, 0.0100, 0.02, 1000, "run-1")), busy, older});
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 8);
  EXPECT_EQ(db.top_k({}, 1).at(0).config["tile_m"], 8);
}

TEST(TieRule, TheComparisonThatDeclaredTheWinnerIsNotReopened) {
  // Its finalists' records have the mark's run and tuner: that comparison already weighed them.
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  TuningRecord finalist = timed(16, 0.0080, 0.01, 1001, "run-1");
  finalist.tuner = "final";
  db.insert({marked_winner(timed(8, 0.0100, 0.01, 1000, "run-1")), finalist});
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 8);
}

TEST(TieRule, TheWinnersLatestRecordIsTheOneGiven) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({marked_winner(timed(8, 0.0100, 0.03, 1000, "run-1")), timed(8, 0.0110, 0.03, 3000, "run-3"),
             timed(16, 0.0105, 0.03, 2000)});
  const auto best = db.best(kGemmTask);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->config["tile_m"], 8);
  EXPECT_DOUBLE_EQ(best->median_seconds, 0.0110);
}

TEST(TieRule, PruneKeepsTheWinnerAndItsLatestRecord) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  db.insert({marked_winner(timed(8, 0.0100, 0.03, 1000, "run-1")), timed(16, 0.0098, 0.03, 2000),
             timed(32, 0.0099, 0.03, 2100), timed(64, 0.0097, 0.03, 2200)});
  db.prune(1);
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 8) << "the winner survives a prune that keeps one";
  ASSERT_TRUE(db.winner(kGemmTask));
}

TEST(TieRule, TheWinnerMarkTravelsInJsonLinesAndOnlyWhereSet) {
  EXPECT_FALSE(to_json(timed(8, 0.01, 0.01, 1000)).contains("winner"));
  const auto line = to_json(marked_winner(timed(8, 0.01, 0.01, 1000)));
  EXPECT_EQ(line["winner"], true);
  EXPECT_TRUE(record_from_json(line).winner);
}

}  // namespace
}  // namespace optune::db
