// What the database's queries need of an SQL engine, whichever it is: a connection that runs SQL,
// prepared statements with positional parameters ("?" or "?N", as SQLite writes them; the
// PostgreSQL engine renumbers them as "$N") and transactions. Two engines implement it: SQLite
// (sqlite_handle.hpp, a file) and PostgreSQL (postgres_connection.hpp, a server). The queries in
// database.cpp and record_rows.cpp are written once, in the SQL both engines read.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "optune/db/database.hpp"

namespace optune::db {

// The engine's server is gone: it restarted, the network dropped, or it is starting up again.
// Its owner reconnects (Connection::reconnect) and runs the transaction again; the server rolled
// back what the lost one had done.
class ConnectionLost : public StorageError {
 public:
  ConnectionLost(const std::string& message, const void* connection) : StorageError(message), connection_(connection) {}
  // Which connection lost its server: only that connection's owner reconnects.
  const void* connection() const { return connection_; }

 private:
  const void* connection_;
};

// The engine aborted a transaction that ran into another one (a deadlock between two writers):
// running it again succeeds.
class TransactionConflict : public StorageError {
 public:
  using StorageError::StorageError;
};

// A prepared statement; parameters are 1-based as in SQL's "?1", columns 0-based.
class Statement {
 public:
  virtual ~Statement() = default;
  virtual Statement& bind_text(int index, std::string_view value) = 0;
  virtual Statement& bind_double(int index, double value) = 0;
  virtual Statement& bind_int(int index, std::int64_t value) = 0;
  virtual Statement& bind_null(int index) = 0;
  Statement& bind_optional_double(int index, std::optional<double> value) {  // nullopt: NULL
    return value ? bind_double(index, *value) : bind_null(index);
  }
  // true: a row is ready to read; false: the statement is done.
  virtual bool step() = 0;
  // Makes the statement ready to run again with new parameters.
  virtual void reset() = 0;

  virtual std::string column_text(int column) const = 0;
  virtual double column_double(int column) const = 0;
  virtual std::int64_t column_int(int column) const = 0;
  virtual bool column_is_null(int column) const = 0;
  std::optional<double> column_optional_double(int column) const {  // NULL: nullopt
    if (column_is_null(column)) return std::nullopt;
    return column_double(column);
  }
};

class Connection {
 public:
  virtual ~Connection() = default;
  // The file's path or the server's URI, for messages.
  virtual const std::string& name() const = 0;
  // Runs SQL that returns no rows (may hold several statements).
  virtual void execute(const std::string& sql) = 0;
  virtual std::unique_ptr<Statement> prepare(std::string_view sql) const = 0;
  // Starts a transaction that holds the right to write from its start (SQLite's BEGIN IMMEDIATE:
  // a writer never fails halfway on a lock upgrade).
  virtual void begin_writing() = 0;
  // "ok", or the engine's list of problems.
  virtual std::string integrity_check() const = 0;
  // Tries to reach a server that went away again, until `deadline`; true once it answers. An
  // engine without a server (a file) never loses one.
  virtual bool reconnect(std::chrono::steady_clock::time_point /*deadline*/) { return false; }

  // A single integer or text from a query such as "SELECT count(*) FROM records".
  std::int64_t query_int(std::string_view sql) const {
    auto statement = prepare(sql);
    return statement->step() ? statement->column_int(0) : 0;
  }
  std::string query_text(std::string_view sql) const {
    auto statement = prepare(sql);
    return statement->step() ? statement->column_text(0) : std::string();
  }
};

// Begins writing on construction; rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& connection) : connection_(connection) { connection_.begin_writing(); }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!is_open_) return;
    try {
      connection_.execute("ROLLBACK");
    } catch (const DatabaseError&) {
      // The engine already rolled back (an I/O error, a lost server); nothing is left to undo.
    }
  }
  void commit() {
    connection_.execute("COMMIT");
    is_open_ = false;
  }

 private:
  Connection& connection_;
  bool is_open_ = true;
};

}  // namespace optune::db
