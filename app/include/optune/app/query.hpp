// Reading results back as a front end asks for them: the best configs per workload, target and
// device, or every record, filtered by op, shape, target, device and time; records as JSON with
// the same field names in every front end (`optune query --format json`, optune.query()).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "optune/db/tuning_record.hpp"

namespace optune::app {

struct QueryRequest {
  std::string database;
  std::string op;      // "": every op
  std::string shape;   // needs op
  std::string target;
  std::string device;  // id or part of its name
  std::optional<double> since;  // unix seconds
  std::size_t top = 1;          // best K per workload, target and device
  bool history = false;         // every record, failures included, oldest first
};

// The best records are ranked without the records that fail their checks (forged or corrupted,
// e.g. a 1,000,000 GFLOP/s "best"): each is passed over and described in `passed_over`
// ("<workload key>: <problem>"). The history is every record as stored.
struct QueryResult {
  std::vector<db::TuningRecord> records;
  std::vector<std::string> passed_over;
  // The best records (not the history) whose workload, target and device have a next config tied
  // with them within noise (db::are_tied): by record id, that next record.
  std::map<std::int64_t, db::TuningRecord> tied;
};
QueryResult query_records(const QueryRequest& request);

// The records a request's op, shape, target, device and since choose, as query_records() and the
// report read them (its database, top and history aside). Throws BadInput naming a bad op or shape.
db::RecordFilter record_filter(const QueryRequest& request);

// A date or time (2026-11-22, 2026-11-22T18:30[:00], local time) or a duration back from now
// (90m, 12h, 7d), as unix seconds. Throws BadInput naming `command`'s --since.
double parse_since(const std::string& text, const std::string& command = "query");

nlohmann::json record_json(const db::TuningRecord& record);

// The record ranked after `best` for its workload, target and device when the two are tied within
// noise; nullopt when there is none, or it is slower beyond noise.
std::optional<db::TuningRecord> tied_runner_up(const db::Database& database, const db::TuningRecord& best);

}  // namespace optune::app
