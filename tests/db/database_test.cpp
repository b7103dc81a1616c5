// Database: inserting records and the queries the tuner and the command line run on them, on each
// engine (Store: a SQLite file, a PostgreSQL server); DatabaseFile: what only a file has.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

using testing::TempDir;
using testing::kGemmTask;
using testing::ok_record;
using testing::failed_record;
using testing::content;

class Store : public testing::OnEachEngine {};
INSTANTIATE_ENGINES(Store);

TuningRecord with_workload(TuningRecord record, const std::string& workload_key) {
  record.workload_key = workload_key;
  return record;
}

TEST_P(Store, CreatesSchemaInNewFile) {
  auto db = Database::open(at("new.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(db.path(), at("new.db"));
  EXPECT_EQ(db.count(), 0u);
}

TEST_P(Store, InsertThenReadBackEveryField) {
  auto db = Database::open(at("optune.db"));
  TuningRecord record = ok_record(32, 0.002);
  record.is_default = true;
  record.error_message = "warning: \"quoted\"\nsecond line";
  record.config["ratio"] = 0.1;
  record.toolchain = {{"compiler", "c++ (Debian 12.2.0-14) 12.2.0"}, {"flags", "-O3 -march=native"}};
  record.check_error = 3.25e-7;
  const auto ids = db.insert({record});
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GT(ids[0], 0);

  const auto stored = db.task_records(kGemmTask);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].id, ids[0]);
  EXPECT_EQ(content(stored[0]), content(record));
  EXPECT_EQ(stored[0].config_text(), record.config_text());
  EXPECT_EQ(stored[0].costs, record.costs);
  EXPECT_TRUE(stored[0].is_default);
  EXPECT_EQ(stored[0].toolchain, record.toolchain);
  EXPECT_EQ(stored[0].check_error, 3.25e-7);
}

TEST_P(Store, BestPicksLowestMedianAmongSuccessfulRecords) {
  auto db = Database::open(at("optune.db"));
  EXPECT_FALSE(db.best(kGemmTask).has_value());
  db.insert({ok_record(8, 0.004), failed_record(16, "crash"), ok_record(32, 0.002), ok_record(64, 0.003),
             failed_record(128, "wrong_answer")});
  const auto best = db.best(kGemmTask);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config["tile_m"], 32);
  EXPECT_DOUBLE_EQ(best->median_seconds, 0.002);

  TaskKey other_device = kGemmTask;
  other_device.device_id = "dev0002";
  EXPECT_FALSE(db.best(other_device).has_value());
}

TEST_P(Store, BestIsEmptyWhenEveryCandidateFailed) {
  auto db = Database::open(at("optune.db"));
  db.insert({failed_record(8, "timeout"), failed_record(16, "build_error")});
  EXPECT_FALSE(db.best(kGemmTask).has_value());
}

TEST_P(Store, TopKOrdersByMedianAndLimitsPerWorkload) {
  auto db = Database::open(at("optune.db"));
  const std::string small = "gemm.f32.M64.N64.K64";
  db.insert({ok_record(8, 0.005), ok_record(16, 0.001), ok_record(32, 0.003), failed_record(64, "crash"),
             with_workload(ok_record(8, 0.0004), small), with_workload(ok_record(16, 0.0002), small),
             with_workload(ok_record(32, 0.0006), small)});

  const auto all = db.top_k({}, 0);
  ASSERT_EQ(all.size(), 6u);  // the failed record is not a candidate
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].median_seconds, all[i].median_seconds);

  const auto top2 = db.top_k({}, 2);
  ASSERT_EQ(top2.size(), 4u);
  std::vector<double> medians;
  for (const auto& record : top2) medians.push_back(record.median_seconds);
  EXPECT_EQ(medians, (std::vector<double>{0.0002, 0.0004, 0.001, 0.003}));

  RecordFilter one_workload;
  one_workload.workload_key = kGemmTask.workload_key;
  const auto top1 = db.top_k(one_workload, 1);
  ASSERT_EQ(top1.size(), 1u);
  EXPECT_EQ(top1[0].config["tile_m"], 16);
}

// A config measured again (the tuner's closing re-measure) counts with its latest record: a lucky
// first measurement does not make it the best, in best() and top_k() alike.
TEST_P(Store, ConfigsCountWithTheirLatestMeasurement) {
  auto db = Database::open(at("optune.db"));
  db.insert({ok_record(8, 0.001, 1000), ok_record(16, 0.002, 1000), ok_record(32, 0.004, 1000)});
  db.insert({ok_record(8, 0.003, 2000), failed_record(16, "crash", 2000)});  // re-measured
  const auto best = db.best(kGemmTask);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config["tile_m"], 16);  // its failed re-measure does not hide its working record
  EXPECT_DOUBLE_EQ(best->median_seconds, 0.002);

  std::vector<double> medians;
  for (const auto& record : db.top_k({}, 5)) medians.push_back(record.median_seconds);
  EXPECT_EQ(medians, (std::vector<double>{0.002, 0.003, 0.004}));  // one per config
  EXPECT_EQ(db.top_k({}, 0).size(), 4u);                           // k = 0: every successful record

  // Same timestamp: the later insert is the latest.
  db.insert({ok_record(32, 0.0005, 2000)});
  db.insert({ok_record(32, 0.006, 2000)});
  EXPECT_EQ(db.best(kGemmTask)->config["tile_m"], 16);
}

