#include "sqlite_handle.hpp"

#include <filesystem>
#include <sqlite3.h>

namespace optune::db::sqlite {

namespace {

std::string open_failure_reason(int code, Connection::Access access) {
  if (code == SQLITE_CANTOPEN) {
    return access == Connection::Access::kReadWriteCreate ? "cannot open or create" : "cannot open for reading";
  }
  return "cannot open";
}

}  // namespace

void throw_error(int code, const std::string& message) {
  const int primary = code & 0xff;
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR) throw StorageError(message);
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)  // the moment is wrong, not the input
    throw StorageError(message + " (another process held the database past the busy timeout)");
  throw SqliteError(primary, message);
}

void Connection::Closer::operator()(sqlite3* handle) const { sqlite3_close_v2(handle); }

std::unique_ptr<Connection> Connection::open(const std::string& path, Access access,
                                             std::chrono::milliseconds busy_timeout) {
  const int flags = access == Access::kReadWriteCreate ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                                       : SQLITE_OPEN_READONLY;
  sqlite3* handle = nullptr;
  int code = SQLITE_OK;
  if (access == Access::kImmutable) {
    // A URI: '%', '?' and '#' of the path escaped, so that they stay part of the file's name.
    std::string uri = "file:";
    for (char c : std::filesystem::absolute(path).string()) {
      if (c == '%' || c == '?' || c == '#') uri += c == '%' ? "%25" : c == '?' ? "%3f" : "%23";
      else uri += c;
    }
    uri += "?immutable=1";
    code = sqlite3_open_v2(uri.c_str(), &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  } else {
    code = sqlite3_open_v2(path.c_str(), &handle, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  }
  // sqlite3_open_v2 allocates a handle even when it fails; it must be closed either way.
  std::unique_ptr<Connection> connection(new Connection(path, handle));
  if (code != SQLITE_OK) {
    const std::string detail = handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(code);
    throw SqliteError(code, path + ": " + open_failure_reason(code, access) + " (" + detail + ")");
  }
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, static_cast<int>(busy_timeout.count()));
  return connection;
}

void Connection::fail(int code) const {
  throw_error(code, path_ + ": " + sqlite3_errmsg(handle_.get()));
}

void Connection::execute(const std::string& sql) {
  char* message = nullptr;
  const int code = sqlite3_exec(handle_.get(), sql.c_str(), nullptr, nullptr, &message);
  if (code == SQLITE_OK) return;
  const std::string text = message != nullptr ? message : sqlite3_errstr(code);
  sqlite3_free(message);
  throw_error(code, path_ + ": " + text);
}

std::unique_ptr<db::Statement> Connection::prepare(std::string_view sql) const {
  sqlite3_stmt* handle = nullptr;
  const int code = sqlite3_prepare_v2(handle_.get(), sql.data(), static_cast<int>(sql.size()), &handle, nullptr);
  if (code != SQLITE_OK) fail(code);
  return std::unique_ptr<db::Statement>(new Statement(*this, handle));
}

bool Connection::is_read_only() const { return sqlite3_db_readonly(handle_.get(), "main") == 1; }

void Statement::Finalizer::operator()(sqlite3_stmt* handle) const { sqlite3_finalize(handle); }

void Statement::check_bind(int code) const {
  if (code != SQLITE_OK) connection_->fail(code);
}

Statement& Statement::bind_text(int index, std::string_view value) {
  check_bind(sqlite3_bind_text(handle_.get(), index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(handle_.get(), index));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(handle_.get(), index, value));
  return *this;
}

Statement& Statement::bind_int(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(handle_.get(), index, value));
  return *this;
}

bool Statement::step() {
  const int code = sqlite3_step(handle_.get());
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  connection_->fail(code);
}

void Statement::reset() {
  sqlite3_reset(handle_.get());
  sqlite3_clear_bindings(handle_.get());
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(handle_.get(), column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(handle_.get(), column)));
}

double Statement::column_double(int column) const { return sqlite3_column_double(handle_.get(), column); }

bool Statement::column_is_null(int column) const { return sqlite3_column_type(handle_.get(), column) == SQLITE_NULL; }

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(handle_.get(), column); }

}  // namespace optune::db::sqlite
