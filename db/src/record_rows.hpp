// How a TuningRecord maps onto the rows of the records, devices and workloads tables: the
// SELECT that reads a record back, the WHERE clause of a RecordFilter, and the writer that
// inserts records (skipping those already stored). database.cpp composes these into queries.
#pragma once

#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "optune/db/database.hpp"
#include "connection.hpp"

namespace optune::db {

// Selects every column read_record() needs, then extra_columns (", expr AS name", which
// read_record() ignores), from "records r" joined with "devices d" and "workloads w"; callers
// append WHERE / ORDER BY.
std::string select_records(const std::string& extra_columns = "");
TuningRecord read_record(const Statement& row);

// A WHERE clause ("" when the filter matches everything, else " WHERE ...") and its parameters
// in order. Matches the filter semantics documented in database.hpp.
struct WhereClause {
  std::string sql;
  std::vector<std::variant<std::string, double>> parameters;
  void add(const std::string& condition);
  void bind(Statement& statement, int first_index = 1) const;
};
WhereClause where_clause(const RecordFilter& filter);
WhereClause where_clause(const TaskKey& task);

// SHA-256 of `text`, in hex: a row's identity for skipping duplicates.
std::string sha256_hex(const std::string& text);

// The op of a workload key: the key up to its first '.' ("gemm" of "gemm.f32.M512.N512.K512").
std::string workload_op(const std::string& workload_key);

// Inserts records on one connection inside the caller's transaction, reusing its prepared
// statements. Identical records (every field but id) are stored once.
class RecordWriter {
 public:
  explicit RecordWriter(Connection& connection);
  // The new record's id, or 0 when an identical record is already stored. Throws DatabaseError
  // for a record that cannot be stored (empty key, non-finite number).
  std::int64_t write(const TuningRecord& record);

 private:
  std::unique_ptr<Statement> insert_device_;
  std::unique_ptr<Statement> insert_workload_;
  std::unique_ptr<Statement> insert_record_;
  // Devices and workloads this writer has stored (or found stored): a batch's records share them,
  // and each is one statement fewer per record (a round trip to a server).
  std::unordered_set<std::string> stored_devices_;
  std::unordered_set<std::string> stored_workloads_;
};

}  // namespace optune::db
