// Records moving between databases: JSON lines imported (`optune import`) and two databases merged
// (`optune merge`). Only records the tuner itself would write are taken (tuner/search/record_check.hpp),
// checked before anything is written; records already present (same content hash) are skipped,
// so nothing is counted twice and importing or merging again adds nothing.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "optune/db/database.hpp"

namespace optune::app {

// JSON lines (optune export) into the database; BadInput for a malformed line or record.
db::Database::JsonlCounts import_records(const std::string& database, std::istream& in);

struct MergeOutcome {
  std::size_t from_first = 0;   // added from the first database (--into only)
  std::size_t from_second = 0;  // added from the second
  std::size_t records = 0;      // the merged database's records
};

// The second database's records into the first, or both into `into` (made where missing) when it
// is given; BadInput for the same database twice, `into` one of the inputs, or a record the tuner
// would not have written ("record N of FILE: ...", N counting from 1, oldest first).
MergeOutcome merge_databases(const std::string& first, const std::string& second, const std::string& into = "");

}  // namespace optune::app
