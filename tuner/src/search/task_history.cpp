#include "optune/tuner/search/task_history.hpp"

#include "optune/measure/median_interval.hpp"
#include "optune/tuner/search/record_check.hpp"

namespace optune::tuner {

TaskHistory load_history(const db::Database& database, const measure::MeasureTask& task,
                         bool include_related, const std::set<std::string>& unseen) {
  // A transport failure measured nothing of its config: the config stays unmeasured (a later run
  // measures it) and the record is no training row.
  TaskHistory history;
  for (auto& record : database.task_records(task_key(task)))
    if (!record.is_transport_failure()) history.own.push_back(std::move(record));
  if (!include_related) return history;
  db::RecordFilter filter;
  filter.template_name = task.kernel_template->name();
  filter.target = task.target.str();
  filter.device = task.device.fingerprint_id();
  for (auto& record : database.records(filter))
    if (record.workload_key != task.workload.key() && !unseen.count(record.workload_key) &&
        !record.is_transport_failure())
      history.related.push_back(std::move(record));
  db::RecordFilter same_workload;
  same_workload.workload_key = task.workload.key();
  same_workload.template_name = task.kernel_template->name();
  same_workload.target = task.target.str();
  for (auto& record : database.records(same_workload))
    if (record.device_id != filter.device && !record.is_remeasurement() && !record.is_transport_failure())
      history.other_devices.push_back(std::move(record));
  return history;
}

std::optional<search_space::Config> readable_config(const search_space::ConfigSpace& space,
                                                    const db::TuningRecord& record) {
  try {
    return space.from_json(record.config);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a config of an older space: not a point of this one
  }
}

ParsedRecords parse_records(const search_space::ConfigSpace& space,
                            const std::vector<db::TuningRecord>& records) {
  ParsedRecords parsed;
  for (const auto& record : records) {
    if (auto config = readable_config(space, record)) {
      parsed.configs.push_back(std::move(*config));
      parsed.gflops.push_back(record.ok()        ? db::quiet_gflops_estimate(record.gflops, record.load, record.device_load)
                              : record.is_slow() ? record.gflops
                                                 : 0.0);
      parsed.noisy.push_back(record.ok() && record.is_noisy());
    }
  }
  return parsed;
}

db::TuningRecord trust_fields(const measure::MeasureResult& result) {
  db::TuningRecord record;
  record.spread = measure::median_spread(result.costs);
  record.load = result.load;
  record.device_load = result.device_load;
  return record;
}

bool is_noisy(const measure::MeasureResult& result) { return result.ok() && trust_fields(result).is_noisy(); }

double quiet_gflops(const measure::MeasureResult& result) {
  if (result.is_slow()) return result.gflops;
  return result.ok() ? db::quiet_gflops_estimate(result.gflops, result.load, result.device_load) : 0.0;
}

ConfigSet measured_set(const search_space::ConfigSpace& space, const std::vector<db::TuningRecord>& records) {
  auto parsed = parse_records(space, records);
  return ConfigSet(parsed.configs.begin(), parsed.configs.end());
}

std::optional<UsableRecord> first_usable(const search_space::ConfigSpace& space,
                                         const std::vector<db::TuningRecord>& ranked) {
  for (const auto& record : ranked) {
    if (!record.ok()) continue;
    if (auto config = readable_config(space, record)) return UsableRecord{record, std::move(*config)};
  }
  return std::nullopt;
}

std::optional<UsableRecord> best_usable(const db::Database& database, const db::TaskKey& task,
                                        const search_space::ConfigSpace& space) {
  // Enough of the ranking that records of older spaces at its top do not hide a usable one; a
  // forged or damaged record (RecordCheck::figures) is passed over, so that it can neither be the
  // summary's best nor fail a CI gate.
  constexpr std::size_t kCandidates = 16;
  std::vector<std::string> passed_over;
  return first_usable(space, checked_top_k(database, task_filter(task), kCandidates, passed_over));
}

db::TaskKey task_key(const measure::MeasureTask& task) {
  return {task.workload.key(), task.kernel_template->name(), task.target.str(), task.device.fingerprint_id()};
}

db::RecordFilter task_filter(const db::TaskKey& task) {
  db::RecordFilter filter;
  filter.workload_key = task.workload_key;
  filter.target = task.target;
  filter.device = task.device_id;
  filter.template_name = task.template_name;
  return filter;
}

}  // namespace optune::tuner
