#include "optune/tuner/task_session.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "optune/tuner/task_history.hpp"

namespace optune::tuner {
namespace {

db::TuningRecord to_record(const measure::MeasureTask& task, const search_space::Config& config,
                           const measure::MeasureResult& result) {
  db::TuningRecord record;
  record.workload_key = task.workload.key();
  record.template_name = task.kernel_template->name();
  record.target = task.target.str();
  record.device_id = task.device.fingerprint_id();
  record.device_fingerprint = task.device.fingerprint();
  record.config = task.space.to_json(config);
  record.costs = result.costs;
  record.median_seconds = result.median_seconds;
  record.gflops = result.gflops;
  record.error_kind = std::string(measure::error_kind_name(result.error));
  record.error_message = result.message;
  record.build_seconds = result.build_seconds;
  record.timestamp = result.timestamp;
  record.optune_version = OPTUNE_VERSION;
  return record;
}

bool better(const db::TuningRecord& a, const std::optional<db::TuningRecord>& b) {
  return a.ok() && (!b || a.median_seconds < b->median_seconds);
}

}  // namespace

double TuningSummary::speedup() const {
  if (!best || !default_config || !default_config->ok() || best->median_seconds <= 0) return 0;
  return default_config->median_seconds / best->median_seconds;
}

db::TaskKey task_key(const measure::MeasureTask& task) {
  return {task.workload.key(), task.kernel_template->name(), task.target.str(), task.device.fingerprint_id()};
}

std::string make_run_id() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::random_device entropy;
  return fmt::format("{:x}-{:04x}", std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                     entropy() & 0xffff);
}

std::vector<db::TuningRecord> RecordingMeasurer::measure(const std::shared_ptr<const measure::MeasureTask>& task,
                                                         const std::vector<search_space::Config>& configs,
                                                         const std::string& tuner, const std::string& run_id,
                                                         bool is_default, std::vector<measure::MeasureResult>* results) {
  std::vector<measure::MeasureInput> inputs;
  for (const auto& config : configs) inputs.push_back({task, config});
  // Build the whole batch first: no compile may run while a candidate is timed.
  auto builds = builder_.build(inputs);
  auto measured = runner_.run(inputs, builds);
  std::vector<db::TuningRecord> records;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    records.push_back(to_record(*task, configs[i], measured[i]));
    records.back().tuner = tuner;
    records.back().run_id = run_id;
    records.back().is_default = is_default;
  }
  database_.insert(records);  // committed per batch: an interrupted run keeps what it measured
  if (results) *results = std::move(measured);
  return records;
}

TaskSession::TaskSession(std::shared_ptr<const measure::MeasureTask> task, const TunerOptions& tuner_options,
                         RecordingMeasurer& measurer, std::string run_id)
    : task_(std::move(task)), measurer_(measurer), start_(std::chrono::steady_clock::now()) {
  summary_.run_id = std::move(run_id);
  bool transfer = tuner_options.transfer && tuner_options.name == "xgb";
  auto history = load_history(measurer_.database(), *task_, transfer);
  // A resumed job (same run id) reuses the default config its earlier run measured.
  for (const auto& record : history.own)
    if (record.is_default && record.run_id == summary_.run_id) summary_.default_config = record;
  if (!summary_.default_config) {
    auto default_config = task_->kernel_template->default_config(task_->workload, task_->device, task_->space);
    summary_.default_config = measurer_.measure(task_, {default_config}, "default", summary_.run_id, true).front();
    history.own.push_back(*summary_.default_config);
  }
  if (summary_.default_config->ok()) best_ = summary_.default_config;

  tuner_ = make_tuner(tuner_options, *task_, history);
  summary_.tuner = tuner_->name();
  summary_.transfer_records = history.related.size();
}

double TaskSession::best_seconds() const {
  return best_ ? best_->median_seconds : std::numeric_limits<double>::infinity();
}

std::size_t TaskSession::step(std::size_t max_trials) {
  auto batch = tuner_->next_batch(max_trials);
  if (batch.empty()) {
    exhausted_ = true;
    return 0;
  }
  std::vector<measure::MeasureResult> results;
  auto records = measurer_.measure(task_, batch, tuner_->name(), summary_.run_id, false, &results);
  tuner_->update(batch, results);
  for (auto& record : records) {
    ++summary_.trials;
    if (!record.ok()) ++summary_.failures;
    if (record.ok()) successes_.push_back(record);
    if (better(record, best_)) {
      best_ = record;
      last_improvement_ = summary_.trials;
    }
  }
  summary_.overhead_seconds = tuner_->overhead_seconds();
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return batch.size();
}

void TaskSession::finish(std::size_t top) {
  // Re-measure the best few and the default in one batch, so they are compared at one time on a
  // machine whose speed drifts; their new records are what the database ranks them by
  // (Database::best), so a lucky first measurement does not stay the best.
  std::sort(successes_.begin(), successes_.end(),
            [](const auto& a, const auto& b) { return a.median_seconds < b.median_seconds; });
  std::vector<search_space::Config> finalists;
  for (std::size_t i = 0; i < std::min(top, successes_.size()); ++i)
    finalists.push_back(task_->space.from_json(successes_[i].config));
  summary_.best.reset();
  if (summary_.default_config->ok()) {
    summary_.best = summary_.default_config;
    const auto default_config = task_->space.from_json(summary_.default_config->config);
    const bool among = std::find(finalists.begin(), finalists.end(), default_config) != finalists.end();
    if (!finalists.empty() && !among) finalists.push_back(default_config);
  }
  if (!finalists.empty()) {
    for (auto& record : measurer_.measure(task_, finalists, "remeasure", summary_.run_id, false))
      if (better(record, summary_.best)) summary_.best = record;
  } else if (best_ && better(*best_, summary_.best)) {
    summary_.best = best_;
  }
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace optune::tuner
