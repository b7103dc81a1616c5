// What the database already knows when a task starts: its own records (skipped by every tuner,
// and the model's first training set when a run resumes; a transport failure is none of them: it
// measured nothing of its config, which a later run measures again), the records of the same template on
// the same target and device for other workloads, and the records of the same workload and
// template measured on other devices (both the model's transfer set; another device's records
// warm-start the model, weighted below this device's, and never count as this device's results).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"
#include "optune/tuner/search/search_domain.hpp"

namespace optune::tuner {

struct TaskHistory {
  std::vector<db::TuningRecord> own;
  std::vector<db::TuningRecord> related;
  std::vector<db::TuningRecord> other_devices;  // grouped by device_id for the model
};

// `include_related`: the transfer set too (related and other_devices), less the records of the
// workloads `unseen` names (shapes a rule is checked on must not have taught it).
TaskHistory load_history(const db::Database& database, const measure::MeasureTask& task,
                         bool include_related, const std::set<std::string>& unseen = {});

// The record's config when this space can read it; nothing for a config of an older space (a knob
// added or renamed since).
std::optional<search_space::Config> readable_config(const search_space::ConfigSpace& space,
                                                    const db::TuningRecord& record);

// The configs of records that this space can read (records of an older space may not be).
struct ParsedRecords {
  std::vector<search_space::Config> configs;
  std::vector<double> gflops;  // as quiet_gflops() gives them
  std::vector<bool> noisy;     // measured on a busy machine or with a wide spread (is_noisy)
};
ParsedRecords parse_records(const search_space::ConfigSpace& space,
                            const std::vector<db::TuningRecord>& records);
// A successful measurement's trust fields as its record carries them (spread, load, device_load), on
// an otherwise empty record: is_noisy() and noise_text() before it is recorded.
db::TuningRecord trust_fields(const measure::MeasureResult& result);
// Whether a measurement's record will be noisy (db::TuningRecord::is_noisy); a failure is not.
bool is_noisy(const measure::MeasureResult& result);
// What the cost model learns from a measurement: its throughput with the others' share of the
// machine taken off (db::quiet_gflops_estimate), 0 for a failure. A slow one (cut by the bail-out)
// is a censored observation, at most so fast: it is learnt at that bound, which is under half the
// task's best, so that every ranking the model is asked for (the best first) stays right.
double quiet_gflops(const measure::MeasureResult& result);
ConfigSet measured_set(const search_space::ConfigSpace& space, const std::vector<db::TuningRecord>& records);

// The first successful record of a ranking (Database::top_k's order: its declared winner, then by
// median) whose config this space can read, with that config: what apply-best compiles in and
// regress re-measures. Records of an older space (a knob added or renamed since) are passed over
// rather than failing the build or the CI gate.
struct UsableRecord {
  db::TuningRecord record;
  search_space::Config config;
};
std::optional<UsableRecord> first_usable(const search_space::ConfigSpace& space,
                                         const std::vector<db::TuningRecord>& ranked);
// The same among the task's configs as the database ranks them (each by its latest record).
std::optional<UsableRecord> best_usable(const db::Database& database, const db::TaskKey& task,
                                        const search_space::ConfigSpace& space);

// The database filter that selects one task's records.
db::RecordFilter task_filter(const db::TaskKey& task);
// The key under which the database holds a task's records.
db::TaskKey task_key(const measure::MeasureTask& task);

}  // namespace optune::tuner