// A transport failure measured nothing of its config (the link broke): the config stays unmeasured.
TEST_P(Store, MeasuredConfigsIncludeFailedRecordsButNotTransportFailures) {
  auto db = Database::open(at("optune.db"));
  const TuningRecord ok = ok_record(8, 0.005);
  const TuningRecord crashed = failed_record(16, "crash");
  const TuningRecord unreached = failed_record(64, "transport_error");
  db.insert({ok, crashed, unreached, with_workload(ok_record(32, 0.001), "gemm.f32.M64.N64.K64")});
  const auto configs = db.measured_configs(kGemmTask);
  EXPECT_EQ(configs, (std::unordered_set<std::string>{ok.config_text(), crashed.config_text()}));
  EXPECT_TRUE(db.is_measured(kGemmTask, crashed.config_text()));
  EXPECT_FALSE(db.is_measured(kGemmTask, ok_record(32, 0.001).config_text()));
  EXPECT_FALSE(db.is_measured(kGemmTask, unreached.config_text()));
}

TEST_P(Store, IdenticalRecordIsStoredOnce) {
  auto db = Database::open(at("optune.db"));
  const TuningRecord record = ok_record(8, 0.005);
  const auto first = db.insert({record});
  const auto second = db.insert({record, ok_record(8, 0.005, 2000)});
  EXPECT_GT(first[0], 0);
  EXPECT_EQ(second[0], 0);
  EXPECT_GT(second[1], first[0]);  // a re-measure of the same config is a new record
  EXPECT_EQ(db.count(), 2u);
}

TEST_P(Store, InsertRejectsRecordWithoutKeyAndKeepsNothingOfTheBatch) {
  auto db = Database::open(at("optune.db"));
  TuningRecord keyless = ok_record(16, 0.001);
  keyless.device_id.clear();
  EXPECT_THROW(db.insert({ok_record(8, 0.005), keyless}), DatabaseError);
  EXPECT_EQ(db.count(), 0u);
}

TEST_P(Store, RecordsFilterByOpDeviceTargetTimeAndOutcome) {
  auto db = Database::open(at("optune.db"));
  TuningRecord conv = ok_record(8, 0.01, 3000);
  conv.workload_key = "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1";
  conv.template_name = "cpu_conv2d";
  TuningRecord gpu = ok_record(8, 0.0001, 2500);
  gpu.target = "opencl";
  gpu.device_id = "dev0002";
  gpu.device_fingerprint = testing::fingerprint("NVIDIA GeForce RTX 4090");
  db.insert({ok_record(8, 0.005, 1000), failed_record(16, "timeout", 2000), conv, gpu});

  const auto count_of = [&db](const RecordFilter& filter) { return db.records(filter).size(); };
  EXPECT_EQ(count_of({}), 4u);
  EXPECT_EQ(count_of({.op = "gemm"}), 3u);
  EXPECT_EQ(count_of({.op = "conv2d"}), 1u);
  EXPECT_EQ(count_of({.op = "gem"}), 0u);  // the op is the whole first component
  EXPECT_EQ(count_of({.target = "opencl"}), 1u);
  EXPECT_EQ(count_of({.device = "dev0002"}), 1u);
  EXPECT_EQ(count_of({.device = "rtx 4090"}), 1u);
  EXPECT_EQ(count_of({.device = "Xeon"}), 3u);
  EXPECT_EQ(count_of({.template_name = "cpu_conv2d"}), 1u);
  EXPECT_EQ(count_of({.since = 2000}), 3u);
  EXPECT_EQ(count_of({.ok_only = true}), 3u);
  EXPECT_EQ(count_of({.op = "gemm", .device = "xeon", .since = 1500, .ok_only = false}), 1u);

  const auto history = db.records({});
  for (std::size_t i = 1; i < history.size(); ++i) EXPECT_LE(history[i - 1].timestamp, history[i].timestamp);
}

TEST_P(Store, ReaderSeesCommittedRecordsWhileWriterHoldsTheFile) {
  auto writer = Database::open(at("optune.db"));
  auto reader = Database::open(at("optune.db"), Database::Mode::kReadOnly);
  EXPECT_EQ(reader.count(), 0u);
  writer.insert({ok_record(8, 0.005)});
  EXPECT_EQ(reader.count(), 1u);
  writer.insert({ok_record(16, 0.002)});
  ASSERT_TRUE(reader.best(kGemmTask).has_value());
  EXPECT_EQ(reader.best(kGemmTask)->config["tile_m"], 16);

  auto second_writer = Database::open(at("optune.db"));
  second_writer.insert({ok_record(32, 0.001)});
  EXPECT_EQ(writer.count(), 3u);
}

TEST_P(Store, ReadOnlyDatabaseRefusesWrites) {
  Database::open(at("optune.db")).insert({ok_record(8, 0.005)});
  auto db = Database::open(at("optune.db"), Database::Mode::kReadOnly);
  EXPECT_EQ(db.count(), 1u);
  EXPECT_THROW(db.insert({ok_record(16, 0.005)}), DatabaseError);
}

TEST(DatabaseFile, StaysIntactInWalMode) {
  TempDir dir;
  {
    auto db = Database::open(dir.file("optune.db"));
    db.insert({ok_record(8, 0.005), failed_record(16, "crash")});
    db.insert({ok_record(8, 0.005), ok_record(32, 0.001, 5000)});
  }
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir.file("optune.db").c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const auto text_of = [handle](const char* sql) {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
    std::string text = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    sqlite3_finalize(statement);
    return text;
  };
  EXPECT_EQ(text_of("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(text_of("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(text_of("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(text_of("SELECT count(*) FROM records"), "3");
  sqlite3_close(handle);
}

TEST(DatabaseFile, MovedDatabaseKeepsWorking) {
  TempDir dir;
  auto db = Database::open(dir.file("optune.db"));
  Database moved = std::move(db);
  moved.insert({ok_record(8, 0.005)});
  EXPECT_EQ(moved.count(), 1u);
}

}  // namespace
}  // namespace optune::db
