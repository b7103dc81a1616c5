#include "optune/db/server_lock.hpp"

#include <unistd.h>

#include "postgres_connection.hpp"

namespace optune::db {

namespace {

// The lock's two 32-bit keys (PostgreSQL's advisory locks take two int4s or one int8): a fixed
// one for optune ("OPTU") and the FNV-1a hash of the name, folded to 32 bits.
constexpr std::int64_t kOptuneKey = 0x4f505455;

std::int64_t name_key(const std::string& name) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ULL;
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(hash ^ (hash >> 32)));
}

// A connection of the lock's own, named by its holder's words (the application_name others see).
std::unique_ptr<postgres::Connection> lock_connection(const std::string& uri, const std::string& who) {
  return postgres::Connection::open(uri, "optune " + who + ", pid " + std::to_string(::getpid()) + " on " + host_name());
}

// "pg_advisory_lock(KEY, ?::int4)", or its shared or trying form.
std::string lock_call(const std::string& function, ServerLock::Mode mode) {
  return function + (mode == ServerLock::Mode::kShared ? "_shared(" : "(") + std::to_string(kOptuneKey) + ", ?::int4)";
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "an unknown host";
  return name;
}

struct ServerLock::Session {
  explicit Session(std::unique_ptr<postgres::Connection> held) : connection(std::move(held)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  std::unique_ptr<postgres::Connection> connection;
  // Closing the connection releases the lock, but only once the server has seen the connection
  // end: it is unlocked first, so that a lock given up is free when this returns (a prune right
  // after a tune's end found it still held).
  ~Session() {
    if (!connection) return;
    try {
      connection->prepare("SELECT pg_advisory_unlock_all()")->step();
    } catch (const std::exception&) {
      // A connection already lost holds nothing.
    }
  }
};

ServerLock::ServerLock(std::unique_ptr<Session> session) : session_(std::move(session)) {}
ServerLock::ServerLock(ServerLock&&) noexcept = default;
ServerLock& ServerLock::operator=(ServerLock&&) noexcept = default;
ServerLock::~ServerLock() = default;

std::optional<ServerLock> ServerLock::try_acquire(const std::string& uri, const std::string& name, Mode mode,
                                                  const std::string& who, std::string* holder) {
  auto connection = lock_connection(uri, who);
  const std::string key = std::to_string(name_key(name));
  auto statement = connection->prepare("SELECT CASE WHEN " + lock_call("pg_try_advisory_lock", mode) + " THEN 1 ELSE 0 END");
  statement->bind_text(1, key);
  if (statement->step() && statement->column_int(0) == 1)
    return ServerLock(std::make_unique<Session>(std::move(connection)));
  if (holder != nullptr) {
    // (Another user's session may hide its application_name from us.)
    auto who_holds = connection->prepare(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype ="
        " 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND l.objsubid = 2 AND l.classid = ?::int4::oid AND l.objid = ?::int4::oid LIMIT 1");
    who_holds->bind_text(1, std::to_string(kOptuneKey)).bind_text(2, key);
    *holder = who_holds->step() && !who_holds->column_text(0).empty() ? who_holds->column_text(0)
                                                                        : "another session of the database server";
  }
  return std::nullopt;
}

ServerLock ServerLock::acquire(const std::string& uri, const std::string& name, Mode mode, const std::string& who) {
  auto connection = lock_connection(uri, who);
  // The server answers once the lock is granted: a wait without polling.
  auto statement = connection->prepare("SELECT " + lock_call("pg_advisory_lock", mode));
  statement->bind_text(1, std::to_string(name_key(name)));
  statement->step();
  statement.reset();
  return ServerLock(std::make_unique<Session>(std::move(connection)));
}

}  // namespace optune::db
