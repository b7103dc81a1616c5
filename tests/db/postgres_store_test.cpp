// The PostgreSQL engine's own contract, on real servers (the suite's, or a test's private one it
// restarts): what names a server, credentials only the libpq way, one-line refusals (a wrong
// password, an unreachable server, a newer or a foreign schema), an older schema read and
// migrated, many writers at once, a server that restarts mid-run, and the locks held there.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "db_test_support.hpp"
#include "optune/db/server_lock.hpp"

namespace optune::db {
namespace {

using optune::testing::PrivateServer;
using optune::testing::ScratchDatabase;
using testing::kGemmTask;
using testing::ok_record;
using testing::TempDir;

// What `action` threw, as text ("" when it threw nothing).
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const DatabaseError& error) {
    return error.what();
  }
  return "";
}

// Records no other test writes: distinct configs of kGemmTask, one per index.
std::vector<TuningRecord> batch(int first, int count, double timestamp = 1000) {
  std::vector<TuningRecord> records;
  for (int i = first; i < first + count; ++i) records.push_back(ok_record(i, 0.001 + 1e-6 * i, timestamp));
  return records;
}

TEST(ServerUri, NamesAServerByUriOrLibpqKeywordsAndAFileOtherwise) {
  EXPECT_TRUE(is_server_uri("postgresql://db.lab/optune"));
  EXPECT_TRUE(is_server_uri("postgres://optune@10.0.0.2:5433/team"));
  EXPECT_TRUE(is_server_uri("service=team"));
  EXPECT_TRUE(is_server_uri("host=db.lab port=5433 dbname=optune"));
  EXPECT_FALSE(is_server_uri("optune.db"));
  EXPECT_FALSE(is_server_uri("/var/lib/optune/nightly.db"));
  EXPECT_FALSE(is_server_uri("notes=old.db"));     // not a keyword libpq knows
  EXPECT_FALSE(is_server_uri("results/host=a.db"));
}

