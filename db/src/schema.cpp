#include "schema.hpp"

#include <sqlite3.h>

#include <string>
#include <vector>

#include "schema_steps.hpp"

namespace optune::db {

const std::vector<std::string>& schema_steps() {
  static const std::vector<std::string> steps = [] {
    std::vector<std::string> sql = {
        // 0 -> 1: devices, workloads, records.
        R"sql(
          CREATE TABLE devices (
            id          TEXT PRIMARY KEY,   -- DeviceInfo::fingerprint_id()
            name        TEXT NOT NULL,      -- fingerprint's "name", for --device substring queries
            fingerprint TEXT NOT NULL       -- JSON
          );
          CREATE TABLE workloads (
            key TEXT PRIMARY KEY,           -- Workload::key()
            op  TEXT NOT NULL               -- the key up to its first '.'
          );
          CREATE TABLE records (
            id             INTEGER PRIMARY KEY,
            content_hash   TEXT NOT NULL UNIQUE,  -- SHA-256 of the record's JSON line: skips duplicates
            workload_key   TEXT NOT NULL REFERENCES workloads(key),
            template_name  TEXT NOT NULL,
            target         TEXT NOT NULL,
            device_id      TEXT NOT NULL REFERENCES devices(id),
            config         TEXT NOT NULL,         -- canonical JSON (TuningRecord::config_text())
            costs          TEXT NOT NULL,         -- JSON array of seconds, one per repeat
            median_seconds REAL NOT NULL,
            gflops         REAL NOT NULL,
            error_kind     TEXT NOT NULL,
            error_message  TEXT NOT NULL,
            build_seconds  REAL NOT NULL,
            timestamp      REAL NOT NULL,         -- unix seconds
            tuner          TEXT NOT NULL,
            run_id         TEXT NOT NULL,
            optune_version TEXT NOT NULL,
            is_default     INTEGER NOT NULL
          );
          -- A task's records and measured configs.
          CREATE INDEX records_by_task ON records (workload_key, template_name, target, device_id, config);
          -- best() and top_k(): successful records by median within a task.
          CREATE INDEX records_best ON records (workload_key, target, device_id, median_seconds)
            WHERE error_kind = 'ok';
          CREATE INDEX records_by_time ON records (timestamp);
        )sql",
    };
    // 1 -> 2 and on: the columns and tables each version added.
    for (int version = 2; version <= kSchemaVersion; ++version) {
      std::string step;
      for (const auto& column : kAddedColumns)
        if (column.version == version) step += std::string("ALTER TABLE records ADD COLUMN ") + column.definition + ";\n";
      for (const auto& table : kAddedTables)
        if (table.version == version) step += table_definition(table, std::string("TABLE ") + table.name) + ";\n";
      sql.push_back(step);
    }
    return sql;
  }();
  return steps;
}

std::string table_definition(const AddedTable& table, const std::string& as) {
  std::string sql = table.definition;
  const std::string mark = "TABLE {TABLE}";
  return sql.replace(sql.find(mark), mark.size(), as);
}

namespace {

// A file of an older schema opened read-only cannot be migrated; a temporary view (in the
// connection's own memory, shadowing the file's table by name) shows its records with the newer
// columns, as unknown, and temporary empty tables stand for the tables it lacks. So every reading
// command reads an old database as it is.
void show_as_current(sqlite::Connection& connection, std::int64_t version) {
  std::string columns;
  for (const auto& column : kAddedColumns)
    if (column.version > version) columns += std::string(", ") + column.before + " AS " + column.name;
  if (!columns.empty()) connection.execute("CREATE TEMP VIEW records AS SELECT *" + columns + " FROM main.records");
  for (const auto& table : kAddedTables)
    if (table.version > version) connection.execute(table_definition(table, std::string("TEMP TABLE ") + table.name));
}

struct FileState {
  std::int64_t user_version = 0;
  std::int64_t application_id = 0;
  std::int64_t object_count = 0;  // tables, indexes, views, triggers
};

// Read-only look at the header and catalogue. A file that is not SQLite fails here, before any
// write could touch it.
FileState inspect(const sqlite::Connection& connection) {
  try {
    return FileState{connection.query_int("PRAGMA user_version"), connection.query_int("PRAGMA application_id"),
                     connection.query_int("SELECT count(*) FROM sqlite_schema")};
  } catch (const sqlite::SqliteError& error) {
    if (error.code() != SQLITE_NOTADB) throw;
    throw DatabaseError(connection.name() + " is not an optune database (file is not a database)");
  }
}

bool is_new_file(const FileState& state) {
  return state.user_version == 0 && state.application_id == 0 && state.object_count == 0;
}

void check_accepted(const sqlite::Connection& connection, const FileState& state, bool read_only) {
  const std::string& path = connection.name();
  if (is_new_file(state)) {
    if (read_only) throw DatabaseError(path + " is not an optune database (it is empty)");
    return;
  }
  if (state.application_id != kApplicationId) {
    throw DatabaseError(path + " is not an optune database (it holds another application's SQLite data)");
  }
  if (state.user_version < 0) {
    throw DatabaseError(path + ": database schema version " + std::to_string(state.user_version) +
                        " is not one optune writes");
  }
  if (state.user_version > kSchemaVersion) {
    throw DatabaseError(path + ": database schema version " + std::to_string(state.user_version) +
                        " is newer than this optune supports (" + std::to_string(kSchemaVersion) + ")");
  }
}

void enable_wal(sqlite::Connection& connection) {
  // An in-memory database answers "memory" and stays so; WAL only applies to files.
  if (connection.query_text("PRAGMA journal_mode") == "wal") return;
  connection.query_text("PRAGMA journal_mode = WAL");
}

void migrate(sqlite::Connection& connection) {
  Transaction transaction(connection);
  // Read again under the write lock: another process may have migrated the file meanwhile.
  const FileState state = inspect(connection);
  check_accepted(connection, state, /*read_only=*/false);
  for (auto version = state.user_version; version < kSchemaVersion; ++version) {
    connection.execute(schema_steps().at(static_cast<std::size_t>(version)));
  }
  connection.execute("PRAGMA application_id = " + std::to_string(kApplicationId));
  connection.execute("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  transaction.commit();
}

}  // namespace

int prepare_schema(sqlite::Connection& connection, bool read_only) {
  if (schema_steps().size() != static_cast<std::size_t>(kSchemaVersion))
    throw DatabaseError("optune's schema steps do not reach its schema version " + std::to_string(kSchemaVersion));
  const FileState state = inspect(connection);
  check_accepted(connection, state, read_only);
  if (read_only) {
    show_as_current(connection, state.user_version);
    return static_cast<int>(state.user_version);
  }
  if (connection.is_read_only()) {
    throw DatabaseError(connection.name() + " is not writable (open it read-only to query it)");
  }
  enable_wal(connection);
  if (state.user_version < kSchemaVersion) migrate(connection);
  connection.execute("PRAGMA foreign_keys = ON");
  return kSchemaVersion;
}

}  // namespace optune::db
