// The schema's steps, shared by both engines (schema.cpp for SQLite, postgres_schema.cpp for
// PostgreSQL, which reads the same steps in its own types): the forward-only migrations, and the
// columns the records table gained after schema 1 with the value each reads as in older rows.
#pragma once

#include <string>
#include <vector>

namespace optune::db {

// Columns added to `records` after schema 1, each with the version that added it and the value
// it reads as in the rows that were there before: unknown. Append only, as the migrations.
struct AddedColumn {
  int version;             // the schema version that has it
  const char* definition;  // as SQLite's ALTER TABLE ADD COLUMN takes it
  const char* name;
  const char* before;      // its value in older rows
};
inline constexpr AddedColumn kAddedColumns[] = {
    {2, "spread REAL", "spread", "NULL"},  // relative half-width of the median's 95% interval
    {2, "load REAL", "load", "NULL"},      // other processes' share of the CPU time meanwhile
    {3, "winner INTEGER NOT NULL DEFAULT 0", "winner", "0"},  // its config won a final comparison
    {4, "device_load REAL", "device_load", "NULL"},  // other processes' share of the GPU's time meanwhile
    {5, "check_seconds REAL", "check_seconds", "NULL"},    // the worker's seconds checking the output
    {5, "timing_seconds REAL", "timing_seconds", "NULL"},  // and timing the runs
    {6, "toolchain TEXT", "toolchain", "NULL"},  // JSON: the compiler and flags that built it
    {8, "check_error REAL", "check_error", "NULL"},  // how far the output was from the reference
};

// Tables added after schema 1, each with the version that added it, as SQLite's CREATE TABLE takes
// it with "{TABLE}" for its name (a read-only look at an older database makes it a temporary,
// empty one of that name, so that readers find it). Append only.
struct AddedTable {
  int version;
  const char* name;
  const char* definition;
};
inline constexpr AddedTable kAddedTables[] = {
    // The measured dispatch of shape ranges (tuner/results/shape_dispatch.hpp): per range,
    // target and device, its latest rule is the one in force.
    {7, "dispatch_rules", R"sql(CREATE TABLE {TABLE} (
            id             INTEGER PRIMARY KEY,
            content_hash   TEXT NOT NULL UNIQUE,  -- SHA-256 of the row's fields: merge skips duplicates
            template_name  TEXT NOT NULL,
            target         TEXT NOT NULL,
            device_id      TEXT NOT NULL,
            low_key        TEXT NOT NULL,         -- the range's lowest shape, as a workload key
            high_key       TEXT NOT NULL,         -- and its highest
            rule           TEXT NOT NULL,         -- JSON: configs, leaves, the matrix measured
            timestamp      REAL NOT NULL,         -- unix seconds
            optune_version TEXT NOT NULL
          ))sql"},
};

// The definition of an added table under the name `as` (e.g. "TEMP TABLE dispatch_rules").
std::string table_definition(const AddedTable& table, const std::string& as);

// schema_steps()[i] takes a database from schema version i to i + 1, in SQLite's SQL. Append
// only: a released step never changes, since databases in the field have already run it.
const std::vector<std::string>& schema_steps();

}  // namespace optune::db
