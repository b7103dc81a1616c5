#include "optune/tuner/scheduling/suite_tuning.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "optune/kernels/kernel_file_template.hpp"

namespace optune::tuner {
namespace {

double weighted_latency(const std::vector<SuiteTaskResult>& results, bool tuned) {
  double total = 0;
  for (const auto& result : results) {
    const auto& record = tuned ? result.summary.best : result.summary.default_config;
    if (!record || !record->ok()) return std::numeric_limits<double>::quiet_NaN();
    total += result.entry.count * record->median_seconds;
  }
  return total;
}

}  // namespace

double parse_duration(const std::string& text) {
  // Parts in the order of `kUnits`, each at most once; read by hand, digit by digit, so that any
  // length of text costs linear time and a number too long is said as such.
  constexpr std::string_view kUnits = "dhms";
  constexpr double kUnitSeconds[] = {86400, 3600, 60, 1};
  constexpr std::size_t kMaxDigits = 9;  // per part: well past kMaxDurationSeconds, exact in a double
  const std::string not_a_duration = "duration '" + text + "' is not like 2h, 30m, 90s, 1h30m or 7d";
  if (text.empty()) throw std::invalid_argument(not_a_duration);
  double seconds = 0;
  std::size_t next_unit = 0;
  for (std::size_t position = 0; position < text.size();) {
    const std::size_t digits_end = text.find_first_not_of("0123456789", position);
    if (digits_end == position || digits_end == std::string::npos) throw std::invalid_argument(not_a_duration);
    const std::size_t unit = kUnits.find(text[digits_end], next_unit);
    if (unit == std::string_view::npos) throw std::invalid_argument(not_a_duration);
    if (digits_end - position > kMaxDigits) seconds = std::numeric_limits<double>::infinity();
    else seconds += kUnitSeconds[unit] * std::stod(text.substr(position, digits_end - position));
    next_unit = unit + 1;
    position = digits_end + 1;
  }
  if (seconds <= 0) throw std::invalid_argument("duration '" + text + "' must be positive");
  if (seconds > kMaxDurationSeconds)
    throw std::invalid_argument("duration '" + text + "' is longer than " + std::to_string(kMaxDurationDays) + "d");
  return seconds;
}

SuiteSummary tune_suite(const std::vector<SuiteTask>& tasks, RecordingMeasurer& measurer,
                        const TuningOptions& options, const SuiteBudget& budget,
                        const SchedulerOptions& scheduler_options, Progress& progress) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::size_t total = budget.total_trials ? budget.total_trials : budget.trials_per_task * tasks.size();
  std::size_t per_task_cap = budget.trials_per_task ? budget.trials_per_task : std::numeric_limits<std::size_t>::max();
  std::string run_id = options.run_id.empty() ? make_run_id() : options.run_id;

  TaskScheduler scheduler(scheduler_options);
  std::vector<std::unique_ptr<TaskSession>> sessions(tasks.size());
  std::vector<TaskStatus> status(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) status[i].weight = tasks[i].entry.count;

  std::size_t spent = 0;  // by earlier runs (a resumed job)
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    status[i].trials = std::min(tasks[i].trials_done, per_task_cap);
    status[i].exhausted = status[i].trials >= per_task_cap;
    spent += status[i].trials;
  }
  auto stop_requested = [&] { return budget.stop && budget.stop->load(); };

  SuiteSummary summary;
  progress.start("suite of " + std::to_string(tasks.size()) + " tasks", total);
  ProgressState state;
  state.trial = spent;
  state.trials = total;
  while (spent + summary.trials < total && !(budget.seconds > 0 && elapsed() >= budget.seconds)) {
    if (stop_requested()) break;
    std::size_t i = scheduler.next(status);
    if (i == tasks.size()) break;  // every space used up
    if (!sessions[i]) sessions[i] = std::make_unique<TaskSession>(tasks[i].task, options.tuner, measurer, run_id);
    if (stop_requested()) break;  // a stop during the default's measurement
    TaskSession& session = *sessions[i];
    std::size_t wanted =
        std::min({options.batch_size, per_task_cap - status[i].trials, total - spent - summary.trials});
    std::size_t measured = session.step(wanted);
    summary.trials += measured;
    status[i].trials += measured;
    status[i].best_seconds = session.best_seconds();
    status[i].best_history.push_back(session.best_seconds());
    status[i].exhausted = measured == 0 || status[i].trials >= per_task_cap;
    state.task = tasks[i].entry.name;
    state.unit = kernels::throughput_unit(*tasks[i].task->kernel_template, tasks[i].task->workload, tasks[i].task->device);
    state.trial = spent + summary.trials;
    state.failures = 0;
    state.noisy = 0;
    state.slow = 0;
    state.saved_seconds = 0;
    for (const auto& s : sessions)
      if (s) {
        state.failures += s->summary().failures;
        state.noisy += s->summary().noisy;
        state.slow += s->summary().time.slow;
        state.saved_seconds += s->summary().time.saved;
      }
    state.load = session.last_batch_load();
    state.device_load = session.last_batch_device_load();
    state.best_is_provisional = options.remeasure_top > 0;
    state.best_gflops = std::isfinite(session.best_seconds())
                            ? tasks[i].task->workload.flops() / session.best_seconds() / 1e9 : 0;
    progress.update(state);
  }
  progress.finish();
  summary.stopped = stop_requested();

  for (std::size_t i = 0; i < tasks.size(); ++i) {
    SuiteTaskResult result{tasks[i].entry, sessions[i] != nullptr, {}};
    if (sessions[i]) {
      const std::string name = tasks[i].entry.name;
      if (!summary.stopped)
        sessions[i]->finish(
            options.remeasure_top, [&](const std::string& line) { progress.note("[" + name + "] " + line); },
            budget.stop);
      result.summary = sessions[i]->summary();
      result.summary.stopped = summary.stopped;
    }
    summary.tasks.push_back(std::move(result));
  }
  summary.default_seconds = weighted_latency(summary.tasks, false);
  summary.tuned_seconds = weighted_latency(summary.tasks, true);
  summary.seconds = elapsed();
  return summary;
}

}  // namespace optune::tuner
