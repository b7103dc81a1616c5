// Database::open on files that are not (or not yet) optune databases: it refuses them with one
// line naming the file, and never writes to a file it refuses.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

using testing::TempDir;
using testing::ok_record;
using testing::read_bytes;

void run_sql(const std::string& path, const char* sql) {
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(handle, sql, nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(handle);
}

// The message of the DatabaseError that opening `path` throws, or "" when it opens.
std::string open_error(const std::string& path, Database::Mode mode = Database::Mode::kReadWrite) {
  try {
    Database::open(path, mode);
  } catch (const DatabaseError& error) {
    return error.what();
  }
  return "";
}

TEST(DatabaseFile, RefusesTextFileAndLeavesItUnchanged) {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  std::ofstream(path, std::ios::binary) << "gemm tuning notes\nnot a database at all, but long enough to have a header "
                                           "that SQLite reads and rejects................................\n";
  const std::string before = read_bytes(path);
  for (auto mode : {Database::Mode::kReadWrite, Database::Mode::kReadOnly}) {
    const std::string message = open_error(path, mode);
    EXPECT_EQ(message, path + " is not an optune database (file is not a database)");
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(DatabaseFile, RefusesAnotherApplicationsDatabaseAndLeavesItUnchanged) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  run_sql(path, "CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (42);");
  const std::string before = read_bytes(path);
  for (auto mode : {Database::Mode::kReadWrite, Database::Mode::kReadOnly}) {
    const std::string message = open_error(path, mode);
    EXPECT_NE(message.find(path + " is not an optune database"), std::string::npos) << message;
  }
  EXPECT_EQ(read_bytes(path), before);
}

TEST(DatabaseFile, RefusesNewerSchemaVersion) {
  TempDir dir;
  const std::string path = dir.file("future.db");
  Database::open(path).insert({ok_record(8, 0.005)});
  run_sql(path, "PRAGMA user_version = 99");
  const std::string expected = path + ": database schema version 99 is newer than this optune supports (" +
                               std::to_string(kSchemaVersion) + ")";
  EXPECT_EQ(open_error(path), expected);
  EXPECT_EQ(open_error(path, Database::Mode::kReadOnly), expected);
}

TEST(DatabaseFile, CreatesSchemaInEmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  std::ofstream(path, std::ios::binary).flush();
  auto db = Database::open(path);
  db.insert({ok_record(8, 0.005)});
  EXPECT_EQ(Database::open(path, Database::Mode::kReadOnly).count(), 1u);
}

TEST(DatabaseFile, ReadOnlyModeFailsOnMissingFileWithoutCreatingIt) {
  TempDir dir;
  const std::string path = dir.file("missing.db");
  EXPECT_NE(open_error(path, Database::Mode::kReadOnly), "");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DatabaseFile, ReadOnlyModeRefusesEmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  std::ofstream(path, std::ios::binary).flush();
  EXPECT_EQ(open_error(path, Database::Mode::kReadOnly), path + " is not an optune database (it is empty)");
}

TEST(DatabaseFile, UnwritablePathFails) {
  TempDir dir;
  const std::string message = open_error(dir.file("no/such/dir/optune.db"));
  EXPECT_NE(message.find(dir.file("no/such/dir/optune.db")), std::string::npos) << message;
}

TEST(DatabaseFile, ReopeningKeepsRecords) {
  TempDir dir;
  const std::string path = dir.file("optune.db");
  Database::open(path).insert({ok_record(8, 0.005), ok_record(16, 0.004)});
  auto db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(db.count(), 2u);
}

}  // namespace
}  // namespace optune::db
