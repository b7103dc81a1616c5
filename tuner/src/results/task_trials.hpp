// One task's records as the HTML report shows them: each record a point at its trial number, the
// best so far after each trial, the default config's figure as a baseline, the records that are
// not ok counted by error kind, and why the task's headline best may differ from what its trial
// measured. Read by trial_plot.cpp (the SVG) and html_report.cpp (the page).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "optune/db/database.hpp"

namespace optune::tuner {

// What a task's figures are plotted in: GFLOP/s, or the median time where GFLOP/s is unknown (a
// kernel file's records count their own work, in a unit the records do not name).
enum class Metric { kGflops, kMilliseconds };

struct TrialPoint {
  std::size_t record = 0;  // index into TaskTrials::records
  // A trial (neither the default config's measurement nor a re-measurement) numbers from 1 within
  // the task, over its runs; the default and a re-measurement take the number of the trial before
  // them (0 before the first), so that they sit where they were measured.
  std::size_t trial = 0;
  std::optional<double> value;  // in the task's metric; none for a record that is not ok
};

struct TaskTrials {
  db::TaskKey key;
  std::string device_name;
  Metric metric = Metric::kGflops;
  std::vector<db::TuningRecord> records;  // oldest first
  std::vector<TrialPoint> points;         // one per record, in the same order
  std::size_t trials = 0;                 // the highest trial number
  // (trial, best value so far) after each trial and default measurement, from the first that
  // succeeded: never worse than the one before it. Re-measurements are not trials: they are left out.
  std::vector<std::pair<std::size_t, double>> best_so_far;
  // The default config's latest successful record (an index into records) and its figure: the
  // baseline. None where no record of the default config succeeded (or none is shown).
  std::optional<std::size_t> default_record;
  std::optional<double> baseline;
  std::map<std::string, std::size_t> not_ok;  // error kind -> records of that kind
};

// `records` oldest first, all of one task.
TaskTrials task_trials(const db::TaskKey& key, std::vector<db::TuningRecord> records);

// A record's figure in `metric`: GFLOP/s, or its median in milliseconds.
double metric_value(const db::TuningRecord& record, Metric metric);
// Whether `a` is better than `b` in `metric`: more GFLOP/s, or less time.
bool is_better(double a, double b, Metric metric);
// "GFLOP/s", "ms"
const char* metric_unit(Metric metric);

// Why the task's headline best (`best`: the config's latest successful record, as query ranks
// it) is not the figure its own trial measured, or not the fastest trial: re-measured at the end
// of its run, kept as the final comparison's winner, measured on a busy machine. "" when the
// headline is the trial's own figure and nothing measured faster.
std::string best_note(const TaskTrials& task, const db::TuningRecord& best);

}  // namespace optune::tuner
