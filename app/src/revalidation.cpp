#include "optune/app/revalidation.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "optune/app/bad_input.hpp"
#include "optune/app/query.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/junit.hpp"
#include "optune/tuner/results/toolchain_change.hpp"
#include "optune/tuner/scheduling/final_comparison.hpp"
#include "optune/tuner/scheduling/task_session.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::app {
namespace {

using tuner::Revalidation;

// Interleaved rounds of the closing measurement of a re-tuned entry (new best, old config,
// default), whose per-round ratios give the new best's speed over the old config.
constexpr int kClosingRounds = 3;
// A re-tune's fastest configs that join that closing measurement: a trial's single measurement
// may have flattered one, so the runner-up comes too.
constexpr std::size_t kRunFinalists = 2;
// The old ranking's head a re-tune measures first: at most this many configs, and half its trials.
constexpr std::size_t kSeeded = 4;

// The workloads a request names: a suite's entries, then --shape's, then --workload keys; each once.
struct Workloads {
  std::string name;
  std::vector<tuner::SuiteEntry> entries;
};

Workloads requested_workloads(const RevalidateRequest& request) {
  Workloads workloads{"workloads", {}};
  if (!request.suite.empty()) {
    tuner::Suite suite = load_suite_option(request.suite, request.layout);
    workloads.name = suite.name;
    workloads.entries = std::move(suite.entries);
  }
  auto add = [&workloads](const kernels::Workload& workload) {
    for (const auto& entry : workloads.entries)
      if (entry.kernel_file.empty() && entry.workload == workload) return;
    workloads.entries.push_back({workload.key(), workload, "", 1});
  };
  try {
    if (!request.shape.empty()) add(kernels::parse_workload(kernels::parse_op(request.op), request.shape));
  } catch (const std::invalid_argument& error) {
    throw BadInput("revalidate: --shape " + request.shape + ": " + error.what());
  }
  for (const auto& key : request.workloads) {
    kernels::Workload workload;
    try {
      workload = kernels::parse_workload_key(key);
    } catch (const std::invalid_argument& error) {
      throw BadInput("revalidate: --workload " + key + ": " + error.what());
    }
    if (workload.op == kernels::Op::kKernel)
      throw BadInput("revalidate: --workload " + key + ": a kernel file's workload is revalidated through a suite "
                     "that names the file");
    add(workload);
  }
  return workloads;
}

// What every entry of one run shares.
struct Context {
  const RevalidateRequest& request;
  db::Database& database;
  Measuring& measuring;
  tuner::RecordingMeasurer& measurer;
  tuner::Progress& progress;
  measure::Toolchain today;
  std::string run_id;  // of this run's measurements (tuner "revalidate")
};

// One config's kept measurement: the best of its attempts, with its record.
struct Measured {
  measure::MeasureResult result;
  db::TuningRecord record;
};

// A successful measurement over a failure, the faster of two successful ones (tuner::best_of).
void keep_better(std::optional<Measured>& kept, const measure::MeasureResult& result, const db::TuningRecord& record) {
  if (!kept || (result.ok() && (!kept->result.ok() || result.median_seconds < kept->result.median_seconds)))
    kept = Measured{result, record};
}

// Whether a verdict is worth another attempt: noise only ever slows a run down, and a crash or a
// timeout may be the machine's; a compile that failed fails again.
bool worth_another_attempt(const tuner::RevalidationJudgement& verdict, const tuner::RegressionCase& measured) {
  if (verdict.status == Revalidation::kRegressed) return true;
  return verdict.status == Revalidation::kBroken && measured.tuned_now &&
         measured.tuned_now->error != measure::ErrorKind::kBuildError;
}

// The stored best and the default measured again as regress measures them (both built before
// either is timed; while the verdict is a regression, again, up to --attempts, keeping the best of
// each config), and recorded. A best that holds is recorded as the task's winner: the ranking then
// keeps it first against the records of other configs, which the old toolchain measured.
void remeasure(const Context& context, const std::shared_ptr<const measure::MeasureTask>& task,
               const tuner::UsableRecord& best, RevalidationEntry& entry) {
  const search_space::Config default_config =
      task->kernel_template->default_config(task->workload, task->device, task->space);
  const bool best_is_default = best.config == default_config;
  std::vector<search_space::Config> configs{best.config};
  if (!best_is_default) configs.push_back(default_config);
  std::optional<Measured> tuned, by_default;
  auto& measured = entry.measured;
  for (int attempt = 1; attempt <= context.request.attempts; ++attempt) {
    std::vector<measure::MeasureResult> results;
    auto records = context.measurer.run(task, configs, "revalidate", context.run_id, false, &results);
    keep_better(tuned, results.front(), records.front());
    keep_better(by_default, results.back(), records.back());
    measured.tuned_now = tuned->result;
    measured.default_now = by_default->result;
    measured.attempts = attempt;
    entry.verdict = tuner::judge_revalidation(measured, context.request.tolerance);
    if (!worth_another_attempt(entry.verdict, measured)) break;
  }
  tuned->record.winner = entry.verdict.status == Revalidation::kHolds;
  tuned->record.is_default = best_is_default;
  std::vector<db::TuningRecord> records{tuned->record};
  if (!best_is_default) {
    by_default->record.is_default = true;
    records.push_back(by_default->record);
  }
  context.measurer.record(records);
}

// The `count` fastest configs among `records`, each by its fastest successful record, fastest first;
// configs this space cannot read, and `skip`, left out.
std::vector<search_space::Config> fastest_configs(const std::vector<db::TuningRecord>& records,
                                                  const search_space::ConfigSpace& space, std::size_t count,
                                                  const std::optional<search_space::Config>& skip = std::nullopt) {
  std::map<std::string, const db::TuningRecord*> fastest;  // config_text() -> record
  for (const auto& record : records) {
    if (!record.ok()) continue;
    const db::TuningRecord*& kept = fastest[record.config_text()];
    if (!kept || record.median_seconds < kept->median_seconds) kept = &record;
  }
  std::vector<const db::TuningRecord*> ranked;
  for (const auto& [text, record] : fastest) ranked.push_back(record);
  std::sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) { return a->median_seconds < b->median_seconds; });
  std::vector<search_space::Config> configs;
  for (const auto* record : ranked) {
    if (configs.size() == count) break;
    auto config = tuner::readable_config(space, *record);
    if (config && config != skip) configs.push_back(std::move(*config));
  }
  return configs;
}

