// The one wrapper over SQLite's C API in optune: the SQLite engine of connection.hpp, a connection
// and a prepared statement, each owning its handle. SQLite result codes become DatabaseError (with
// the code kept, for the few places that tell them apart) at this boundary; nothing above it
// sees a raw sqlite3 pointer or result code.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
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

class Connection final : public db::Connection {
 public:
  // kImmutable: read-only, with SQLite told that nothing changes the file, so that it needs no
  // -shm file beside it (a WAL database in a folder this user cannot write).
  enum class Access { kReadWriteCreate, kReadOnly, kImmutable };
  // Opens the file (creating it for kReadWriteCreate); reads nothing yet, so a foreign file is
  // left untouched until the caller has looked at it. Waits up to busy_timeout for locks.
  static std::unique_ptr<Connection> open(const std::string& path, Access access,
                                          std::chrono::milliseconds busy_timeout);

  const std::string& name() const override { return path_; }
  void execute(const std::string& sql) override;
  std::unique_ptr<db::Statement> prepare(std::string_view sql) const override;
  void begin_writing() override { execute("BEGIN IMMEDIATE"); }
  std::string integrity_check() const override { return query_text("PRAGMA integrity_check"); }
  bool is_read_only() const;

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

class Statement final : public db::Statement {
 public:
  Statement& bind_text(int index, std::string_view value) override;
  Statement& bind_double(int index, double value) override;
  Statement& bind_int(int index, std::int64_t value) override;
  Statement& bind_null(int index) override;
  bool step() override;
  void reset() override;

  std::string column_text(int column) const override;
  double column_double(int column) const override;
  std::int64_t column_int(int column) const override;
  bool column_is_null(int column) const override;

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

}  // namespace optune::db::sqlite
