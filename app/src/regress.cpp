#include "optune/app/regress.hpp"

#include <chrono>
#include <fstream>

#include "optune/app/bad_input.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/toolchain_change.hpp"
#include "optune/tuner/scheduling/task_session.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::app {
namespace {

// Measures the tuned and the default config of one workload, both built before either is timed;
// while the verdict is a regression, builds and measures both again (up to `attempts` in all),
// keeping the best measurement of each: one slow run on a busy machine is not a regression.
tuner::RegressionCase check_workload(const tuner::SuiteEntry& entry, const RegressRequest& request,
                                     const kernels::Target& target, const kernels::DeviceInfo& device,
                                     const db::Database& database, Measuring& measuring) {
  auto start = std::chrono::steady_clock::now();
  auto task = make_entry_task(entry, target, device);
  tuner::RegressionCase result;
  result.name = entry.name;
  result.workload_key = entry.workload.key();
  const db::TaskKey key = tuner::task_key(*task);
  std::vector<measure::MeasureInput> inputs;
  // Records of an older space (a knob added since) are passed over: the fastest one this optune
  // can build is the tuned config.
  if (auto best = tuner::best_usable(database, key, task->space)) {
    inputs.push_back({task, best->config, std::nullopt});
    result.recorded_seconds = tuner::recorded_figure(database, key, best->record);
    result.toolchain_change = tuner::toolchain_change(best->record, measuring.builder->toolchain(task->device));
  }
  inputs.push_back({task, task->kernel_template->default_config(task->workload, task->device, task->space), std::nullopt});
  for (int attempt = 1; attempt <= request.attempts; ++attempt) {
    auto builds = measuring.builder->build(inputs);  // the runner removes what it has measured
    auto measured = measuring.runner.run(inputs, builds);
    if (result.recorded_seconds) result.tuned_now = tuner::best_of(result.tuned_now, measured.front());
    result.default_now = tuner::best_of(result.default_now, measured.back());
    result.attempts = attempt;
    if (tuner::judge(result, request.tolerance).verdict != tuner::Verdict::kRegression) break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

RegressOutcome regress(const RegressRequest& request, const InstallPaths& paths,
                       const std::function<void(const RegressCase&)>& on_case,
                       std::function<void(const std::string&)> log) {
  const tuner::Suite suite = load_suite_option(request.suite, request.layout);
  const kernels::Target target = parse_target_option(request.measuring.target);
  auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  // Every workload is measured on the target's one device; the database is only read.
  const kernels::DeviceInfo device = find_device_option(target);
  auto locks = lock_for_measuring("regress", paths.lock_dir, request.database, device, request.wait_lock, false, log);
  Measuring measuring(request.measuring, target, paths, std::nullopt, std::move(log));
  RegressOutcome outcome{suite.name, {}, 0, 0};
  std::vector<tuner::RegressionCase> cases;
  for (const auto& entry : suite.entries) {
    cases.push_back(check_workload(entry, request, target, device, database, measuring));
    RegressCase checked{cases.back(), tuner::judge(cases.back(), request.tolerance)};
    outcome.regressions += checked.judgement.verdict == tuner::Verdict::kRegression;
    outcome.untuned += checked.judgement.verdict == tuner::Verdict::kUntuned;
    if (on_case) on_case(checked);
    outcome.cases.push_back(std::move(checked));
  }
  if (!request.junit.empty()) {
    std::ofstream out(request.junit);
    out << tuner::junit_xml(cases, request.tolerance, suite.name);
    if (!out) throw BadInput("regress: cannot write " + request.junit);
  }
  return outcome;
}

}  // namespace optune::app
