#include "optune/app/query.hpp"

#include <ctime>
#include <set>

#include "optune/app/bad_input.hpp"
#include "optune/app/tasks.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/scheduling/suite_tuning.hpp"

namespace optune::app {

double parse_since(const std::string& text, const std::string& command) {
  for (const char* format : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"}) {
    std::tm time{};
    const char* end = ::strptime(text.c_str(), format, &time);
    if (!end || *end != '\0') continue;
    time.tm_isdst = -1;  // local time, daylight saving as it was on that date
    return static_cast<double>(std::mktime(&time));
  }
  try {
    return static_cast<double>(std::time(nullptr)) - tuner::parse_duration(text);
  } catch (const std::invalid_argument& error) {
    throw BadInput(command + ": --since: " + std::string(error.what()) + "; or give a date (2026-11-22, 2026-11-22T18:30)");
  }
}

db::RecordFilter record_filter(const QueryRequest& request) {
  db::RecordFilter filter;
  filter.op = request.op;
  filter.target = request.target;
  filter.device = request.device;
  if (request.since) filter.since = *request.since;
  try {
    if (!request.shape.empty()) {
      if (request.op.empty()) throw BadInput("query: --shape needs --op");
      filter.workload_key = kernels::parse_workload(kernels::parse_op(request.op), request.shape).key();
    } else if (!request.op.empty()) {
      kernels::parse_op(request.op);
    }
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  return filter;
}

QueryResult query_records(const QueryRequest& request) {
  if (request.top == 0) throw BadInput("query: --top must be at least 1");
  const db::RecordFilter filter = record_filter(request);
  auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  QueryResult result;
  if (request.history) {
    result.records = database.records(filter);
    return result;
  }
  result.records = tuner::checked_top_k(database, filter, request.top, result.passed_over);
  std::set<std::string> seen;  // workload, target, device: only the best of each is asked
  for (const auto& record : result.records) {
    if (!seen.insert(record.workload_key + '\n' + record.target + '\n' + record.device_id).second) continue;
    if (auto next = tied_runner_up(database, record)) result.tied.emplace(record.id, std::move(*next));
  }
  return result;
}

std::optional<db::TuningRecord> tied_runner_up(const db::Database& database, const db::TuningRecord& best) {
  db::RecordFilter filter;
  filter.workload_key = best.workload_key;
  filter.target = best.target;
  filter.device = best.device_id;
  std::vector<std::string> passed_over;
  const auto ranked = tuner::checked_top_k(database, filter, 2, passed_over);
  if (ranked.size() < 2 || ranked[0].id != best.id || !db::are_tied(ranked[0], ranked[1])) return std::nullopt;
  return ranked[1];
}

nlohmann::json record_json(const db::TuningRecord& record) {
  const auto optional = [](const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {{"workload", record.workload_key},   {"template", record.template_name},
          {"target", record.target},           {"device", record.device_id},
          {"device_name", record.device_fingerprint.value("name", "")},
          {"config", record.config},           {"median_seconds", record.median_seconds},
          {"gflops", record.gflops},           {"error_kind", record.error_kind},
          {"error_message", record.error_message}, {"costs", record.costs},
          {"tuner", record.tuner},             {"run_id", record.run_id},
          {"timestamp", record.timestamp},     {"is_default", record.is_default},
          {"spread", optional(record.spread)},
          {"load", optional(record.load)},
          {"device_load", optional(record.device_load)},
          {"build_seconds", record.build_seconds},
          {"check_seconds", optional(record.check_seconds)},
          {"timing_seconds", optional(record.timing_seconds)},
          {"check_error", optional(record.check_error)},
          {"noisy", record.is_noisy()},
          {"winner", record.winner},
          {"toolchain", record.toolchain},
          {"optune_version", record.optune_version}};
}

}  // namespace optune::app
