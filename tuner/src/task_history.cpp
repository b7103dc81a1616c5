#include "optune/tuner/task_history.hpp"

#include "optune/tuner/task_session.hpp"

namespace optune::tuner {

TaskHistory load_history(const db::Database& database, const measure::MeasureTask& task,
                         bool include_related) {
  TaskHistory history;
  history.own = database.task_records(task_key(task));
  if (!include_related) return history;
  db::RecordFilter filter;
  filter.template_name = task.kernel_template->name();
  filter.target = task.target.str();
  filter.device = task.device.fingerprint_id();
  for (auto& record : database.records(filter))
    if (record.workload_key != task.workload.key()) history.related.push_back(std::move(record));
  return history;
}

ParsedRecords parse_records(const search_space::ConfigSpace& space,
                            const std::vector<db::TuningRecord>& records) {
  ParsedRecords parsed;
  for (const auto& record : records) {
    try {
      parsed.configs.push_back(space.from_json(record.config));
      parsed.gflops.push_back(record.ok() ? record.gflops : 0.0);
    } catch (const std::invalid_argument&) {
      // A config of an older space: not a point of this one.
    }
  }
  return parsed;
}

ConfigSet measured_set(const search_space::ConfigSpace& space, const std::vector<db::TuningRecord>& records) {
  auto parsed = parse_records(space, records);
  return ConfigSet(parsed.configs.begin(), parsed.configs.end());
}

std::optional<UsableRecord> fastest_usable(const search_space::ConfigSpace& space,
                                           const std::vector<db::TuningRecord>& records) {
  std::optional<UsableRecord> fastest;
  for (const auto& record : records) {
    if (!record.ok() || (fastest && fastest->record.median_seconds <= record.median_seconds)) continue;
    try {
      fastest = UsableRecord{record, space.from_json(record.config)};
    } catch (const std::invalid_argument&) {
      // A config of an older space: not a point of this one.
    }
  }
  return fastest;
}

}  // namespace optune::tuner
