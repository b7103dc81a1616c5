#include "optune/tuner/task_session.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

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

// Rounds of the closing re-measurement (measure::Runner::run), and how many waves of it at most.
constexpr int kRemeasureRounds = 3;
constexpr int kMaxRemeasureWaves = 4;

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
                                                         bool is_default, std::vector<measure::MeasureResult>* results,
                                                         int rounds) {
  std::vector<measure::MeasureInput> inputs;
  for (const auto& config : configs) inputs.push_back({task, config});
  // Build the whole batch first: no compile may run while a candidate is timed.
  auto builds = builder_.build(inputs);
  auto measured = runner_.run(inputs, builds, rounds);
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
  summary_.other_device_records = history.other_devices.size();
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
  if (top == 0) {
    summary_.best = best_;
    summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return;
  }
  // The database ranks each config by its latest record (Database::best). The first wave re-measures
  // the default and the best `top` other configs in interleaved rounds, so they are compared at one
  // time on a machine whose speed drifts. Re-measured finalists tend to come out slower than the
  // single lucky run that made them finalists, which can leave a config timed once ahead of all of
  // them: each later wave re-measures up to `top` such configs together with the fastest of the last
  // wave, until none is left. Each config is re-measured in one wave only (that fastest aside), so
  // the waves end.
  db::Database& database = measurer_.database();
  const db::TaskKey key = task_key(*task_);
  std::set<std::string> remeasured;  // config_text()
  std::optional<db::TuningRecord> fastest;  // of the last wave
  for (int wave = 0; wave < kMaxRemeasureWaves; ++wave) {
    std::vector<search_space::Config> configs;
    auto take = [&](const db::TuningRecord& record) {
      if (!remeasured.insert(record.config_text()).second) return false;
      auto config = readable_config(task_->space, record);
      if (config) configs.push_back(std::move(*config));
      return config.has_value();
    };
    if (wave == 0 && summary_.default_config->ok()) take(*summary_.default_config);
    if (fastest) configs.push_back(task_->space.from_json(fastest->config));
    std::size_t fresh = 0;
    for (const auto& record : database.top_k(task_filter(key), remeasured.size() + top))
      if (fresh < top && (!fastest || record.median_seconds < fastest->median_seconds) && take(record)) ++fresh;
    if (fresh == 0) break;
    if (configs.size() < 2) break;  // a lone config has nothing to be compared with
    fastest.reset();
    for (auto& record : measurer_.measure(task_, configs, "remeasure", summary_.run_id, false, nullptr,
                                          kRemeasureRounds))
      if (better(record, fastest)) fastest = std::move(record);
    if (!fastest) break;  // every one failed this time: nothing to compare the next wave with
  }
  summary_.best = database.best(key);
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace optune::tuner
