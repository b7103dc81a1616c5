// The table `optune query` prints of a query's records: one row per record, every column as wide
// as its widest cell (conv2d keys run to 60 characters), the device by its name (its id, the
// fingerprint's hash, stays in the JSON and CSV), then the lines on ties and noisy records.
#pragma once

#include <string>

#include "optune/app/query.hpp"

namespace optune::app {

std::string query_table(const QueryResult& result);

// What the table names a record's device by: its name, with the start of its id where another
// device of the same name is listed too (an AVX2-capped run of the same CPU, say); its id where
// it has no name.
std::string device_label(const db::TuningRecord& record, const std::vector<db::TuningRecord>& listed);

}  // namespace optune::app
