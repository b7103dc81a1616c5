#include "results/task_trials.hpp"

#include <fmt/format.h>

#include "optune/db/tuning_record.hpp"

namespace optune::tuner {
namespace {

// A kernel file's records count the file's own work (GFLOP/s, GB/s or runs per second): their
// figure's unit is not in the records, their time is.
Metric metric_of(const std::string& workload_key, const std::vector<db::TuningRecord>& records) {
  if (workload_key.rfind("kernel.", 0) == 0) return Metric::kMilliseconds;
  for (const auto& record : records)
    if (record.ok() && record.gflops > 0) return Metric::kGflops;
  for (const auto& record : records)
    if (record.ok()) return Metric::kMilliseconds;  // succeeded, yet no throughput is known
  return Metric::kGflops;
}

std::string figure_text(double value, Metric metric) { return fmt::format("{:.4g} {}", value, metric_unit(metric)); }

// Where a later measurement of a config came from, for a reader who sees its trial measure another figure.
std::string measured_in(const db::TuningRecord& record) {
  if (record.tuner == "final")
    return fmt::format(
        "from the final comparison at the end of run {}, which measures the default, the best and "
        "the runner-up again in interleaved rounds, so that a slow spell of the machine falls on all "
        "of them alike",
        record.run_id);
  if (record.tuner == "remeasure")
    return fmt::format("from the re-measurement of the best few configs at the end of run {}, interleaved",
                       record.run_id);
  return fmt::format("from run {}", record.run_id);
}

// The config's first measurement that succeeded and is not a re-measurement; nullptr when none.
const TrialPoint* own_trial(const TaskTrials& task, const std::string& config) {
  for (const auto& point : task.points) {
    const auto& record = task.records[point.record];
    if (point.value && !record.is_remeasurement() && record.config_text() == config) return &point;
  }
  return nullptr;
}

std::string trial_label(const TaskTrials& task, const TrialPoint& point) {
  return task.records[point.record].is_default ? "Its measurement as the default config"
                                               : fmt::format("Its trial {}", point.trial);
}

// The config's latest successful record.
const TrialPoint* latest_success(const TaskTrials& task, const std::string& config) {
  const TrialPoint* latest = nullptr;
  for (const auto& point : task.points)
    if (point.value && task.records[point.record].config_text() == config) latest = &point;
  return latest;
}

// The fastest trial (or default measurement) behind the best-so-far line's end; nullptr when none.
const TrialPoint* peak_trial(const TaskTrials& task) {
  if (task.best_so_far.empty()) return nullptr;
  const double peak = task.best_so_far.back().second;
  for (const auto& point : task.points)
    if (point.value && *point.value == peak && !task.records[point.record].is_remeasurement()) return &point;
  return nullptr;
}

}  // namespace

double metric_value(const db::TuningRecord& record, Metric metric) {
  return metric == Metric::kGflops ? record.gflops : record.median_seconds * 1e3;
}

bool is_better(double a, double b, Metric metric) { return metric == Metric::kGflops ? a > b : a < b; }

const char* metric_unit(Metric metric) { return metric == Metric::kGflops ? "GFLOP/s" : "ms"; }

TaskTrials task_trials(const db::TaskKey& key, std::vector<db::TuningRecord> records) {
  TaskTrials task;
  task.key = key;
  task.records = std::move(records);
  task.metric = metric_of(key.workload_key, task.records);
  task.device_name = key.device_id;
  if (!task.records.empty()) task.device_name = task.records.front().device_fingerprint.value("name", key.device_id);
  std::string default_config;
  std::optional<double> best;
  for (std::size_t i = 0; i < task.records.size(); ++i) {
    const auto& record = task.records[i];
    const bool counts_in_search = !record.is_remeasurement();
    if (counts_in_search && !record.is_default) ++task.trials;
    TrialPoint point{i, task.trials, std::nullopt};
    if (record.ok()) {
      point.value = metric_value(record, task.metric);
      if (counts_in_search && (!best || is_better(*point.value, *best, task.metric))) best = point.value;
    } else {
      ++task.not_ok[record.error_kind];
    }
    if (counts_in_search && best) task.best_so_far.emplace_back(task.trials, *best);
    if (record.is_default) default_config = record.config_text();
    task.points.push_back(point);
  }
  if (const TrialPoint* latest = default_config.empty() ? nullptr : latest_success(task, default_config)) {
    task.default_record = latest->record;
    task.baseline = latest->value;
  }
  return task;
}

std::string best_note(const TaskTrials& task, const db::TuningRecord& best) {
  const Metric metric = task.metric;
  const std::string config = best.config_text();
  const double headline = metric_value(best, metric);
  std::string note;
  const TrialPoint* own = own_trial(task, config);
  if (own && task.records[own->record].id != best.id) {
    // Measured again slower than its trial: the trial's figure was the lucky one.
    const bool trial_was_faster = is_better(*own->value, headline, metric);
    note += fmt::format(
        "{} measured {}; the {} shown is its latest measurement, {}. A config counts with its latest "
        "successful record{}. ",
        trial_label(task, *own), figure_text(*own->value, metric), figure_text(headline, metric), measured_in(best),
        trial_was_faster ? ", so that a lucky first measurement does not stay the best" : "");
  }
  const TrialPoint* peak = peak_trial(task);
  if (peak && peak != own && is_better(*peak->value, headline, metric)) {
    const std::string peak_config = task.records[peak->record].config_text();
    const double latest = *latest_success(task, peak_config)->value;  // the peak itself at least
    const std::string who =
        task.records[peak->record].is_default ? "The default config" : fmt::format("Trial {}", peak->trial);
    if (latest != *peak->value)
      note += fmt::format("{} measured {} once, faster, but its config measured again came to {}. ", who,
                          figure_text(*peak->value, metric), figure_text(latest, metric));
    else if (best.winner)
      note += fmt::format(
          "{} measured {}, faster, but not so as to displace the final comparison's winner: a winner stays the best "
          "until a config is measured faster than it beyond noise, after it and on a quiet machine. ",
          who, figure_text(*peak->value, metric));
  }
  if (best.is_noisy()) note += "Its figure is noisy: " + db::noise_text(best) + ". ";
  if (!note.empty()) note.pop_back();
  return note;
}

}  // namespace optune::tuner