// Configs a re-tune measures first: the fastest of the old toolchains' records (the regressed or
// broken best left out: it was just measured). A compiler change slows some configs more than
// others, but the old ranking's head is still where the fast configs are most likely.
std::vector<search_space::Config> old_ranking_head(const Context& context, const measure::MeasureTask& task,
                                                   const search_space::Config& old_best, std::size_t count) {
  std::vector<db::TuningRecord> old;
  for (auto& record : context.database.task_records(tuner::task_key(task)))
    if (tuner::match_toolchain(record, context.today) != tuner::ToolchainMatch::kSame) old.push_back(std::move(record));
  return fastest_configs(old, task.space, count, old_best);
}

// The `count` fastest configs of a tuning run, each by its fastest record of that run: measured
// under today's toolchain, unlike the task's older records.
std::vector<search_space::Config> fastest_of_run(const db::Database& database, const measure::MeasureTask& task,
                                                 const std::string& run_id, std::size_t count) {
  std::vector<db::TuningRecord> of_run;
  for (auto& record : database.task_records(tuner::task_key(task)))
    if (record.run_id == run_id) of_run.push_back(std::move(record));
  return fastest_configs(of_run, task.space, count);
}

// A regressed or broken entry tuned again through the tuning loop `tune` runs, on a budget: its
// first trials (kSeeded) are the old ranking's head (old_ranking_head), the rest the tuner's picks
// until a batch of them finds nothing faster (kRetuneEarlyStop) or --trials are spent, and the
// loop's own closing waves are left out. Then the run's kRunFinalists
// fastest, the old config (where it still builds) and the default are measured together in
// interleaved rounds, and the fastest is recorded as the task's winner. The old config has lost its claim to
// stay first (a stored winner keeps its place unless beaten beyond noise, final_comparison.hpp):
// it regressed or broke. The mark is made whatever the machine's load: without it a record of the
// old toolchain, faster on paper, could stay the stored best.
Retune retune(const Context& context, const std::shared_ptr<const measure::MeasureTask>& task,
              const tuner::UsableRecord& old_best, const RevalidationEntry& entry) {
  tuner::TuningOptions tuning = context.request.retune;
  tuning.run_id = tuner::make_run_id();
  tuning.remeasure_top = 0;  // the closing measurement below takes its place
  tuning.early_stopping = kRetuneEarlyStop;
  tuning.first_configs = old_ranking_head(context, *task, old_best.config, std::min(kSeeded, (tuning.trials + 1) / 2));
  Retune retuned;
  retuned.run_id = tuning.run_id;
  tuner::TuningLoop loop(*context.measuring.builder, context.measuring.runner, context.database, context.progress);
  try {
    retuned.trials = loop.run(task, tuning).trials;
  } catch (const tuner::EnvironmentFailure& error) {
    // The default and whole batches fail alike: under today's toolchain nothing of this workload
    // builds or passes its check. The entry stays broken; the other entries are still revalidated.
    context.progress.finish();
    retuned.after = {Revalidation::kBroken, std::string("tuning again found nothing that works: ") + error.what()};
    return retuned;
  }

  std::vector<search_space::Config> configs;
  auto add = [&configs](const search_space::Config& config) -> std::size_t {
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (configs[i] == config) return i;
    configs.push_back(config);
    return configs.size() - 1;
  };
  std::optional<std::size_t> old_index;
  for (const auto& config : fastest_of_run(context.database, *task, retuned.run_id, kRunFinalists)) add(config);
  if (entry.verdict.status != Revalidation::kBroken) old_index = add(old_best.config);
  const std::size_t default_index =
      add(task->kernel_template->default_config(task->workload, task->device, task->space));
  std::vector<measure::MeasureResult> results;
  auto records =
      context.measurer.run(task, configs, "revalidate", context.run_id, false, &results, kClosingRounds);
  records[default_index].is_default = true;
  const tuner::FinalVerdict verdict = tuner::judge_finalists(results, default_index, std::nullopt);
  if (verdict.winner) records[*verdict.winner].winner = true;
  context.measurer.record(records);

  auto record_at = [&records, &results](std::optional<std::size_t> index) -> std::optional<db::TuningRecord> {
    if (!index || !results[*index].ok()) return std::nullopt;
    return records[*index];
  };
  retuned.best = record_at(verdict.winner);
  retuned.old_config = record_at(old_index);
  retuned.default_config = record_at(default_index);
  if (verdict.winner && old_index)
    if (auto ratio = tuner::round_ratio(results[*old_index], results[*verdict.winner]))
      retuned.speedup_over_old = ratio->value;
  std::optional<measure::MeasureResult> best_now;
  if (verdict.winner) best_now = results[*verdict.winner];
  retuned.after = tuner::judge_retuned(best_now, results[default_index], context.request.tolerance);
  return retuned;
}

