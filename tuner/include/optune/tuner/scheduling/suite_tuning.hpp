// Tuning a whole suite (a network's workloads) as tasks under one budget: a task scheduler picks
// which task gets each batch, sessions start lazily in that order (so later tasks of a template
// transfer from the records of earlier ones), and the result is a per-task table plus the
// network's estimated latency (sum over workloads of count x best latency), default vs tuned.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "optune/tuner/scheduling/progress.hpp"
#include "optune/tuner/scheduling/suite.hpp"
#include "optune/tuner/scheduling/task_scheduler.hpp"
#include "optune/tuner/scheduling/task_session.hpp"
#include "optune/tuner/scheduling/tuning_loop.hpp"

namespace optune::tuner {

struct SuiteBudget {
  std::size_t trials_per_task = 0;  // each task at most this many; 0: no per-task cap
  std::size_t total_trials = 0;     // all tasks together; 0: trials_per_task x tasks
  double seconds = 0;               // wall-clock budget; 0: none
  // Set (e.g. by a signal handler) to stop after the current batch, without the final
  // re-measurement; null: never.
  const std::atomic<bool>* stop = nullptr;
};

struct SuiteTask {
  SuiteEntry entry;
  std::shared_ptr<const measure::MeasureTask> task;
  std::size_t trials_done = 0;  // spent on the task by earlier runs of a resumed job: count toward the budget
};

struct SuiteTaskResult {
  SuiteEntry entry;
  bool started = false;   // false when the budget ran out before the task's turn
  TuningSummary summary;
};

struct SuiteSummary {
  std::vector<SuiteTaskResult> tasks;
  double default_seconds = 0;  // estimated network latency with default configs
  double tuned_seconds = 0;    // ... with the best configs; NaN when a task has no working config
  std::size_t trials = 0;       // measured in this run
  double seconds = 0;
  bool stopped = false;         // budget.stop ended the run early
};

SuiteSummary tune_suite(const std::vector<SuiteTask>& tasks, RecordingMeasurer& measurer,
                        const TuningOptions& options, const SuiteBudget& budget,
                        const SchedulerOptions& scheduler_options, Progress& progress);

// "2h", "30m", "90s", "1h30m", "7d" -> seconds; throws std::invalid_argument naming the text when
// it is not a duration or is longer than kMaxDurationDays (a budget or a look back of more than ten
// years is a slip of the keyboard).
inline constexpr int kMaxDurationDays = 3650;
inline constexpr double kMaxDurationSeconds = kMaxDurationDays * 86400.0;
double parse_duration(const std::string& text);

}  // namespace optune::tuner
