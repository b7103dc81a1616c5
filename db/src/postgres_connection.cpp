#include "postgres_connection.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace optune::db::postgres {

namespace {

// Where a password belongs instead: said whenever one is found, or missed, in a connection string.
constexpr const char* kWherePasswordsGo =
    "put it in ~/.pgpass (or the file PGPASSFILE names) or in a service file (PGSERVICEFILE), never on a"
    " command line";

// libpq's messages span lines ("connection to server ... failed: ...\n\tIs the server running...");
// a command's error is one line.
std::string one_line(std::string text) {
  std::replace_if(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); }, ' ');
  std::string line;
  for (char c : text) {
    if (c == ' ' && (line.empty() || line.back() == ' ')) continue;
    line += c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

bool is_lost_connection(const std::string& sqlstate) {
  // Class 08: connection exceptions; 57P01-03: the server shuts down, crashed, or starts up.
  return sqlstate.starts_with("08") || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03";
}

bool is_storage_failure(const std::string& sqlstate) {
  // Class 53: insufficient resources (disk full, out of memory); 55P03: a lock not available;
  // 57014: a statement cancelled (statement_timeout).
  return sqlstate.starts_with("53") || sqlstate == "55P03" || sqlstate == "57014";
}

// PostgreSQL's text cannot hold a NUL byte; SQLite's can. A NUL stored reads back as U+FFFD.
std::string without_nul(std::string_view value) {
  std::string text;
  text.reserve(value.size());
  for (char c : value) {
    if (c == '\0') text += "\xEF\xBF\xBD";
    else text += c;
  }
  return text;
}

std::string keyword_before_equals(const std::string& location) {
  const auto equals = location.find('=');
  if (equals == std::string::npos) return {};
  std::string keyword = location.substr(0, equals);
  while (!keyword.empty() && keyword.back() == ' ') keyword.pop_back();
  keyword.erase(0, keyword.find_first_not_of(' '));
  if (keyword.empty() || !std::all_of(keyword.begin(), keyword.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; }))
    return {};
  return keyword;
}

}  // namespace

bool is_server_uri(const std::string& location) {
  if (location.starts_with("postgresql://") || location.starts_with("postgres://")) return true;
  const std::string keyword = keyword_before_equals(location);
  if (keyword.empty()) return false;
  // A keyword libpq knows ("service", "host", "dbname", ...), not a file named "notes=old.db".
  PQconninfoOption* defaults = PQconndefaults();
  bool known = false;
  for (auto* option = defaults; option != nullptr && option->keyword != nullptr; ++option)
    known = known || keyword == option->keyword;
  PQconninfoFree(defaults);
  return known;
}

std::string numbered_parameters(std::string_view sql) {
  std::string numbered;
  int next = 1;
  bool in_quotes = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') in_quotes = !in_quotes;
    if (c != '?' || in_quotes) {
      numbered += c;
      continue;
    }
    numbered += '$';
    if (i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) continue;  // "?7": "$7"
    numbered += std::to_string(next++);
  }
  return numbered;
}

void Connection::Closer::operator()(pg_conn* handle) const { PQfinish(handle); }

std::unique_ptr<Connection> Connection::open(const std::string& uri, const std::string& who) {
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &parse_error);
  if (options == nullptr) {
    // The string is not echoed: a malformed one may still hold a password.
    const std::string reason = parse_error != nullptr ? one_line(parse_error) : "out of memory";
    PQfreemem(parse_error);
    throw DatabaseError("not a valid PostgreSQL connection string (" + reason + ")");
  }
  bool has_password = false;
  for (auto* option = options; option->keyword != nullptr; ++option)
    has_password = has_password || (std::string_view(option->keyword) == "password" && option->val != nullptr &&
                                    *option->val != '\0');
  PQconninfoFree(options);
  if (has_password)
    throw DatabaseError(std::string("the database connection string holds a password: ") + kWherePasswordsGo);

  // Defaults first: what the connection string itself says comes later and wins.
  const char* keywords[] = {"connect_timeout", "application_name", "client_encoding", "dbname", nullptr};
  const char* values[] = {"10", who.c_str(), "UTF8", uri.c_str(), nullptr};
  pg_conn* handle = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (handle == nullptr) throw DatabaseError(uri + ": cannot connect (out of memory)");
  std::unique_ptr<Connection> connection(new Connection(uri, handle));
  if (PQstatus(handle) != CONNECTION_OK) {
    std::string reason = one_line(PQerrorMessage(handle));
    if (reason.find("password") != std::string::npos) reason += "; for a password, " + std::string(kWherePasswordsGo);
    throw DatabaseError(uri + ": cannot connect to the PostgreSQL server (" + reason + ")");
  }
  // NOTICEs ("relation already exists, skipping") are the server talking to itself.
  PQsetNoticeProcessor(handle, [](void*, const char*) {}, nullptr);
  return connection;
}

void Connection::fail(const pg_result* result) const {
  const char* field = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = field != nullptr ? field : "";
  const char* primary = result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const std::string message = one_line(primary != nullptr ? primary : PQerrorMessage(handle_.get()));
  if (PQstatus(handle_.get()) == CONNECTION_BAD || is_lost_connection(sqlstate))
    throw ConnectionLost(uri_ + ": the server went away (" + message + ")", this);
  // 40P01: deadlock detected; 40001: a serialization failure.
  if (sqlstate == "40P01" || sqlstate == "40001") throw TransactionConflict(uri_ + ": " + message);
  if (is_storage_failure(sqlstate)) throw StorageError(uri_ + ": " + message);
  throw DatabaseError(uri_ + ": " + message);
}