TEST(PostgresStore, AUriHoldingAPasswordIsRefusedWithoutRepeatingIt) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  std::string uri = scratch.uri();
  uri.insert(uri.find('@'), ":hunter2secret");
  const std::string message = error_of([&] { Database::open(uri); });
  EXPECT_NE(message.find("holds a password"), std::string::npos) << message;
  EXPECT_NE(message.find("PGPASSFILE"), std::string::npos) << message;
  EXPECT_EQ(message.find("hunter2secret"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  const std::string keywords = error_of([&] { Database::open("host=127.0.0.1 password=hunter2secret dbname=x"); });
  EXPECT_NE(keywords.find("holds a password"), std::string::npos) << keywords;
  EXPECT_EQ(keywords.find("hunter2secret"), std::string::npos) << keywords;
}

TEST(PostgresStore, MalformedUriWrongPasswordAndUnreachableServerAreOneLineRefusals) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  const std::string malformed = error_of([] { Database::open("postgresql://[::1/optune"); });
  EXPECT_NE(malformed.find("not a valid PostgreSQL connection string"), std::string::npos) << malformed;

  TempDir dir;
  const std::string host_port = scratch.server_uri().substr(scratch.server_uri().find('@') + 1);
  {
    std::ofstream(dir.file("wrong.pgpass")) << host_port << ":*:optune:not-the-password\n";
  }
  std::filesystem::permissions(dir.file("wrong.pgpass"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string right = std::getenv("PGPASSFILE");
  ::setenv("PGPASSFILE", dir.file("wrong.pgpass").c_str(), 1);
  const std::string refused = error_of([&] { Database::open(scratch.uri()); });
  ::setenv("PGPASSFILE", right.c_str(), 1);
  EXPECT_NE(refused.find("password authentication failed"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("not-the-password"), std::string::npos) << refused;

  // A port nothing listens on (the server's own, plus one, is free unless a test took it).
  const std::string unreachable = error_of([] { Database::open("postgresql://optune@127.0.0.1:1/optune"); });
  EXPECT_NE(unreachable.find("cannot connect to the PostgreSQL server"), std::string::npos) << unreachable;
  for (const auto& message : {malformed, refused, unreachable}) EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(PostgresStore, NewerSchemaAndAnotherApplicationsRecordsTableAreRefusedUntouched) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase newer;
  Database::open(newer.uri()).insert({ok_record(8, 0.002)});
  optune::testing::run_on_database(newer.uri(), "UPDATE optune_schema SET version = " + std::to_string(kSchemaVersion + 1));
  const std::string message = error_of([&] { Database::open(newer.uri()); });
  EXPECT_NE(message.find("is newer than this optune supports"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { Database::open(newer.uri(), Database::Mode::kReadOnly); }), "");

  ScratchDatabase foreign;
  optune::testing::run_on_database(foreign.uri(), "CREATE TABLE records (id INTEGER, what TEXT)");
  const std::string refused = error_of([&] { Database::open(foreign.uri()); });
  EXPECT_NE(refused.find("is not an optune database"), std::string::npos) << refused;
  EXPECT_NE(error_of([&] { Database::open(foreign.uri(), Database::Mode::kReadOnly); }), "");
  ScratchDatabase empty;
  EXPECT_NE(error_of([&] { Database::open(empty.uri(), Database::Mode::kReadOnly); }).find("no optune tables"),
            std::string::npos);
}

TEST(PostgresStore, AnOlderSchemaReadsWithItsNewerColumnsUnknownAndMigratesOnWrite) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  TuningRecord record = ok_record(8, 0.002);
  record.check_seconds = 0.5;
  record.timing_seconds = 1.5;
  Database::open(scratch.uri()).insert({record});
  // What schema 4 had: no check_seconds, no timing_seconds (5), no toolchain (6), no dispatch rules
  // (7), no check_error (8).
  optune::testing::run_on_database(scratch.uri(),
                                   "ALTER TABLE records DROP COLUMN check_seconds, DROP COLUMN timing_seconds,"
                                   " DROP COLUMN toolchain, DROP COLUMN check_error; DROP TABLE dispatch_rules;"
                                   " UPDATE optune_schema SET version = 4");
  {
    auto reader = Database::open(scratch.uri(), Database::Mode::kReadOnly);
    EXPECT_EQ(reader.schema_version(), 4);
    const auto records = reader.records({});
    ASSERT_EQ(records.size(), 1u);
    EXPECT_FALSE(records[0].check_seconds.has_value());
    EXPECT_FALSE(records[0].check_error.has_value());
    EXPECT_EQ(records[0].config, record.config);
    EXPECT_TRUE(reader.dispatches("", "").empty());
  }
  auto writer = Database::open(scratch.uri());
  EXPECT_EQ(writer.schema_version(), kSchemaVersion);
  writer.insert({record});  // the same record again: its content hash is still stored
  EXPECT_EQ(writer.count(), 1u);
  record.timestamp = 2000;
  record.check_error = 2.5e-7;
  writer.insert({record});
  EXPECT_EQ(writer.count(), 2u);
  EXPECT_EQ(writer.records({}).back().timing_seconds, 1.5);
  EXPECT_EQ(writer.records({}).back().check_error, 2.5e-7);
  EXPECT_FALSE(writer.records({}).front().check_error.has_value()) << "the old row's is unknown";
}

// Eight writers at once, each its own connection, some batches shared by all: every record stored
// once, none lost, readers answering meanwhile.
TEST(PostgresStore, ManyWritersAtOnceStoreEveryRecordOnce) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  Database::open(scratch.uri());  // the schema, made once (racing makers are tested by the CLI)
  constexpr int kWriters = 8, kBatches = 6, kBatchSize = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      try {
        auto database = Database::open(scratch.uri());
        for (int b = 0; b < kBatches; ++b) {
          database.insert(batch(1000 * (w + 1) + b * kBatchSize, kBatchSize));
          database.insert(batch(b * kBatchSize, kBatchSize));  // the same records from every writer
        }
      } catch (const std::exception& error) {
        ++failures;
        ADD_FAILURE() << error.what();
      }
    });
  }
  auto reader = Database::open(scratch.uri(), Database::Mode::kReadOnly);
  std::size_t seen = 0;
  while (seen < (kWriters + 1) * kBatches * kBatchSize && failures == 0) {
    const std::size_t now = reader.count();
    EXPECT_GE(now, seen);  // a reader sees whole batches, and never fewer than before
    EXPECT_EQ(now % kBatchSize, 0u);
    seen = now;
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(reader.count(), static_cast<std::size_t>((kWriters + 1) * kBatches * kBatchSize));
  EXPECT_EQ(reader.best(kGemmTask)->config["tile_m"], 0);
}

// The first runs of a team start at once on an empty database: one makes the tables, the others
// find them, and every batch is stored.
TEST(PostgresStore, EightProcessesOpeningAnEmptyDatabaseAtOnceMakeOneSchema) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  std::vector<std::thread> openers;
  for (int i = 0; i < 8; ++i)
    openers.emplace_back([&, i] {
      try {
        Database::open(scratch.uri()).insert(batch(10 * i, 10));
      } catch (const std::exception& error) {
        ADD_FAILURE() << error.what();
      }
    });
  for (auto& opener : openers) opener.join();
  auto database = Database::open(scratch.uri(), Database::Mode::kReadOnly);
  EXPECT_EQ(database.schema_version(), kSchemaVersion);
  EXPECT_EQ(database.count(), 80u);
}

