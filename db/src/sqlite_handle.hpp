// The one wrapper over SQLite's C API in optune: a connection, a prepared statement and an
// immediate transaction, each owning its handle. SQLite result codes become DatabaseError (with
// the code kept, for the few places that tell them apart) at this boundary; nothing above it
// sees a raw sqlite3 pointer or result code.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "optune/db/database.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace optune::db::sqlite {

// A DatabaseError that remembers SQLite's primary result code (SQLITE_NOTADB, SQLITE_BUSY, ...).
class SqliteError : public DatabaseError {
 public:
  SqliteError(int code, const std::string& message) : DatabaseError(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Throws StorageError for a storage failure (SQLITE_FULL, SQLITE_IOERR), else SqliteError.
[[noreturn]] void throw_error(int code, const std::string& message);

class Statement;

class Connection {
 public:
  // kImmutable: read-only, with SQLite told that nothing changes the file, so that it needs no
  // -shm file beside it (a WAL database in a folder this user cannot write).
  enum class Access { kReadWriteCreate, kReadOnly, kImmutable };
  // Opens the file (creating it for kReadWriteCreate); reads nothing yet, so a foreign file is
  // left untouched until the caller has looked at it. Waits up to busy_timeout for locks.
  static Connection open(const std::string& path, Access access, std::chrono::milliseconds busy_timeout);

  const std::string& path() const { return path_; }
  // Runs SQL that returns no rows (may hold several statements).
  void execute(const std::string& sql);
  Statement prepare(std::string_view sql) const;
  // A single integer from a query such as "PRAGMA user_version".
  std::int64_t query_int(std::string_view sql) const;
  std::string query_text(std::string_view sql) const;
  bool is_read_only() const;
  std::int64_t last_insert_rowid() const;
  int changes() const;  // rows changed by the last statement

 private:
  struct Closer {
    void operator()(sqlite3* handle) const;
  };
  Connection(std::string path, sqlite3* handle) : path_(std::move(path)), handle_(handle) {}
  [[noreturn]] void fail(int code) const;

  std::string path_;
  std::unique_ptr<sqlite3, Closer> handle_;
  friend class Statement;
};

// A prepared statement; parameters are 1-based as in SQL's "?1", columns 0-based.
class Statement {
 public:
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_double(int index, double value);
  Statement& bind_int(int index, std::int64_t value);
  Statement& bind_optional_double(int index, std::optional<double> value);  // nullopt: NULL
  // true: a row is ready to read; false: the statement is done.
  bool step();
  // Makes the statement ready to run again with new parameters.
  void reset();

  std::string column_text(int column) const;
  double column_double(int column) const;
  std::int64_t column_int(int column) const;
  std::optional<double> column_optional_double(int column) const;  // NULL: nullopt

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* handle) const;
  };
  Statement(const Connection& connection, sqlite3_stmt* handle) : connection_(&connection), handle_(handle) {}
  void check_bind(int code) const;

  const Connection* connection_;
  std::unique_ptr<sqlite3_stmt, Finalizer> handle_;
  friend class Connection;
};

// BEGIN IMMEDIATE on construction (takes the write lock at once, so a writer never fails halfway
// on a lock upgrade); rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& connection);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Connection& connection_;
  bool is_open_ = true;
};

}  // namespace optune::db::sqlite
