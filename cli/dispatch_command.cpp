// optune dispatch: a measured dispatch for a shape range or a shape list (app/dispatch.hpp). Prints
// the configs x shapes matrix (each cell the config's time over the shape's best), the configs the
// cover chose, the rule's leaves and the held-out shapes' check beside today's nearest-shape
// config; stores the rule, which pick and apply-best then follow.
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "measure_options.hpp"
#include "optune/app/dispatch.hpp"
#include "optune/app/measure_configs.hpp"
#include "optune/app/output_text.hpp"

namespace optune::cli {
namespace {

struct DispatchOptions {
  app::DispatchRequest request;
  std::string dtype;
  double within_percent = 5;
  std::string format = "table";
  bool quiet = false;
};

std::string ratio_text(const std::optional<double>& seconds, const std::optional<double>& reference) {
  if (!seconds || !reference || *reference <= 0) return "-";
  return fmt::format("{:.3f}", *seconds / *reference);
}

void print_matrix(const app::DispatchOutcome& outcome) {
  std::printf("matrix: each finalist's time over the shape's best (- did not run); * the cover's choice\n");
  std::printf("%-10s", "finalist");
  for (std::size_t s = 0; s < outcome.shape_keys.size(); ++s) std::printf(" %8s", fmt::format("s{}", s).c_str());
  std::printf("  from\n");
  for (std::size_t f = 0; f < outcome.finalists.size(); ++f) {
    const auto chosen = std::find(outcome.cover.chosen.begin(), outcome.cover.chosen.end(), f);
    std::printf("%-10s", fmt::format("{}{}", f, chosen == outcome.cover.chosen.end() ? "" : "*").c_str());
    for (std::size_t s = 0; s < outcome.shape_keys.size(); ++s)
      std::printf(" %8s", ratio_text(outcome.matrix.seconds[f][s], outcome.matrix.best(s)).c_str());
    std::printf("  %s\n", outcome.finalist_from[f].c_str());
  }
  for (std::size_t s = 0; s < outcome.shape_keys.size(); ++s)
    std::printf("  s%zu %s (best %s ms)\n", s, outcome.shape_keys[s].c_str(),
                outcome.matrix.best(s) ? fmt::format("{:.4f}", *outcome.matrix.best(s) * 1e3).c_str() : "-");
}

void print_checks(const std::string& title, const std::vector<app::HeldOutCheck>& checks) {
  std::printf("%s: time over their own tuned best\n%-44s %-22s %8s %8s\n", title.c_str(), "workload", "leaf", "rule",
              "nearest");
  for (const auto& check : checks)
    std::printf("%-44s %-22s %8s %8s\n", check.workload.c_str(), check.leaf.c_str(),
                ratio_text(check.rule, check.own_best).c_str(), ratio_text(check.nearest, check.own_best).c_str());
}

void print_outcome(const app::DispatchOutcome& outcome, double within) {
  std::printf("dispatch %zu of %s (%s on %s), %s x %s\n", outcome.stored.id, outcome.range.c_str(),
              outcome.stored.template_name.c_str(), outcome.stored.target.c_str(),
              app::counted(outcome.shape_keys.size(), "shape").c_str(),
              app::counted(outcome.finalists.size(), "finalist").c_str());
  print_matrix(outcome);
  std::printf("cover (greedy, within %.1f%% of each shape's best): %s", within * 100,
              app::counted(outcome.cover.chosen.size(), "config").c_str());
  if (!outcome.cover.uncovered.empty()) {
    std::printf("; not within reach:");
    for (auto s : outcome.cover.uncovered) std::printf(" s%zu", s);
  }
  std::printf("\nrule:\n");
  for (std::size_t l = 0; l < outcome.rule.leaves.size(); ++l)
    std::printf("  %-28s config %zu (finalist %zu, tuned for %s)\n", outcome.rule.leaf_name(l).c_str(),
                outcome.rule.leaves[l].config, outcome.cover.chosen[outcome.rule.leaves[l].config],
                outcome.rule.configs_from[outcome.rule.leaves[l].config].c_str());
  for (std::size_t r = 0; r < outcome.refinements.size(); ++r) {
    const auto& refinement = outcome.refinements[r];
    print_checks(fmt::format("held-out shapes, check {} (the rule fitted before refinement {})", r + 1, r + 1),
                 refinement.checks);
    std::printf("refinement %zu: sampled too, the rule fitted again:", r + 1);
    for (const auto& key : refinement.promoted) std::printf(" %s", key.c_str());
    std::printf("\n");
  }
  if (!outcome.held_out.empty()) print_checks("held-out shapes", outcome.held_out);
}

int run_dispatch(DispatchOptions& options) {
  auto& request = options.request;
  if (!options.dtype.empty())
    for (auto& shape : request.shapes) shape += ",dtype=" + options.dtype;
  request.within = options.within_percent / 100;
  auto progress = options.quiet ? tuner::Progress(nullptr, false) : tuner::Progress::for_stderr();
  const auto outcome = app::make_dispatch(request, install_paths(), progress, stderr_log());
  if (options.format == "json") std::printf("%s\n", app::dispatch_json(outcome).dump(2).c_str());
  else print_outcome(outcome, request.within);
  return 0;
}

}  // namespace

void add_dispatch_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<DispatchOptions>();
  auto& request = options->request;
  CLI::App* command = app.add_subcommand(
      "dispatch", "Measure a dispatch for a shape range: at most K configs and a rule over the extents, validated");
  command->add_option("--op", request.tune.op, "Operator: " + app::operator_names())->capture_default_str();
  command->add_option("--shape", request.shapes,
                      "A range (M=1..2048,N=768,K=768) or, repeated, the shapes of a list")
      ->required();
  command->add_option("--samples", request.samples,
                      "A range's sampled shapes, at most: about two per octave of a ranged extent")
      ->capture_default_str()->check(whole_number(2, 256));
  command->add_option("--dtype", options->dtype, "The operands' type of every shape: f32 (default), f16, bf16, i8, u7, e4m3")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "i8", "u7", "e4m3"}));
  command->add_option("--template", request.tune.template_name, "Template (default: the first shape's default)");
  command->add_option("--target", request.tune.measuring.target, "Target: " + app::target_forms())
      ->capture_default_str();
  command->add_option("--trials", request.tune.tuning.trials,
                      "Trials tuning each shape, sampled and held-out (0: use what is recorded)")
      ->capture_default_str()->check(whole_number(0, app::kMaxTrials));
  command->add_option("--tuner", request.tune.tuning.tuner.name, "Tuner of each shape: xgb, ga, random, grid")
      ->capture_default_str();
  command->add_option("--seed", request.tune.tuning.tuner.seed, "Seed of the tuner's random choices")
      ->capture_default_str()->check(whole_number(0, std::numeric_limits<std::int64_t>::max()));
  command->add_option("--configs", request.most_configs, "K: the most configs the rule may run")
      ->capture_default_str()->check(whole_number(1, 64));
  command->add_option("--within", options->within_percent, "X: percent of each shape's best the cover keeps it within")
      ->capture_default_str()->check(finite_number(0, 1000));
  command->add_option("--finalists", request.finalists, "Best configs of each sampled shape measured on every shape")
      ->capture_default_str()->check(whole_number(1, 64));
  command->add_option("--held-out", request.held_out,
                      "A shape to validate the rule on (repeatable; default: --held-out-count drawn from the range)");
  command->add_option("--held-out-count", request.held_out_count, "Held-out shapes drawn from a range")
      ->capture_default_str()->check(whole_number(0, 64));
  command->add_option("--refine", request.refine,
                      "Rounds at most in which held-out shapes the rule misses are sampled too and it is fitted again")
      ->capture_default_str()->check(whole_number(0, 8));
  command->add_option("--rounds", request.rounds, "Interleaved rounds of each shape's measurement")
      ->capture_default_str()->check(whole_number(1, app::kMaxMeasureRounds));
  add_database_option(*command, request.tune.database, "records and the rule written");
  add_timing_options(*command, request.tune.measuring, "candidate");
  add_wait_lock_option(*command, request.tune.wait_lock);
  command->add_flag("--quiet", options->quiet, "No progress display");
  command->add_option("--format", options->format, "table, or json: the stored rule with its matrix and checks")
      ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  command->callback([options, &action] { action = [options] { return run_dispatch(*options); }; });
}

}  // namespace optune::cli
