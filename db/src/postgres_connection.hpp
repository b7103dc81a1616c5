// The one wrapper over libpq in optune: the PostgreSQL engine of connection.hpp. A connection to a
// server named by a libpq connection URI or keyword string, statements run with their parameters
// as text (numbers printed exactly) and rows read one at a time (single-row mode, so a million
// records are never held at once). libpq's failures become one-line DatabaseErrors here; a server
// that went away mid-statement is ConnectionLost, which the database retries after reconnecting,
// and a deadlock between writers TransactionConflict.
//
// Why libpq and not libpqxx: optune needs a dozen calls of it (connect, run with parameters, read
// rows, reset), already wraps SQLite the same way, and libpq is the interface every PostgreSQL
// client shares, so its keywords, service files and PGPASSFILE work as users know them.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"

struct pg_conn;
struct pg_result;

namespace optune::db::postgres {

class Statement;

class Connection final : public db::Connection {
 public:
  // Connects (within connect_timeout, 10 s unless the URI says otherwise) as application `who`.
  // Throws DatabaseError with one line: a malformed URI, a URI holding a password, a server that
  // refuses the login or cannot be reached.
  static std::unique_ptr<Connection> open(const std::string& uri, const std::string& who = "optune");

  const std::string& name() const override { return uri_; }
  void execute(const std::string& sql) override;
  std::unique_ptr<db::Statement> prepare(std::string_view sql) const override;
  void begin_writing() override { execute("BEGIN"); }
  // The server keeps its own pages consistent (checksums, WAL); what optune can check is that the
  // tables answer.
  std::string integrity_check() const override;

  // SQL run again on every new session after a reconnect (temporary views of an older schema).
  void set_session_setup(std::string sql) { session_setup_ = std::move(sql); }
  // Tries to reach the server again until `deadline`, a second apart; true once it answers.
  bool reconnect(std::chrono::steady_clock::time_point deadline) override;

 private:
  struct Closer {
    void operator()(pg_conn* handle) const;
  };
  Connection(std::string uri, pg_conn* handle) : uri_(std::move(uri)), handle_(handle) {}
  // Throws the error `result` (nullptr: the connection's own) stands for.
  [[noreturn]] void fail(const pg_result* result) const;

  std::string uri_;
  std::unique_ptr<pg_conn, Closer> handle_;
  std::string session_setup_;
  // The statement whose rows the server is sending: a connection reads one statement at a time, so
  // running another (or execute()) first ends this one (its step() then answers false).
  mutable Statement* reading_ = nullptr;
  mutable int prepared_count_ = 0;  // names the session's prepared statements
  friend class Statement;
};

class Statement final : public db::Statement {
 public:
  ~Statement() override;
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
  struct Clearer {
    void operator()(pg_result* result) const;
  };
  Statement(const Connection& connection, std::string sql) : connection_(&connection), sql_(std::move(sql)) {}
  void set(int index, std::optional<std::string> value);
  void send();
  // Reads what the server still sends for this statement, so the connection is free again.
  void finish();

  const Connection* connection_;
  std::string sql_;  // with $1, $2, ...
  // A statement run again (a writer's insert) is prepared on the server at its second run, so its
  // parse and plan are done once; "" until then.
  std::string prepared_name_;
  int runs_ = 0;
  std::vector<std::optional<std::string>> parameters_;
  std::unique_ptr<pg_result, Clearer> row_;
  bool is_running_ = false;  // sent, and the server still sending
  bool is_done_ = false;     // every row read
  friend class Connection;
};

// "$1"-numbered SQL from SQL written with SQLite's "?" and "?N" parameters (quoted text left as is).
std::string numbered_parameters(std::string_view sql);

// Whether `location` names a PostgreSQL server: a postgresql:// or postgres:// URI, or a libpq
// keyword string ("service=team", "host=db port=5433 dbname=optune").
bool is_server_uri(const std::string& location);

}  // namespace optune::db::postgres