RevalidationEntry revalidate_entry(const Context& context, const tuner::SuiteEntry& suite_entry,
                                   const std::shared_ptr<const measure::MeasureTask>& task) {
  const auto started = std::chrono::steady_clock::now();
  RevalidationEntry entry;
  entry.name = suite_entry.name;
  entry.workload_key = task->workload.key();
  entry.template_name = task->kernel_template->name();
  entry.measured.name = entry.name;
  entry.measured.workload_key = entry.workload_key;
  const db::TaskKey key = tuner::task_key(*task);
  auto finish = [&]() -> RevalidationEntry {
    entry.measured.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return std::move(entry);
  };
  const auto best = tuner::best_usable(context.database, key, task->space);
  if (!best) {
    entry.verdict = {Revalidation::kUntuned, "no tuned config recorded for this device; not tuned here (run tune)"};
    return finish();
  }
  entry.config = best->record.config;
  entry.toolchain_before = best->record.toolchain;
  entry.toolchain_change = tuner::toolchain_difference(best->record, context.today);
  entry.measured.recorded_seconds = tuner::recorded_figure(context.database, key, best->record);
  if (tuner::match_toolchain(best->record, context.today) == tuner::ToolchainMatch::kSame && !context.request.all) {
    entry.verdict = {Revalidation::kCurrent, "tuned under today's toolchain"};
    return finish();
  }
  remeasure(context, task, *best, entry);
  if (entry.verdict.status == Revalidation::kRegressed || entry.verdict.status == Revalidation::kBroken)
    entry.retune = retune(context, task, *best, entry);
  return finish();
}

}  // namespace

