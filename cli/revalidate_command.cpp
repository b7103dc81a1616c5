// optune revalidate: after a toolchain change (another compiler or version, other flags), re-measures
// each stored best that another or an unknown toolchain built, says whether it holds, regressed or
// broke, tunes again only the regressed and broken ones, and exits 1 when any is still regressed or
// broken (optune/app/revalidation.hpp). Prints a table as it goes, or one JSON object; JUnit XML
// for CI servers.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <limits>

#include "cli_support.hpp"
#include "measure_options.hpp"
#include "optune/app/revalidation.hpp"
#include "optune/app/output_text.hpp"

namespace optune::cli {
namespace {

struct RevalidateOptions {
  app::RevalidateRequest request;
  std::string junit;
  std::string format = "text";
  bool quiet = false;
};

void print_header() {
  std::printf("%-40s %-10s %12s %12s %12s %20s %19s\n", "workload", "status", "recorded ms", "now ms", "default ms",
              "speed-up vs recorded", "speed-up vs default");
}

// What the re-tune of a regressed or broken entry came to.
void print_retune(const app::Retune& retune) {
  std::printf("  re-tuned (%s, run %s): ", app::counted(retune.trials, "trial").c_str(), retune.run_id.c_str());
  if (!retune.best) {
    std::printf("still broken: %s\n", retune.after.reason.c_str());
    return;
  }
  std::string against = "the old config no longer works";
  if (retune.old_config && retune.old_config->config_text() == retune.best->config_text())
    against = "the old config is still the best";
  else if (retune.old_config && retune.speedup_over_old)
    against = fmt::format("speed-up {} over the old config now ({:.4f} ms)",
                          app::speedup_text(*retune.speedup_over_old), retune.old_config->median_seconds * 1e3);
  else if (retune.old_config)
    against = fmt::format("the old config now {:.4f} ms", retune.old_config->median_seconds * 1e3);
  std::printf("new best %.4f ms, %s; %s%s\n", retune.best->median_seconds * 1e3, against.c_str(),
              retune.best->is_default ? "(the default) " : "", retune.best->config.dump().c_str());
  if (retune.after.status != tuner::Revalidation::kHolds)
    std::printf("  still %s: %s\n", std::string(tuner::revalidation_name(retune.after.status)).c_str(),
                retune.after.reason.c_str());
}

void print_entry(const app::RevalidationEntry& entry) {
  const auto& c = entry.measured;
  std::optional<double> default_seconds;
  if (c.default_now && c.default_now->ok()) default_seconds = c.default_now->median_seconds;
  std::printf("%-40s %-10s %12s %12s %12s %20s %19s\n", entry.workload_key.c_str(),
              std::string(tuner::revalidation_name(entry.verdict.status)).c_str(),
              c.recorded_seconds ? fmt::format("{:.4f}", *c.recorded_seconds * 1e3).c_str() : "-",
              milliseconds(c.tuned_now).c_str(), milliseconds(c.default_now).c_str(),
              ratio(c.tuned_now, c.recorded_seconds).c_str(), ratio(c.tuned_now, default_seconds).c_str());
  const bool measured = c.tuned_now.has_value();
  if (measured && !entry.toolchain_change.empty()) std::printf("  toolchain: %s\n", entry.toolchain_change.c_str());
  if (measured && !entry.verdict.reason.empty()) std::printf("  %s\n", entry.verdict.reason.c_str());
  if (entry.retune) print_retune(*entry.retune);
  std::fflush(stdout);
}

void print_totals(const app::RevalidateOutcome& outcome) {
  using tuner::Revalidation;
  std::printf("\n%s: %zu current, %zu holds, %zu regressed, %zu broken, %zu untuned; %zu re-tuned, %zu "
              "still regressed or broken (tolerance %.0f%%) in %s\n",
              app::counted(outcome.entries.size(), "workload").c_str(), outcome.count(Revalidation::kCurrent),
              outcome.count(Revalidation::kHolds),
              outcome.count(Revalidation::kRegressed), outcome.count(Revalidation::kBroken),
              outcome.count(Revalidation::kUntuned), outcome.retuned(), outcome.failing(), outcome.tolerance * 100,
              tuner::format_duration(outcome.seconds).c_str());
}

int run_revalidate(const RevalidateOptions& options) {
  app::check_revalidate_request(options.request);
  const bool json = options.format == "json";
  auto progress = options.quiet ? tuner::Progress(nullptr, false) : tuner::Progress::for_stderr();
  bool header_printed = false;
  auto on_entry = [&](const app::RevalidationEntry& entry) {
    if (json) return;
    if (!header_printed) print_header();
    header_printed = true;
    print_entry(entry);
  };
  const app::RevalidateOutcome outcome = app::revalidate(options.request, install_paths(), progress, stderr_log(), on_entry);
  if (!options.junit.empty()) {
    std::ofstream out(options.junit);
    out << app::junit_xml(outcome);
    if (!out) throw UsageError("revalidate: cannot write " + options.junit);
  }
  if (json) std::printf("%s\n", app::outcome_json(outcome).dump(2).c_str());
  else print_totals(outcome);
  return outcome.failing() ? 1 : 0;
}

}  // namespace

void add_revalidate_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<RevalidateOptions>();
  auto& request = options->request;
  CLI::App* command = app.add_subcommand(
      "revalidate",
      "After a toolchain change: re-measure stored bests of another toolchain, re-tune the regressed and broken ones");
  add_database_option(*command, request.database, "its re-measurements and re-tunes are recorded");
  command->add_option("--suite", request.suite, "Suite file of the workloads to revalidate");
  add_layout_option(*command, request.layout);
  command->add_option("--op", request.op, "Operator of --shape: " + app::operator_names())->capture_default_str();
  command->add_option("--shape", request.shape, "One workload's shape, as tune takes it (M,N,K or named extents)");
  add_dtype_option(*command, request.shape);
  command->add_option("--workload", request.workloads, "A workload key to revalidate (repeatable; gemm.f32.M64.N64.K64)");
  command->add_option("--target", request.target, "Target: " + app::target_forms())->capture_default_str();
  command->add_option("--tolerance", request.tolerance, "Allowed slowdown, as a share (0.05: 5%)")
      ->capture_default_str()
      ->check(finite_number(0.0, 10.0));
  command->add_option("--attempts", request.attempts,
                      "Measurements of an entry before it is called regressed (the best of each config counts)")
      ->capture_default_str()
      ->check(whole_number(1, 20));
  command->add_option("--trials", request.retune.trials,
                      "Trials at most of each regressed or broken entry's re-tune (it stops when a batch finds "
                      "nothing faster)")
      ->capture_default_str()
      ->check(whole_number(1, app::kMaxTrials));
  command->add_option("--tuner", request.retune.tuner.name, "Tuner of the re-tunes: xgb, ga, random, grid")
      ->capture_default_str();
  command->add_option("--seed", request.retune.tuner.seed, "Seed of the re-tunes' random choices")
      ->capture_default_str()
      ->check(whole_number(0, std::numeric_limits<std::int64_t>::max()));
  command->add_flag("--all", request.all, "Re-measure the entries tuned under today's toolchain too");
  command->add_option("--junit", options->junit, "Write JUnit XML here, for CI servers");
  command->add_option("--format", options->format, "text, or json: one object with every entry")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->add_flag("--quiet", options->quiet, "No progress display of the re-tunes");
  add_wait_lock_option(*command, request.wait_lock);
  add_timing_options(*command, request.measuring, "config");
  command->callback([options, &action] { action = [options] { return run_revalidate(*options); }; });
}

}  // namespace optune::cli
