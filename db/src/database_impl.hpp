// Database's state and the helpers its operations share (database.cpp, dispatch_rules.cpp): the
// connection of either engine, and `run`, which carries an operation over a server's restart.
#pragma once

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"
#include "optune/db/database.hpp"
#include "record_rows.hpp"

namespace optune::db {

// How often a transaction that ran into another writer's (a deadlock the server broke) is run again.
constexpr int kConflictRetries = 5;

struct Database::Impl {
  std::unique_ptr<Connection> connection;
  Mode mode;
  int schema_version = 0;
  std::chrono::seconds reconnect_for = kDefaultReconnectFor;

  // Runs `operation` (one transaction, or one read); where the server went away meanwhile, waits
  // for it (reconnect_for at most) and runs it again: the server rolled the lost transaction
  // back, and a commit whose answer was lost is skipped on the second run by the records' content
  // hashes. So a batch is stored whole, once, or not at all.
  template <typename Operation>
  auto run(Operation&& operation) const -> decltype(operation()) {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    for (int conflicts = 0;;) {
      try {
        return operation();
      } catch (const ConnectionLost& lost) {
        if (lost.connection() != connection.get()) throw;  // another database's, for its owner
        if (!deadline) {
          deadline = std::chrono::steady_clock::now() + reconnect_for;
          std::cerr << "optune: " << lost.what() << "; reconnecting for up to " << reconnect_for.count() << " s\n";
        }
        if (!connection->reconnect(*deadline))
          throw StorageError(connection->name() + ": the database server went away and was not back within " +
                             std::to_string(reconnect_for.count()) + " s");
      } catch (const TransactionConflict&) {
        if (++conflicts > kConflictRetries) throw;
      }
    }
  }

  // Runs `sql` (a SELECT built on select_records()) and passes each record to `visit`.
  void for_each_record(const std::string& sql, const WhereClause& where,
                       const std::function<void(TuningRecord&&)>& visit) const {
    auto statement = connection->prepare(sql);
    where.bind(*statement);
    while (statement->step()) visit(read_record(*statement));
  }

  std::vector<TuningRecord> collect(const std::string& sql, const WhereClause& where) const {
    return run([&] {
      std::vector<TuningRecord> records;
      for_each_record(sql, where, [&records](TuningRecord&& record) { records.push_back(std::move(record)); });
      return records;
    });
  }

  void require_writable() const {
    if (mode == Mode::kReadOnly) throw DatabaseError(connection->name() + " is open read-only");
  }
};

// Copies the dispatch rules of `from` not stored in `into` (dispatch_rules.cpp), inside the
// caller's transaction on `into`; returns how many were new.
std::size_t merge_dispatches(Connection& into, const Connection& from);
// Inserts a rule on `connection`, inside the caller's transaction; 0 for one stored already.
std::int64_t write_dispatch(Connection& connection, const DispatchRecord& dispatch);
// Every stored rule, oldest first.
std::vector<DispatchRecord> all_dispatches(const Connection& connection);

}  // namespace optune::db