bool RevalidationEntry::is_failing() const {
  const Revalidation status = retune ? retune->after.status : verdict.status;
  return status == Revalidation::kRegressed || status == Revalidation::kBroken;
}

std::size_t RevalidateOutcome::count(Revalidation status) const {
  std::size_t n = 0;
  for (const auto& entry : entries) n += entry.verdict.status == status;
  return n;
}

std::size_t RevalidateOutcome::retuned() const {
  std::size_t n = 0;
  for (const auto& entry : entries) n += entry.retune.has_value();
  return n;
}

std::size_t RevalidateOutcome::failing() const {
  std::size_t n = 0;
  for (const auto& entry : entries) n += entry.is_failing();
  return n;
}

void check_revalidate_request(const RevalidateRequest& request) {
  if (request.suite.empty() && request.shape.empty() && request.workloads.empty())
    throw BadInput("revalidate: give the workloads: --suite FILE, --op OP --shape S, or --workload KEY");
  if (!request.layout.empty() && request.suite.empty())
    throw BadInput("revalidate: --layout goes with --suite (a --shape names its own: layout=nchw8c)");
  if (!(request.tolerance >= 0 && request.tolerance <= 10))
    throw BadInput("revalidate: --tolerance must be from 0 to 10");
  if (request.attempts < 1 || request.attempts > 20) throw BadInput("revalidate: --attempts must be from 1 to 20");
  if (request.retune.trials < 1) throw BadInput("revalidate: --trials must be at least 1");
  try {
    tuner::check_tuner_name(request.retune.tuner.name);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

RevalidateOutcome revalidate(const RevalidateRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                             const std::function<void(const std::string&)>& log,
                             const std::function<void(const RevalidationEntry&)>& on_entry) {
  const auto started = std::chrono::steady_clock::now();
  check_revalidate_request(request);
  const Workloads workloads = requested_workloads(request);
  // Every task is made before anything is measured: a workload no template runs stops nothing half done.
  std::vector<std::shared_ptr<measure::MeasureTask>> tasks;
  for (const auto& entry : workloads.entries) tasks.push_back(make_entry_task(entry, request.target));
  auto database = open_database(request.database, db::Database::Mode::kReadWrite);
  auto locks = lock_for_measuring("revalidate", paths.lock_dir, request.database, tasks.front()->device,
                                  request.wait_lock, true, log);
  MeasureSettings settings = request.measuring;
  settings.target = request.target;
  Measuring measuring(settings, paths, std::nullopt, log);
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
  const Context context{request, database, measuring, measurer, progress,
                        measuring.builder->toolchain(tasks.front()->device), tuner::make_run_id()};

  RevalidateOutcome outcome;
  outcome.suite_name = workloads.name;
  outcome.target = tasks.front()->target.str();
  outcome.device = tasks.front()->device.name;
  outcome.toolchain = context.today;
  outcome.tolerance = request.tolerance;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    outcome.entries.push_back(revalidate_entry(context, workloads.entries[i], tasks[i]));
    if (on_entry) on_entry(outcome.entries.back());
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

namespace {

nlohmann::json optional_seconds(const std::optional<measure::MeasureResult>& result) {
  return result && result->ok() ? nlohmann::json(result->median_seconds) : nlohmann::json(nullptr);
}

nlohmann::json optional_record(const std::optional<db::TuningRecord>& record) {
  return record ? record_json(*record) : nlohmann::json(nullptr);
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json error_kind(const std::optional<measure::MeasureResult>& result) {
  if (!result || result->ok()) return nullptr;
  return std::string(measure::error_kind_name(result->error));
}

nlohmann::json retune_json(const Retune& retune) {
  return {{"run_id", retune.run_id},
          {"trials", retune.trials},
          {"best", optional_record(retune.best)},
          {"old_config", optional_record(retune.old_config)},
          {"default", optional_record(retune.default_config)},
          {"speedup_over_old", optional_number(retune.speedup_over_old)},
          {"status_after", std::string(tuner::revalidation_name(retune.after.status))},
          {"reason_after", retune.after.reason}};
}

nlohmann::json entry_json(const RevalidationEntry& entry) {
  const auto& measured = entry.measured;
  const auto& now = measured.tuned_now;
  return {{"name", entry.name},
          {"workload", entry.workload_key},
          {"template", entry.template_name},
          {"status", std::string(tuner::revalidation_name(entry.verdict.status))},
          {"reason", entry.verdict.reason},
          {"error_kind", error_kind(now)},
          {"config", entry.config},
          {"recorded_seconds", optional_number(measured.recorded_seconds)},
          {"now_seconds", optional_seconds(now)},
          {"default_seconds", optional_seconds(measured.default_now)},
          {"attempts", now ? measured.attempts : 0},
          {"toolchain_before", entry.toolchain_before},
          {"toolchain_change", entry.toolchain_change},
          {"retuned", entry.retune.has_value()},
          {"retune", entry.retune ? retune_json(*entry.retune) : nlohmann::json(nullptr)},
          {"failing", entry.is_failing()},
          {"seconds", measured.seconds}};
}

}  // namespace

nlohmann::json outcome_json(const RevalidateOutcome& outcome) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& entry : outcome.entries) entries.push_back(entry_json(entry));
  return {{"suite", outcome.suite_name},
          {"target", outcome.target},
          {"device", outcome.device},
          {"tolerance", outcome.tolerance},
          {"toolchain_now", tuner::toolchain_json(outcome.toolchain)},
          {"seconds", outcome.seconds},
          {"counts",
           {{"current", outcome.count(Revalidation::kCurrent)},
            {"holds", outcome.count(Revalidation::kHolds)},
            {"regressed", outcome.count(Revalidation::kRegressed)},
            {"broken", outcome.count(Revalidation::kBroken)},
            {"untuned", outcome.count(Revalidation::kUntuned)},
            {"retuned", outcome.retuned()},
            {"failing", outcome.failing()}}},
          {"entries", std::move(entries)}};
}

std::string junit_xml(const RevalidateOutcome& outcome) {
  std::vector<tuner::JUnitCase> cases;
  for (const auto& entry : outcome.entries) {
    tuner::JUnitCase junit{entry.workload_key, entry.measured.seconds, tuner::JUnitCase::Outcome::kPassed, "", ""};
    if (entry.verdict.status == Revalidation::kUntuned) {
      junit.outcome = tuner::JUnitCase::Outcome::kSkipped;
      junit.message = entry.verdict.reason;
    } else if (entry.is_failing()) {
      const auto& last = entry.retune ? entry.retune->after : entry.verdict;
      junit.outcome = tuner::JUnitCase::Outcome::kFailed;
      junit.failure_type = std::string(tuner::revalidation_name(last.status));
      junit.message = entry.retune ? std::string(tuner::revalidation_name(entry.verdict.status)) + " (" +
                                         entry.verdict.reason + "), still " + junit.failure_type +
                                         " after tuning again: " + last.reason
                                   : last.reason;
    }
    cases.push_back(std::move(junit));
  }
  return tuner::junit_xml("revalidate", outcome.suite_name, cases);
}

}  // namespace optune::app
