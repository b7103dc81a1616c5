// optune regress: the CI gate. Per workload of a suite, measures now the tuned config (best
// recorded for this target and device) and the template's default config, compares them with
// each other and with the recorded figure, prints a table, optionally writes JUnit XML, and exits
// 1 when any tuned config regressed beyond the tolerance in each of --attempts measurements. The
// database is only read: a CI check leaves the tuning records as they were.
#include <fmt/format.h>

#include <cstdio>

#include "cli_support.hpp"
#include "measure_options.hpp"
#include "optune/app/output_text.hpp"
#include "optune/app/regress.hpp"

namespace optune::cli {
namespace {

void print_row(const app::RegressCase& checked) {
  static const char* kVerdicts[] = {"ok", "REGRESSION", "untuned"};
  const tuner::RegressionCase& c = checked.measured;
  std::optional<double> default_seconds;
  if (c.default_now && c.default_now->ok()) default_seconds = c.default_now->median_seconds;
  std::printf("%-40s %12s %12s %12s %20s %19s  %s%s%s\n", c.workload_key.c_str(),
              c.recorded_seconds ? fmt::format("{:.4f}", *c.recorded_seconds * 1e3).c_str() : "-",
              milliseconds(c.tuned_now).c_str(), milliseconds(c.default_now).c_str(),
              ratio(c.tuned_now, c.recorded_seconds).c_str(), ratio(c.tuned_now, default_seconds).c_str(),
              kVerdicts[static_cast<int>(checked.judgement.verdict)], checked.judgement.reason.empty() ? "" : ": ",
              checked.judgement.reason.c_str());
  if (!c.toolchain_change.empty()) std::printf("  note: tuned under another toolchain: %s\n", c.toolchain_change.c_str());
  std::fflush(stdout);
}

int run_regress(const app::RegressRequest& request) {
  bool header_printed = false;
  auto print = [&header_printed](const app::RegressCase& checked) {
    if (!header_printed)
      std::printf("%-40s %12s %12s %12s %20s %19s  %s\n", "workload", "recorded ms", "tuned now", "default now",
                  "speed-up vs recorded", "speed-up vs default", "verdict");
    header_printed = true;
    print_row(checked);
  };
  const app::RegressOutcome outcome = app::regress(request, install_paths(), print, stderr_log());
  std::printf("\n%s: %zu regressed, %zu untuned (tolerance %.0f%%)\n",
              app::counted(outcome.cases.size(), "workload").c_str(), outcome.regressions, outcome.untuned,
              request.tolerance * 100);
  return outcome.regressions ? 1 : 0;
}

}  // namespace

void add_regress_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<app::RegressRequest>();
  CLI::App* regress = app.add_subcommand(
      "regress", "CI check: re-measure tuned and default configs of a suite; exit 1 when a tuned config regressed");
  add_database_option(*regress, options->database, "only read");
  regress->add_option("--suite", options->suite, "Suite file of the workloads to check")->required();
  add_layout_option(*regress, options->layout);
  regress->add_option("--target", options->measuring.target, "Target: " + app::target_forms())->capture_default_str();
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
