#include "optune/tuner/tuning_loop.hpp"

#include "optune/tuner/task_history.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>

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
  return {task.workload.key(), task.kernel_template->name(), task.target.str(),
          task.device.fingerprint_id()};
}

std::string make_run_id() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::random_device entropy;
  return fmt::format("{:x}-{:04x}", std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                     entropy() & 0xffff);
}

TuningLoop::TuningLoop(measure::Builder& builder, measure::Runner& runner, db::Database& database,
                       Progress& progress)
    : builder_(builder), runner_(runner), database_(database), progress_(progress) {}

std::vector<db::TuningRecord> TuningLoop::measure_and_record(
    const std::shared_ptr<const measure::MeasureTask>& task,
    const std::vector<search_space::Config>& configs, const std::string& tuner,
    const std::string& run_id, bool is_default, std::vector<measure::MeasureResult>* results) {
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

TuningSummary TuningLoop::run(const std::shared_ptr<const measure::MeasureTask>& task,
                              const TuningOptions& options) {
  auto start = std::chrono::steady_clock::now();
  TuningSummary summary;
  summary.run_id = options.run_id.empty() ? make_run_id() : options.run_id;
  const auto& space = task->space;

  auto default_config = task->kernel_template->default_config(task->workload, task->device, space);
  summary.default_config =
      measure_and_record(task, {default_config}, "default", summary.run_id, true, nullptr).front();

  auto history = load_history(database_, *task, options.tuner.transfer && options.tuner.name == "xgb");
  auto tuner = make_tuner(options.tuner, *task, history);
  summary.tuner = tuner->name();
  summary.transfer_records = history.related.size();

  progress_.start(task->workload.key(), options.trials);
  ProgressState state{task->workload.key(), 0, options.trials, 0, 0};
  std::optional<db::TuningRecord> best;
  std::vector<db::TuningRecord> successes;
  std::size_t last_improvement = 0;
  while (summary.trials < options.trials) {
    auto batch = tuner->next_batch(std::min(options.batch_size, options.trials - summary.trials));
    if (batch.empty()) break;  // the space is exhausted
    std::vector<measure::MeasureResult> results;
    auto records = measure_and_record(task, batch, tuner->name(), summary.run_id, false, &results);
    tuner->update(batch, results);
    for (auto& record : records) {
      ++summary.trials;
      if (!record.ok()) ++summary.failures;
      if (record.ok()) successes.push_back(record);
      if (better(record, best)) {
        best = record;
        last_improvement = summary.trials;
      }
    }
    state.trial = summary.trials;
    state.failures = summary.failures;
    state.best_gflops = best ? best->gflops : 0;
    progress_.update(state);
    if (options.early_stopping && summary.trials - last_improvement >= options.early_stopping) break;
  }
  progress_.finish();
  summary.overhead_seconds = tuner->overhead_seconds();

  // Re-measure the best few (and let the default compete: it may be the best).
  std::sort(successes.begin(), successes.end(),
            [](const auto& a, const auto& b) { return a.median_seconds < b.median_seconds; });
  std::vector<search_space::Config> finalists;
  for (std::size_t i = 0; i < std::min(options.remeasure_top, successes.size()); ++i)
    finalists.push_back(space.from_json(successes[i].config));
  summary.best.reset();
  if (summary.default_config->ok()) summary.best = summary.default_config;
  if (!finalists.empty()) {
    for (auto& record : measure_and_record(task, finalists, "remeasure", summary.run_id, false, nullptr))
      if (better(record, summary.best)) summary.best = record;
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace optune::tuner
