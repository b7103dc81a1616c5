// The database schema on a PostgreSQL server: the same versions and steps as SQLite's
// (schema_steps.hpp), read in PostgreSQL's types, with the version kept in a one-row table
// `optune_schema` (SQLite keeps it in the file's header). Several processes may open an empty
// database at once: the first to take the migration's lock creates the tables, the others find them.
#pragma once

#include "postgres_connection.hpp"

namespace optune::db {

// Checks that the server's database is optune's (or holds no optune tables yet); then, unless
// read_only, applies the missing steps (read_only: shows an older schema's records with the newer
// columns, as unknown, through temporary views). Returns the schema version. Throws DatabaseError
// naming the server when it is refused.
int prepare_postgres_schema(postgres::Connection& connection, bool read_only);

}  // namespace optune::db
