#include "optune/tuner/scheduling/tuning_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "optune/kernels/kernel_file_template.hpp"

namespace optune::tuner {

TuningLoop::TuningLoop(measure::Builder& builder, measure::Runner& runner, db::Database& database,
                       Progress& progress)
    : measurer_(builder, runner, database), progress_(progress) {}

TuningSummary TuningLoop::run(const std::shared_ptr<const measure::MeasureTask>& task,
                              const TuningOptions& options) {
  TaskSession session(task, options.tuner, measurer_, options.run_id.empty() ? make_run_id() : options.run_id);
  session.measure_first(options.first_configs);
  progress_.start(task->workload.key(), options.trials);
  // A run that resumes says so: those configs are not measured again.
  if (const std::size_t recorded = session.summary().already_recorded; recorded > 0)
    progress_.note(fmt::format("{} configs of this task already recorded in {}: not measured again", recorded,
                               measurer_.database().path()));
  auto stop_requested = [&] { return options.stop && options.stop->load(); };
  ProgressState state;
  state.trials = options.trials;
  state.budget_seconds = options.seconds;
  state.unit = kernels::throughput_unit(*task->kernel_template, task->workload, task->device);
  const auto started = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return options.seconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >= options.seconds;
  };
  while (session.summary().trials < options.trials && !stop_requested() && !out_of_time()) {
    const std::size_t trials = std::min(options.batch_size, options.trials - session.summary().trials);
    const std::size_t after = options.trials - session.summary().trials - trials;
    if (!session.step(trials, options.compile_ahead ? std::min(options.batch_size, after) : 0)) break;
    state.trial = session.summary().trials;
    state.failures = session.summary().failures;
    state.best_gflops = std::isfinite(session.best_seconds()) ? task->workload.flops() / session.best_seconds() / 1e9 : 0;
    state.noisy = session.summary().noisy;
    state.slow = session.summary().time.slow;
    state.saved_seconds = session.summary().time.saved;
    state.load = session.last_batch_load();
    state.device_load = session.last_batch_device_load();
    state.best_is_provisional = options.remeasure_top > 0;
    progress_.update(state);
    if (options.early_stopping && session.trials_since_improvement() >= options.early_stopping) break;
  }
  progress_.finish();
  const bool stopped = stop_requested();
  session.finish(stopped ? 0 : options.remeasure_top, [this](const std::string& line) { progress_.note(line); },
                 options.stop);
  TuningSummary summary = session.summary();
  summary.stopped = stopped;
  return summary;
}

}  // namespace optune::tuner
