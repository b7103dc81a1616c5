// optune tune: tunes one operator on a target and prints the best config, its GFLOP/s and its
// speed-up over the template's default config.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "optune/measure/local_builder.hpp"
#include "optune/measure/local_runner.hpp"
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
};

void print_summary(const TuneOptions& options, const measure::MeasureTask& task,
                   const tuner::TuningSummary& summary) {
  std::printf("workload   %s on %s (%s)\n", task.workload.key().c_str(), task.target.str().c_str(),
              task.device.name.c_str());
  std::printf("trials     %zu measured, %zu failed, in %s (tuner %s: %.1fs choosing",
              summary.trials, summary.failures, tuner::format_duration(summary.seconds).c_str(),
              summary.tuner.c_str(), summary.overhead_seconds);
  if (summary.transfer_records) std::printf(", started from %zu records of other shapes", summary.transfer_records);
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

int run_tune(const TuneOptions& options) {
  if (options.shape.empty()) throw UsageError("tune: --shape is required (e.g. --shape 512,512,512)");
  if (options.tuning.trials == 0) throw UsageError("tune: --trials must be at least 1");
  tuner::check_tuner_name(options.tuning.tuner.name);
  auto task = make_task(options.op, options.shape, options.target);
  auto database = open_database(options.database, db::Database::Mode::kReadWrite);

  measure::LocalBuilderOptions build;
  build.compiler = options.compiler;
  build.include_dirs = kernel_include_dirs();
  build.jobs = options.jobs;
  build.timeout_seconds = options.compile_timeout;
  measure::LocalBuilder builder(build);
  measure::LocalRunner runner({worker_path(), options.timing, true});
  tuner::Progress progress = options.quiet ? tuner::Progress(nullptr, false) : tuner::Progress::for_stderr();
  tuner::TuningLoop loop(builder, runner, database, progress);
  auto summary = loop.run(task, options.tuning);
  print_summary(options, *task, summary);
  return summary.best ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand("tune", "Tune one operator on a target; every measurement goes to the database");
  tune->add_option("--op", options->op, "Operator: gemm, conv2d, depthwise_conv2d")->capture_default_str();
  tune->add_option("--shape", options->shape, "Shape: M,N,K or named extents (M=512,N=512,K=512)");
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
                 "xgb: do not start from records of other shapes");
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
  tune->callback([options, &action] { action = [options] { return run_tune(*options); }; });
}

}  // namespace optune::cli
