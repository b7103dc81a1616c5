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
};

// schema_steps()[i] takes a database from schema version i to i + 1, in SQLite's SQL. Append
// only: a released step never changes, since databases in the field have already run it.
const std::vector<std::string>& schema_steps();

}  // namespace optune::db
