// optune tune: tunes one operator on a target and prints the best config, its GFLOP/s and its
// speed-up over the template's default config.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "measuring.hpp"
#include "optune/tuner/suite_tuning.hpp"
#include "optune/tuner/tuning_loop.hpp"

namespace optune::cli {
namespace {

struct TuneOptions {
  std::string op = "gemm";
  std::string shape;
  std::string target = "cpu";
  std::string database = kDefaultDatabase;
  tuner::TuningOptions tuning;
  measure::TimingPolicy timing;
  int jobs = 0;
  double compile_timeout = 120;
  std::string compiler = "c++";
  bool quiet = false;
  // Suites.
  std::string suite;
  std::string layout;  // --layout: replaces the suite's layout
  std::size_t trials_per_task = 0;
  std::string budget;  // trials ("2000") or time ("8h", "30m")
  tuner::SchedulerOptions scheduler;
  // Remote measurement.
  std::string rpc;  // KEY@TRACKER_HOST:PORT
  std::string token_file;
  double rpc_wait = 60;
};

MeasureSettings measure_settings(const TuneOptions& options) {
  return {options.target,     options.timing, options.jobs,       options.compile_timeout,
          options.compiler,   options.rpc,    options.token_file, options.rpc_wait};
}

tuner::Progress make_progress(const TuneOptions& options) {
  return options.quiet ? tuner::Progress(nullptr, false) : tuner::Progress::for_stderr();
}

void print_summary(const TuneOptions& options, const measure::MeasureTask& task,
                   const tuner::TuningSummary& summary) {
  std::printf("workload   %s on %s (%s)\n", task.workload.key().c_str(), task.target.str().c_str(),
              task.device.name.c_str());
  std::printf("trials     %zu measured, %zu failed, in %s (tuner %s: %.1fs choosing",
              summary.trials, summary.failures, tuner::format_duration(summary.seconds).c_str(),
              summary.tuner.c_str(), summary.overhead_seconds);
  if (summary.transfer_records) std::printf(", started from %zu records of other shapes", summary.transfer_records);
  if (summary.other_device_records)
    std::printf(", warm-started from %zu records of other devices", summary.other_device_records);
  std::printf(")\n");
  if (summary.default_config && summary.default_config->ok())
    std::printf("default    %.2f GFLOP/s  %.4f ms\n", summary.default_config->gflops,
                summary.default_config->median_seconds * 1e3);
  else if (summary.default_config)
    std::printf("default    failed: %s\n", summary.default_config->error_kind.c_str());
  if (!summary.best) {
    std::printf("best       no config succeeded\n");
    return;
  }
  std::printf("best       %.2f GFLOP/s  %.4f ms  speed-up %.2fx over default\n", summary.best->gflops,
              summary.best->median_seconds * 1e3, summary.speedup());
  std::printf("config     %s\n", summary.best->config.dump().c_str());
  std::printf("database   %s (run %s)\n", options.database.c_str(), summary.run_id.c_str());
}

void print_suite_summary(const TuneOptions& options, const tuner::Suite& suite, const tuner::SuiteSummary& summary) {
  std::printf("suite %s: %zu tasks, %zu trials in %s\n\n", suite.name.c_str(), summary.tasks.size(),
              summary.trials, tuner::format_duration(summary.seconds).c_str());
  std::printf("%-22s %5s %6s %12s %12s %9s %8s\n", "task", "count", "trials", "default ms", "tuned ms",
              "GFLOP/s", "speed-up");
  for (const auto& task : summary.tasks) {
    const auto& s = task.summary;
    auto ms = [](const std::optional<db::TuningRecord>& r) {
      return r && r->ok() ? fmt::format("{:.4f}", r->median_seconds * 1e3) : std::string(r ? "failed" : "-");
    };
    std::printf("%-22s %5d %6zu %12s %12s %9s %7.2fx\n", task.entry.name.c_str(), task.entry.count, s.trials,
                ms(s.default_config).c_str(), ms(s.best).c_str(),
                s.best ? fmt::format("{:.1f}", s.best->gflops).c_str() : "-", s.speedup());
  }
  std::printf("\nnetwork latency, estimated as the sum of count x latency: default %.3f ms, tuned %.3f ms, "
              "speed-up %.2fx\n", summary.default_seconds * 1e3, summary.tuned_seconds * 1e3,
              summary.default_seconds / summary.tuned_seconds);
  std::printf("database %s\n", options.database.c_str());
}

tuner::SuiteBudget suite_budget(const TuneOptions& options) {
  tuner::SuiteBudget budget;
  budget.trials_per_task = options.trials_per_task;
  if (!options.budget.empty()) {
    bool is_count = options.budget.find_first_not_of("0123456789") == std::string::npos;
    try {
      if (is_count) budget.total_trials = std::stoul(options.budget);
      else budget.seconds = tuner::parse_duration(options.budget);
    } catch (const std::exception& error) {
      throw UsageError("tune: --budget: " + std::string(error.what()));
    }
  }
  if (!budget.trials_per_task && !budget.total_trials && !budget.seconds) budget.trials_per_task = options.tuning.trials;
  if (budget.seconds && !budget.total_trials && !budget.trials_per_task)
    budget.total_trials = std::numeric_limits<std::size_t>::max() / 2;  // time alone bounds the run
  return budget;
}

int run_suite(const TuneOptions& options) {
  const tuner::Suite suite = load_suite_option(options.suite, options.layout);
  auto budget = suite_budget(options);
  auto remote = find_remote(measure_settings(options));
  std::vector<tuner::SuiteTask> tasks;
  for (const auto& entry : suite.entries) {
    auto task = make_task(std::string(kernels::op_name(entry.workload.op)), "", options.target, &entry.workload,
                          remote ? &remote->device : nullptr);
    tasks.push_back({entry, task});
  }
  auto database = open_database(options.database, db::Database::Mode::kReadWrite);
  Measuring measuring(measure_settings(options), remote);
  auto progress = make_progress(options);
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
  auto summary = tuner::tune_suite(tasks, measurer, options.tuning, budget, options.scheduler, progress);
  print_suite_summary(options, suite, summary);
  return std::isnan(summary.tuned_seconds) ? 1 : 0;
}

int run_tune(const TuneOptions& options) {
  if (options.tuning.trials == 0) throw UsageError("tune: --trials must be at least 1");
  tuner::check_tuner_name(options.tuning.tuner.name);
  if (!options.suite.empty()) {
    if (!options.shape.empty()) throw UsageError("tune: give either --suite or --shape, not both");
    return run_suite(options);
  }
  if (options.shape.empty()) throw UsageError("tune: --shape or --suite is required (e.g. --shape 512,512,512)");
  if (!options.layout.empty()) throw UsageError("tune: --layout goes with --suite (a --shape names its own: layout=nchw8c)");
  auto remote = find_remote(measure_settings(options));
  auto task = make_task(options.op, options.shape, options.target, nullptr, remote ? &remote->device : nullptr);
  auto database = open_database(options.database, db::Database::Mode::kReadWrite);
  Measuring measuring(measure_settings(options), remote);
  auto progress = make_progress(options);
  tuner::TuningLoop loop(*measuring.builder, measuring.runner, database, progress);
  auto summary = loop.run(task, options.tuning);
  print_summary(options, *task, summary);
  return summary.best ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand("tune", "Tune one operator on a target; every measurement goes to the database");
  tune->add_option("--op", options->op, "Operator: gemm, conv2d, depthwise_conv2d")->capture_default_str();
  tune->add_option("--shape", options->shape,
                   "Shape: M,N,K or named extents (M=512,N=512,K=512); a convolution's may name its layout "
                   "(...,layout=nchw8c)");
  add_layout_option(*tune, options->layout);
  tune->add_option("--target", options->target, "Target: cpu, cpu:<triple>, opencl[:<platform>:<device>]")
      ->capture_default_str();
  tune->add_option("--tuner", options->tuning.tuner.name, "Tuner: xgb (model-based), ga (genetic), random, grid")->capture_default_str();
  tune->add_option("--trials", options->tuning.trials, "Configs to measure (the budget)")->capture_default_str();
  tune->add_option("--batch-size", options->tuning.batch_size, "Configs built and measured per batch")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  tune->add_option("--early-stopping", options->tuning.early_stopping,
                   "Stop after this many trials without improvement (0: never)")->capture_default_str();
  tune->add_option("--remeasure", options->tuning.remeasure_top, "Best configs measured again at the end")
      ->capture_default_str();
  tune->add_option("--objective", options->tuning.tuner.objective, "xgb: cost model objective")
      ->check(CLI::IsMember({"rank:pairwise", "reg:squarederror"}))->capture_default_str();
  tune->add_flag("--no-transfer", [options](std::int64_t) { options->tuning.tuner.transfer = false; },
                 "xgb: do not start from records of other shapes or of other devices");
  tune->add_option("--seed", options->tuning.tuner.seed, "Seed of the tuner's random choices")->capture_default_str();
  tune->add_option("--db", options->database, "SQLite database file")->capture_default_str();
  tune->add_option("--repeat", options->timing.repeat, "Timed repeats per candidate")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  tune->add_option("--number", options->timing.number, "Runs per repeat (0: from --min-repeat-ms)")
      ->capture_default_str()->check(CLI::Range(0, 1000000));
  tune->add_option("--min-repeat-ms", options->timing.min_repeat_ms, "Shortest repeat, in milliseconds")
      ->capture_default_str()->check(CLI::Range(0.0, 60000.0));
  tune->add_option("--timeout", options->timing.timeout_seconds, "Seconds a candidate may run (check and timing)")
      ->capture_default_str()->check(CLI::Range(0.1, 86400.0));
  tune->add_option("--compile-timeout", options->compile_timeout, "Seconds a compile may take")
      ->capture_default_str()->check(CLI::Range(1.0, 86400.0));
  tune->add_option("--jobs", options->jobs, "Parallel compiles (0: all cores)")->capture_default_str();
  tune->add_option("--compiler", options->compiler, "C++ compiler for CPU candidates")->capture_default_str();
  tune->add_flag("--quiet", options->quiet, "No progress display");
  tune->add_option("--suite", options->suite, "Tune every workload of a suite file (configs/workloads/*.toml)");
  tune->add_option("--trials-per-task", options->trials_per_task, "Suite: trials for each task (default: --trials)");
  tune->add_option("--budget", options->budget, "Suite: total trials (2000) or time (8h, 30m, 1h30m)");
  tune->add_option("--scheduler", options->scheduler.policy, "Suite: gradient (Ansor) or round_robin")
      ->check(CLI::IsMember({"gradient", "round_robin"}))->capture_default_str();
  tune->add_option("--rpc", options->rpc, "Measure on remote devices of KEY leased from the tracker at HOST:PORT");
  tune->add_option("--token-file", options->token_file, "--rpc: file holding the shared token");
  tune->add_option("--rpc-wait", options->rpc_wait, "--rpc: seconds to wait in the tracker's queue for a device")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  tune->callback([options, &action] { action = [options] { return run_tune(*options); }; });
}

}  // namespace optune::cli
