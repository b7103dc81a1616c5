// The tests' PostgreSQL servers (tests/postgres/postgres_server.sh): the suite's shared one, which
// CTest's fixture `postgres` starts and stops (OPTUNE_TEST_POSTGRES_DIR names its folder), a
// database of a test's own on it, and a private server for a test that restarts or stops it.
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace optune::testing {

inline std::string postgres_script() { return std::string(OPTUNE_SOURCE_DIR) + "/tests/postgres/postgres_server.sh"; }

inline std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The shared server's folder ("" outside CTest, where the tests that need it skip).
inline std::string shared_postgres_dir() {
  const char* dir = std::getenv("OPTUNE_TEST_POSTGRES_DIR");
  return dir != nullptr ? dir : "";
}

// Runs SQL that returns no rows on the database `uri` names.
inline void run_on_database(const std::string& uri, const std::string& sql) {
  PGconn* connection = PQconnectdb(uri.c_str());
  const bool connected = PQstatus(connection) == CONNECTION_OK;
  PGresult* result = connected ? PQexec(connection, sql.c_str()) : nullptr;
  const bool ok = result != nullptr && (PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK);
  const std::string error = PQerrorMessage(connection);
  PQclear(result);
  PQfinish(connection);
  if (!ok) throw std::runtime_error(sql + ": " + error);
}

// Runs SQL on the server's maintenance database `postgres` (CREATE and DROP DATABASE).
inline void run_on_server(const std::string& server_uri, const std::string& sql) {
  run_on_database(server_uri + "/postgres", sql);
}

// A database of this test's own on a server (the shared one unless given), dropped at the end.
class ScratchDatabase {
 public:
  explicit ScratchDatabase(std::string server_dir = shared_postgres_dir()) : server_dir_(std::move(server_dir)) {
    static std::atomic<int> counter{0};
    server_uri_ = read_line(std::filesystem::path(server_dir_) / "uri");
    if (server_uri_.empty()) throw std::runtime_error("no PostgreSQL test server in " + server_dir_);
    ::setenv("PGPASSFILE", (std::filesystem::path(server_dir_) / "pgpass").c_str(), 1);
    name_ = "optune_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    run_on_server(server_uri_, "CREATE DATABASE " + name_);
  }
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;
  ~ScratchDatabase() {
    try {
      run_on_server(server_uri_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
      // A private server already stopped takes its databases with it.
    }
  }
  std::string uri() const { return server_uri_ + "/" + name_; }
  const std::string& server_uri() const { return server_uri_; }
  const std::string& name() const { return name_; }
  const std::string& server_dir() const { return server_dir_; }

 private:
  std::string server_dir_;
  std::string server_uri_;
  std::string name_;
};

// A server of one test's own, for a test that restarts or stops it; stopped and removed at the end.
class PrivateServer {
 public:
  explicit PrivateServer(const std::filesystem::path& dir) : dir_(dir.string()) {
    if (run("start") != 0) throw std::runtime_error("cannot start a PostgreSQL server in " + dir_);
  }
  PrivateServer(const PrivateServer&) = delete;
  PrivateServer& operator=(const PrivateServer&) = delete;
  ~PrivateServer() { run("stop"); }
  const std::string& dir() const { return dir_; }
  int run(const std::string& action) const {
    return std::system(("bash " + postgres_script() + " " + action + " '" + dir_ + "' >/dev/null 2>&1").c_str());
  }

 private:
  std::string dir_;
};

}  // namespace optune::testing

// The first line of a test that needs the shared server.
#define OPTUNE_REQUIRE_POSTGRES()                                                         \
  do {                                                                                    \
    if (optune::testing::shared_postgres_dir().empty())                                   \
      GTEST_SKIP() << "no PostgreSQL test server: run through ctest (fixture postgres)"; \
  } while (false)