TEST(PostgresStore, AServerRestartMidRunIsWaitedForAndTheBatchStoredOnce) {
  OPTUNE_REQUIRE_POSTGRES();
  TempDir dir;
  PrivateServer server(dir.file("server"));
  ScratchDatabase scratch(server.dir());
  auto database = Database::open(scratch.uri());
  database.insert(batch(0, 5));
  ASSERT_EQ(server.run("restart"), 0);
  const auto ids = database.insert(batch(5, 5));  // the connection is gone: reconnected, run again
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(database.count(), 10u);
  EXPECT_EQ(Database::open(scratch.uri(), Database::Mode::kReadOnly).records({}).size(), 10u);
}

TEST(PostgresStore, AServerGoneLongerThanTheBoundFailsAsStorageAndKeepsWhatWasStored) {
  OPTUNE_REQUIRE_POSTGRES();
  TempDir dir;
  PrivateServer server(dir.file("server"));
  ScratchDatabase scratch(server.dir());
  auto database = Database::open(scratch.uri(), Database::Mode::kReadWrite, std::chrono::seconds(2));
  database.insert(batch(0, 5));
  ASSERT_EQ(server.run("halt"), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(database.insert(batch(5, 5)), StorageError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_EQ(server.run("start-again"), 0);
  EXPECT_EQ(Database::open(scratch.uri(), Database::Mode::kReadOnly).count(), 5u);
}

TEST(ServerLockTest, AnExclusiveLockRefusesOthersNamingItsHolderUntilReleased) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  const std::string name = "device 00ff on host lab-1";
  std::string holder;
  {
    auto held = ServerLock::try_acquire(scratch.uri(), name, ServerLock::Mode::kExclusive, "tune");
    ASSERT_TRUE(held.has_value());
    EXPECT_FALSE(ServerLock::try_acquire(scratch.uri(), name, ServerLock::Mode::kExclusive, "job", &holder));
    EXPECT_EQ(holder.rfind("optune tune, pid " + std::to_string(::getpid()), 0), 0u) << holder;
    EXPECT_FALSE(ServerLock::try_acquire(scratch.uri(), name, ServerLock::Mode::kShared, "job"));
    EXPECT_TRUE(ServerLock::try_acquire(scratch.uri(), "device 00ff on host lab-2", ServerLock::Mode::kExclusive, "job"));
    ScratchDatabase other;  // a lock is the database's: another database's runs are not held
    EXPECT_TRUE(ServerLock::try_acquire(other.uri(), name, ServerLock::Mode::kExclusive, "job"));
  }
  EXPECT_TRUE(ServerLock::try_acquire(scratch.uri(), name, ServerLock::Mode::kExclusive, "job"));
}

TEST(ServerLockTest, AcquireWaitsForTheHolderToLetGo) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  auto held = ServerLock::try_acquire(scratch.uri(), "device 01 on lab-1", ServerLock::Mode::kExclusive, "tune");
  ASSERT_TRUE(held.has_value());
  auto waiting = std::async(std::launch::async, [&] {
    return ServerLock::acquire(scratch.uri(), "device 01 on lab-1", ServerLock::Mode::kExclusive, "job");
  });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout) << "did not wait";
  held.reset();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto taken = waiting.get();
  EXPECT_FALSE(ServerLock::try_acquire(scratch.uri(), "device 01 on lab-1", ServerLock::Mode::kExclusive, "regress"));
}

TEST(ServerLockTest, SharedHoldersKeepAnExclusiveOneAway) {
  OPTUNE_REQUIRE_POSTGRES();
  ScratchDatabase scratch;
  auto first = ServerLock::try_acquire(scratch.uri(), "database", ServerLock::Mode::kShared, "tune");
  auto second = ServerLock::try_acquire(scratch.uri(), "database", ServerLock::Mode::kShared, "job nightly");
  ASSERT_TRUE(first && second);
  std::string holder;
  EXPECT_FALSE(ServerLock::try_acquire(scratch.uri(), "database", ServerLock::Mode::kExclusive, "prune", &holder));
  EXPECT_NE(holder.find("optune "), std::string::npos) << holder;
  first.reset();
  second.reset();
  EXPECT_TRUE(ServerLock::try_acquire(scratch.uri(), "database", ServerLock::Mode::kExclusive, "prune"));
}

}  // namespace
}  // namespace optune::db
