// optune regress: the CI gate. Per workload of a suite, measures now the tuned config (best
// recorded for this target and device) and the template's default config, compares them with
// each other and with the recorded figure, prints a table, optionally writes JUnit XML, and exits
// 1 when any tuned config regressed beyond the tolerance in each of --attempts measurements. The
// database is only read: a CI check leaves the tuning records as they were.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "cli_support.hpp"
#include "optune/backends/registry.hpp"
#include "measuring.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/results/regression.hpp"
#include "optune/tuner/results/toolchain_change.hpp"
#include "optune/tuner/search/task_history.hpp"
#include "optune/tuner/scheduling/suite.hpp"
#include "optune/tuner/scheduling/task_session.hpp"

namespace optune::cli {
namespace {

struct RegressOptions {
  std::string database = kDefaultDatabase;
  std::string suite;
  std::string layout;  // --layout: replaces the suite's layout
  std::string target = "cpu";
  double tolerance = 0.05;
  int attempts = 3;  // measurements of a workload before a regression is called
  std::string junit;
  bool wait_lock = false;
  MeasureSettings measuring;
};

// Measures the tuned and the default config of one workload, both built before either is timed;
// while the verdict is a regression, builds and measures both again (up to --attempts in all),
// keeping the best measurement of each: one slow run on a busy machine is not a regression.
tuner::RegressionCase check_workload(const tuner::SuiteEntry& entry, const RegressOptions& options,
                                     const db::Database& database, Measuring& measuring) {
  auto start = std::chrono::steady_clock::now();
  auto task = make_entry_task(entry, options.target);
  tuner::RegressionCase result{entry.name, entry.workload.key(), std::nullopt, std::nullopt, std::nullopt, 0};
  const db::TaskKey key = tuner::task_key(*task);
  std::vector<measure::MeasureInput> inputs;
  // Records of an older space (a knob added since) are passed over: the fastest one this optune
  // can build is the tuned config.
  if (auto best = tuner::best_usable(database, key, task->space)) {
    inputs.push_back({task, best->config});
    result.recorded_seconds = tuner::recorded_figure(database, key, best->record);
    result.toolchain_change = tuner::toolchain_change(best->record, measuring.builder->toolchain(task->device));
  }
  inputs.push_back({task, task->kernel_template->default_config(task->workload, task->device, task->space)});
  for (int attempt = 1; attempt <= options.attempts; ++attempt) {
    auto builds = measuring.builder->build(inputs);  // the runner removes what it has measured
    auto measured = measuring.runner.run(inputs, builds);
    if (result.recorded_seconds) result.tuned_now = tuner::best_of(result.tuned_now, measured.front());
    result.default_now = tuner::best_of(result.default_now, measured.back());
    result.attempts = attempt;
    if (tuner::judge(result, options.tolerance).verdict != tuner::Verdict::kRegression) break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void print_row(const tuner::RegressionCase& c, const tuner::Judgement& judgement) {
  static const char* kVerdicts[] = {"ok", "REGRESSION", "untuned"};
  std::optional<double> default_seconds;
  if (c.default_now && c.default_now->ok()) default_seconds = c.default_now->median_seconds;
  std::printf("%-40s %12s %12s %12s %20s %19s  %s%s%s\n", c.workload_key.c_str(),
              c.recorded_seconds ? fmt::format("{:.4f}", *c.recorded_seconds * 1e3).c_str() : "-",
              milliseconds(c.tuned_now).c_str(), milliseconds(c.default_now).c_str(),
              ratio(c.tuned_now, c.recorded_seconds).c_str(), ratio(c.tuned_now, default_seconds).c_str(),
              kVerdicts[static_cast<int>(judgement.verdict)], judgement.reason.empty() ? "" : ": ",
              judgement.reason.c_str());
}

int run_regress(const RegressOptions& options) {
  const tuner::Suite suite = load_suite_option(options.suite, options.layout);
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  // Every workload is measured on the target's one device; the database is only read.
  const auto first = make_entry_task(suite.entries.front(), options.target);
  auto locks = lock_for_measuring("regress", options.database, first->device, options.wait_lock, false);
  MeasureSettings settings = options.measuring;
  settings.target = options.target;
  Measuring measuring(settings);
  std::printf("%-40s %12s %12s %12s %20s %19s  %s\n", "workload", "recorded ms", "tuned now", "default now",
              "speed-up vs recorded", "speed-up vs default", "verdict");
  std::vector<tuner::RegressionCase> cases;
  std::size_t regressions = 0, untuned = 0;
  for (const auto& entry : suite.entries) {
    cases.push_back(check_workload(entry, options, database, measuring));
    auto judgement = tuner::judge(cases.back(), options.tolerance);
    regressions += judgement.verdict == tuner::Verdict::kRegression;
    untuned += judgement.verdict == tuner::Verdict::kUntuned;
    print_row(cases.back(), judgement);
    if (!cases.back().toolchain_change.empty())
      std::printf("  note: tuned under another toolchain: %s\n", cases.back().toolchain_change.c_str());
    std::fflush(stdout);
  }
  if (!options.junit.empty()) {
    std::ofstream out(options.junit);
    out << tuner::junit_xml(cases, options.tolerance, suite.name);
    if (!out) throw UsageError("regress: cannot write " + options.junit);
  }
  std::printf("\n%s: %zu regressed, %zu untuned (tolerance %.0f%%)\n", tuner::counted(cases.size(), "workload").c_str(),
              regressions, untuned, options.tolerance * 100);
  return regressions ? 1 : 0;
}

}  // namespace

void add_regress_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<RegressOptions>();
  CLI::App* regress = app.add_subcommand(
      "regress", "CI check: re-measure tuned and default configs of a suite; exit 1 when a tuned config regressed");
  add_database_option(*regress, options->database, "only read");
  regress->add_option("--suite", options->suite, "Suite file of the workloads to check")->required();
  add_layout_option(*regress, options->layout);
  regress->add_option("--target", options->target, "Target: " + backends::target_forms())->capture_default_str();
  regress->add_option("--tolerance", options->tolerance, "Allowed slowdown, as a share (0.05: 5%)")
      ->capture_default_str()
      ->check(finite_number(0.0, 10.0));
  regress->add_option("--attempts", options->attempts,
                      "Measurements of a workload before a regression is called (the best of each config counts)")
      ->capture_default_str()
      ->check(whole_number(1, 20));
  regress->add_option("--junit", options->junit, "Write JUnit XML here, for CI servers");
  add_wait_lock_option(*regress, options->wait_lock);
  add_timing_options(*regress, options->measuring, "config");
  regress->callback([options, &action] { action = [options] { return run_regress(*options); }; });
}

}  // namespace optune::cli