void Connection::execute(const std::string& sql) {
  if (reading_ != nullptr) reading_->finish();
  std::unique_ptr<pg_result, Statement::Clearer> result(PQexec(handle_.get(), sql.c_str()));
  const auto status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(result.get());
}

std::unique_ptr<db::Statement> Connection::prepare(std::string_view sql) const {
  return std::unique_ptr<db::Statement>(new Statement(*this, numbered_parameters(sql)));
}

std::string Connection::integrity_check() const {
  query_int("SELECT count(*) FROM records");
  return "ok";
}

bool Connection::reconnect(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    PQreset(handle_.get());
    if (PQstatus(handle_.get()) == CONNECTION_OK) {
      if (!session_setup_.empty()) execute(session_setup_);
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void Statement::Clearer::operator()(pg_result* result) const { PQclear(result); }

Statement::~Statement() {
  finish();
  if (prepared_name_.empty()) return;
  // (A session that went away took its prepared statements with it: nothing to undo.)
  PQclear(PQexec(connection_->handle_.get(), ("DEALLOCATE " + prepared_name_).c_str()));
}

void Statement::set(int index, std::optional<std::string> value) {
  if (index < 1) throw DatabaseError(connection_->uri_ + ": parameter index " + std::to_string(index) + " out of range");
  if (parameters_.size() < static_cast<std::size_t>(index)) parameters_.resize(static_cast<std::size_t>(index));
  parameters_[static_cast<std::size_t>(index) - 1] = std::move(value);
}

Statement& Statement::bind_text(int index, std::string_view value) {
  set(index, without_nul(value));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);  // 17 digits: the same double reads back
  set(index, std::string(text));
  return *this;
}

Statement& Statement::bind_int(int index, std::int64_t value) {
  set(index, std::to_string(value));
  return *this;
}

Statement& Statement::bind_null(int index) {
  set(index, std::nullopt);
  return *this;
}

void Statement::send() {
  std::vector<const char*> values;
  values.reserve(parameters_.size());
  for (const auto& parameter : parameters_) values.push_back(parameter ? parameter->c_str() : nullptr);
  if (connection_->reading_ != nullptr) connection_->reading_->finish();
  pg_conn* handle = connection_->handle_.get();
  if (++runs_ == 2) {
    const std::string name = "optune_" + std::to_string(++connection_->prepared_count_);
    std::unique_ptr<pg_result, Clearer> prepared(PQprepare(handle, name.c_str(), sql_.c_str(), 0, nullptr));
    if (!prepared || PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) connection_->fail(prepared.get());
    prepared_name_ = name;
  }
  const int sent = prepared_name_.empty()
                       ? PQsendQueryParams(handle, sql_.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                           nullptr, nullptr, /*resultFormat=*/0)
                       : PQsendQueryPrepared(handle, prepared_name_.c_str(), static_cast<int>(values.size()),
                                             values.data(), nullptr, nullptr, /*resultFormat=*/0);
  if (sent == 0) connection_->fail(nullptr);
  is_running_ = true;
  connection_->reading_ = this;
  PQsetSingleRowMode(handle);  // fails only when too late, which it is not here
}

bool Statement::step() {
  row_.reset();
  if (is_done_) return false;
  if (!is_running_) send();
  pg_conn* handle = connection_->handle_.get();
  for (;;) {
    std::unique_ptr<pg_result, Clearer> result(PQgetResult(handle));
    if (!result) {
      finish();
      return false;
    }
    const auto status = PQresultStatus(result.get());
    if (status == PGRES_SINGLE_TUPLE) {
      row_ = std::move(result);
      return true;
    }
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) continue;  // the end of the rows
    finish();
    connection_->fail(result.get());
  }
}

void Statement::finish() {
  if (!is_running_) return;
  while (pg_result* result = PQgetResult(connection_->handle_.get())) PQclear(result);
  is_running_ = false;
  is_done_ = true;
  if (connection_->reading_ == this) connection_->reading_ = nullptr;
}

void Statement::reset() {
  finish();
  row_.reset();
  parameters_.clear();
  is_done_ = false;
}

std::string Statement::column_text(int column) const {
  if (!row_ || PQgetisnull(row_.get(), 0, column)) return {};
  return std::string(PQgetvalue(row_.get(), 0, column), static_cast<std::size_t>(PQgetlength(row_.get(), 0, column)));
}

double Statement::column_double(int column) const {
  if (!row_ || PQgetisnull(row_.get(), 0, column)) return 0;
  return std::strtod(PQgetvalue(row_.get(), 0, column), nullptr);
}

std::int64_t Statement::column_int(int column) const {
  if (!row_ || PQgetisnull(row_.get(), 0, column)) return 0;
  return std::strtoll(PQgetvalue(row_.get(), 0, column), nullptr, 10);
}

bool Statement::column_is_null(int column) const { return !row_ || PQgetisnull(row_.get(), 0, column); }

}  // namespace optune::db::postgres
