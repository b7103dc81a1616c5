// The database schema: which files optune accepts, and the forward-only migrations that bring an
// accepted file to kSchemaVersion. The version lives in the file (PRAGMA user_version) and the
// file is marked as optune's (PRAGMA application_id), so a foreign SQLite file is never mistaken
// for an empty optune database.
#pragma once

#include "sqlite_handle.hpp"

namespace optune::db {

// "OPTU" in ASCII: the SQLite header's application id of every optune database.
inline constexpr std::int64_t kApplicationId = 0x4f505455;

// Checks that the file is an optune database (or a new, empty file) before anything writes to
// it; then, unless read_only, switches it to WAL and applies the missing migrations (read_only: shows an
// older file's records with the newer columns, as unknown, without writing to it). Returns the
// schema version. Throws DatabaseError naming the file when it is refused.
int prepare_schema(sqlite::Connection& connection, bool read_only);

}  // namespace optune::db
