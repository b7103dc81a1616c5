// optune tune: tunes one operator on a target (one shape, a range of shapes, or a suite) and prints
// the best config, its GFLOP/s and its speed-up over the template's default config.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "optune/app/output_text.hpp"
#include "measure_options.hpp"
#include "stop_signals.hpp"

namespace optune::cli {
namespace {

struct TuneOptions {
  app::TuneRequest request;
  bool quiet = false;
  std::string format = "table";
};

tuner::Progress make_progress(const TuneOptions& options) {
  return options.quiet ? tuner::Progress(nullptr, false) : tuner::Progress::for_stderr();
}

// Says how many trials were taken on a busy machine or with a wide spread: their figures are not
// to be trusted as they stand (query marks them).
void print_noise(std::size_t noisy, std::size_t trials, const std::optional<double>& peak_load,
                 const std::optional<double>& peak_device_load, std::size_t remeasured = 0, std::size_t now_quiet = 0) {
  if (noisy == 0) return;
  std::printf("noise      %zu of %s measured while the machine was busy or with a wide spread (marked noisy", noisy,
              app::counted(trials, "trial").c_str());
  if (peak_load && *peak_load > db::kBusyLoad)
    std::printf("; other processes took up to %.0f%% of the CPU", *peak_load * 100);
  if (peak_device_load && *peak_device_load > db::kBusyLoad)
    std::printf("; other processes took up to %.0f%% of the GPU", *peak_device_load * 100);
  std::printf(")\n");
  if (remeasured > 0)
    std::printf("           %zu that might be the best without the noise joined the closing re-measurement: %zu came out quiet\n",
                remeasured, now_quiet);
}

// Where the run's wall time went, and what the bail-out spared.
void print_time_split(const tuner::TuningSummary& summary) {
  const auto& time = summary.time;
  std::printf("time       building %s, checking %s, timing %s, choosing %s, waiting %s",
              tuner::format_duration(time.building).c_str(), tuner::format_duration(time.checking).c_str(),
              tuner::format_duration(time.timing).c_str(), tuner::format_duration(summary.overhead_seconds).c_str(),
              tuner::format_duration(summary.waiting_seconds()).c_str());
  if (time.slow > 0 || time.saved >= 1)
    std::printf("; %zu cut as slow, %s of timing saved", time.slow, tuner::format_duration(time.saved).c_str());
  if (time.reused > 0) std::printf("; %zu ran a binary built before (no compile)", time.reused);
  std::printf("\n");
}

// What follows the best's figures: its speed-up over the default as measured, with its interval,
// or why no number is given.
std::string speedup_line(const tuner::TuningSummary& summary) {
  if (summary.best_is_default()) return "no speed-up: the best config is the default";
  if (const auto compared = summary.compared_speedup()) {
    if (!compared->unreliable.empty()) return "speed-up unreliable: " + compared->unreliable;
    const auto& speedup = compared->ratio;
    return fmt::format("speed-up {} over default, {} interleaved rounds",
                       app::speedup_interval_text(speedup.value, speedup.low, speedup.high), summary.comparison->rounds);
  }
  if (summary.speedup() <= 0) return "(no speed-up to give: the default failed)";
  if (const std::string doubt = summary.records_speedup_doubt(); !doubt.empty()) return "speed-up unreliable: " + doubt;
  const char* why = summary.stopped            ? "the run was stopped"
                    : summary.comparison ? "the final comparison could not pair the default with the best"
                                         : "--remeasure 0";
  return fmt::format("speed-up {} over default (from the records, not re-measured: {})",
                     app::speedup_text(summary.speedup()), why);
}

// The final comparison's runner-up and its verdict on the winner an earlier run stored.
void print_comparison(const tuner::FinalComparison& comparison, const std::string& unit) {
  const db::TuningRecord* winner = comparison.winner();
  const db::TuningRecord* runner_up = comparison.runner_up();
  if (winner && runner_up) {
    const std::string& role = comparison.finalists[*comparison.verdict.runner_up].role;
    std::printf("runner-up  %.2f %s  %.4f ms  %s%s\n", runner_up->gflops, unit.c_str(), runner_up->median_seconds * 1e3,
                role == "default" || role == "stored winner" ? ("(the " + role + ") ").c_str() : "",
                comparison.verdict.tied ? "tied within noise with the best" : "slower than the best beyond noise");
  }
  if (comparison.verdict.kept_stored_winner)
    std::printf("note       a config measured faster was within noise of the winner stored before: that winner "
                "stays the best\n");
}

void print_summary(const TuneOptions& options, const measure::MeasureTask& task,
                   const tuner::TuningSummary& summary) {
  std::printf("workload   %s on %s (%s)\n", task.workload.key().c_str(), task.target.str().c_str(),
              task.device.name.c_str());
  std::printf("trials     %zu measured, %zu failed, in %s (tuner %s: %.1fs choosing",
              summary.trials, summary.failures, tuner::format_duration(summary.seconds).c_str(),
              summary.tuner.c_str(), summary.overhead_seconds);
  if (summary.already_recorded)
    std::printf("; %s recorded before, not measured again", app::counted(summary.already_recorded, "config").c_str());
  if (summary.transfer_records)
    std::printf(", started from %s of other shapes", app::counted(summary.transfer_records, "record").c_str());
  if (summary.other_device_records)
    std::printf(", warm-started from %s of other devices", app::counted(summary.other_device_records, "record").c_str());
  std::printf(")\n");
  print_time_split(summary);
  print_noise(summary.noisy, summary.trials, summary.peak_load, summary.peak_device_load, summary.noisy_remeasured,
              summary.noisy_now_quiet);
  if (summary.exhausted)
    std::printf("note       the tuner found no other config to measure (%s searched what it could reach)\n",
                summary.tuner.c_str());
  // A kernel file's records count its own work: GFLOP/s, GB/s or runs per second.
  const std::string unit = app::throughput_unit(task);
  if (summary.default_config && summary.default_config->ok())
    std::printf("default    %.2f %s  %.4f ms\n", summary.default_config->gflops, unit.c_str(),
                summary.default_config->median_seconds * 1e3);
  else if (summary.default_config)
    std::printf("default    failed: %s\n", summary.default_config->error_kind.c_str());
  if (!summary.best) {
    std::printf("best       no config succeeded\n");
    return;
  }
  std::printf("best       %.2f %s  %.4f ms  %s\n", summary.best->gflops, unit.c_str(),
              summary.best->median_seconds * 1e3, speedup_line(summary).c_str());
  if (summary.comparison) print_comparison(*summary.comparison, unit);
  std::printf("config     %s\n", summary.best->config.dump().c_str());
  std::printf("database   %s (run %s)\n", options.request.database.c_str(), summary.run_id.c_str());
}

// A task's speed-up column: "default" where no tuned config beat the default config, "busy" where
// the final comparison could not trust its figure.
std::string speedup_text(const tuner::TuningSummary& summary) {
  if (summary.best_is_default()) return "default";
  if (const auto compared = summary.compared_speedup()) {
    if (!compared->unreliable.empty()) return "busy";
  } else if (!summary.records_speedup_doubt().empty()) {
    return "busy";
  }
  return app::speedup_text(summary.speedup());
}

void print_suite_summary(const TuneOptions& options, const tuner::Suite& suite, const tuner::SuiteSummary& summary) {
  std::printf("suite %s: %s, %s in %s\n\n", suite.name.c_str(), app::counted(summary.tasks.size(), "task").c_str(),
              app::counted(summary.trials, "trial").c_str(), tuner::format_duration(summary.seconds).c_str());
  std::printf("%-22s %5s %6s %12s %12s %9s %8s\n", "task", "count", "trials", "default ms", "tuned ms",
              "GFLOP/s", "speed-up");
  for (const auto& task : summary.tasks) {
    const auto& s = task.summary;
    auto ms = [](const std::optional<db::TuningRecord>& r) {
      return r && r->ok() ? fmt::format("{:.4f}", r->median_seconds * 1e3) : std::string(r ? "failed" : "-");
    };
    std::printf("%-22s %5d %6zu %12s %12s %9s %8s\n", task.entry.name.c_str(), task.entry.count, s.trials,
                ms(s.default_config).c_str(), ms(s.best).c_str(),
                s.best ? fmt::format("{:.1f}", s.best->gflops).c_str() : "-", speedup_text(s).c_str());
  }
  std::printf("\nnetwork latency, estimated as the sum of count x latency: default %.3f ms, tuned %.3f ms, "
              "speed-up %s\n", summary.default_seconds * 1e3, summary.tuned_seconds * 1e3,
              app::speedup_text(summary.default_seconds, summary.tuned_seconds).c_str());
  std::size_t noisy = 0;
  std::optional<double> peak_load, peak_device_load;
  for (const auto& task : summary.tasks) {
    noisy += task.summary.noisy;
    if (task.summary.peak_load) peak_load = std::max(peak_load.value_or(0), *task.summary.peak_load);
    if (task.summary.peak_device_load)
      peak_device_load = std::max(peak_device_load.value_or(0), *task.summary.peak_device_load);
  }
  print_noise(noisy, summary.trials, peak_load, peak_device_load);
  for (const auto& task : summary.tasks)
    if (speedup_text(task.summary) == "busy") {
      std::printf("busy: a speed-up left out is unreliable: the machine was busy while it was re-measured\n");
      break;
    }
  std::printf("database %s\n", options.request.database.c_str());
}

// How a range's budget is spent: its shapes, and the trials each gets.
void print_range_plan(const app::TunePlan& plan) {
  std::string listed, split;
  for (const auto& shape : plan.shapes) {
    listed += (listed.empty() ? "" : "; ") + shape.shape;
    split += (split.empty() ? "" : ", ") + std::to_string(shape.tuning.trials);
  }
  const std::size_t shapes = plan.shapes.size();
  const std::string fewer = shapes < plan.range_points
                                ? fmt::format(" ({} of its {}: each shape needs a trial)", shapes, plan.range_points)
                                : "";
  std::printf("range %s: %zu representative shapes (%s)%s; --trials %zu split %s among them, each shape's default "
              "config measured besides\n\n",
              plan.range.c_str(), shapes, listed.c_str(), fewer.c_str(), plan.range_trials, split.c_str());
}

// How a run stopped by a signal ends: what was kept and how to go on.
void print_stopped(const TuneOptions& options, std::size_t trials) {
  std::printf("stopped    by signal %d after the batch in flight: %s of this run recorded in %s; run the "
              "same command again to continue (configs already measured are skipped)\n",
              StopOnSignals::first_signal(), app::counted(trials, "trial").c_str(), options.request.database.c_str());
}

int run_tune(const TuneOptions& given) {
  TuneOptions options = given;
  // Ctrl-C stops after the batch in flight, which is recorded; a second one stops at once.
  options.request.stop = &StopOnSignals::stop_requested();
  StopOnSignals signals([&options](int signal) {
    std::fprintf(stderr,
                 "\noptune: stopped at once by a second signal %d; the batches before this one are recorded in %s; "
                 "run the same command again to continue\n",
                 signal, options.request.database.c_str());
  });
  const bool json = options.format == "json";
  const app::TunePlan plan = app::plan_tune(options.request);
  if (plan.kind == app::TuneKind::kRange && !json) print_range_plan(plan);
  auto progress = make_progress(options);
  const app::TuneOutcome outcome = app::run(plan, install_paths(), progress, stderr_log());
  if (json) {
    std::printf("%s\n", app::outcome_json(outcome).dump(2).c_str());
  } else if (outcome.suite) {
    print_suite_summary(options, outcome.suite->suite, outcome.suite->summary);
  } else {
    for (const auto& shape : outcome.shapes) {
      print_summary(options, *shape.task, shape.summary);
      if (plan.kind == app::TuneKind::kRange) std::printf("\n");
    }
  }
  if (!outcome.devices.empty() && !json) {
    std::string shares;
    for (const auto& device : outcome.devices)
      shares += fmt::format("{}{} {}", shares.empty() ? "" : ", ", device.target, device.candidates);
    std::printf("measured on %zu devices at once (candidates each: %s)\n", outcome.devices.size(), shares.c_str());
  }
  if (outcome.stopped()) {
    if (!json) print_stopped(options, outcome.trials());
    return 128 + StopOnSignals::first_signal();
  }
  if (outcome.suite) return std::isnan(outcome.suite->summary.tuned_seconds) ? 1 : 0;
  const bool every_shape_tuned =
      std::all_of(outcome.shapes.begin(), outcome.shapes.end(), [](const auto& shape) { return shape.summary.best.has_value(); });
  if (plan.kind == app::TuneKind::kRange && !json) {
    if (options.request.kernel_file.empty())
      std::printf("every shape in %s now runs the config of its nearest tuned shape (optune pick shows it)\n",
                  plan.range.c_str());
    else
      std::printf("the sizes' best configs are in the database: optune apply-best --kernel %s writes their table\n",
                  options.request.kernel_file.c_str());
  }
  return every_shape_tuned ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand("tune", "Tune one operator on a target; every measurement goes to the database");
  auto* op = tune->add_option("--op", options->request.op, "Operator: " + app::operator_names())->capture_default_str();
  tune->add_option("--shape", options->request.shape,
                   "Shape: M,N,K or named extents (M=512,N=512,K=512); a convolution's may name its layout "
                   "(...,layout=nchw8c); an extent may be a range LOW..HIGH (M=1..512,N=768,K=768): a few "
                   "representative shapes of it are tuned, --trials split among them");
  add_dtype_option(*tune, options->request.shape, &options->request.dtype);
  add_layout_option(*tune, options->request.layout);
  tune->add_option("--kernel", options->request.kernel_file,
                   "A kernel file (configs/kernels/*.toml): tune that kernel instead of --op; --shape sets its "
                   "extents (N=1024,M=512), default the file's");
  tune->add_option("--template", options->request.template_name,
                   "Template to tune (default: the workload's default; e.g. conv2d.cpu, conv2d_gemm.cpu)");
  tune->add_option("--target", options->request.measuring.target,
                   "Target: " + app::target_forms() +
                       "; cuda:all or cuda:0,1 measure on several GPUs of one model at once")
      ->capture_default_str();
  tune->add_option("--tuner", options->request.tuning.tuner.name, "Tuner: xgb (model-based), ga (genetic), random, grid")->capture_default_str();
  tune->add_option("--trials", options->request.tuning.trials, "Configs to measure (the budget)")
      ->capture_default_str()->check(whole_number(1, app::kMaxTrials));
  tune->add_option("--batch-size", options->request.tuning.batch_size, "Configs built and measured per batch (not given: as many for each device of a target of several, cuda:all)")
      ->capture_default_str()->check(whole_number(1, 4096));
  tune->add_option("--early-stopping", options->request.tuning.early_stopping,
                   "Stop after this many trials without improvement (0: never)")
      ->capture_default_str()->check(whole_number(0, app::kMaxTrials));
  tune->add_option("--remeasure", options->request.tuning.remeasure_top, "Best configs measured again at the end")
      ->capture_default_str()->check(whole_number(0, 1000));
  tune->add_option_function<std::string>(
          "--objective",
          [options](const std::string& name) { options->request.tuning.tuner.objective = cost_model::parse_objective(name); },
          "xgb: cost model objective")
      ->check(CLI::IsMember({"rank:pairwise", "reg:squarederror"}))
      ->default_str(std::string(cost_model::objective_name(options->request.tuning.tuner.objective)));
  tune->add_option("--cheap-share", options->request.tuning.tuner.cheap_share,
                   "xgb: share of each batch among run-time variants of the best configs, which run on objects "
                   "built already (no compile); 0: none")
      ->capture_default_str()->check(finite_number(0.0, 1.0));
  tune->add_option("--compile-ahead", options->request.compile_ahead,
                   "Build each batch while the one before it is measured, the tuner's model one batch behind (auto: "
                   "for CUDA GPUs; on: also for a CPU on a remote server, which must not be this machine)")
      ->check(CLI::IsMember({"auto", "on", "off"}))->capture_default_str();
  tune->add_flag("--no-transfer", [options](std::int64_t) { options->request.tuning.tuner.transfer = false; },
                 "xgb: do not start from records of other shapes or of other devices");
  tune->add_option("--seed", options->request.tuning.tuner.seed, "Seed of the tuner's random choices")
      ->capture_default_str()->check(whole_number(0, std::numeric_limits<std::int64_t>::max()));
  add_database_option(*tune, options->request.database);
  add_timing_options(*tune, options->request.measuring, "candidate");
  tune->add_flag("--quiet", options->quiet, "No progress display");
  tune->add_option("--format", options->format,
                   "table, or json: the outcome's fields as Python's optune.tune returns them (the speed-up, its "
                   "interval and the final comparison included)")
      ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  add_wait_lock_option(*tune, options->request.wait_lock);
  tune->add_option("--suite", options->request.suite, "Tune every workload of a suite file (configs/workloads/*.toml)");
  tune->add_option("--trials-per-task", options->request.trials_per_task, "Suite: trials for each task (default: --trials)")
      ->check(whole_number(1, app::kMaxTrials));
  auto* trials = tune->get_option("--trials");
  auto* batch_size = tune->get_option("--batch-size");
  tune->add_option("--budget", options->request.budget,
                   "Total trials (2000) or time (8h, 30m, 1h30m, 90s): of a suite, or of one workload, where a time "
                   "alone bounds the run unless --trials is given too");
  tune->add_option_function<std::string>(
          "--scheduler",
          [options](const std::string& name) { options->request.scheduler.policy = tuner::parse_scheduler_policy(name); },
          "Suite: gradient (Ansor) or round_robin")
      ->check(CLI::IsMember({"gradient", "round_robin"}))
      ->default_str(std::string(tuner::scheduler_policy_name(options->request.scheduler.policy)));
  tune->add_option("--rpc", options->request.measuring.rpc, "Measure on remote devices of KEY leased from the tracker at HOST:PORT");
  tune->add_option("--token-file", options->request.measuring.token_file, "--rpc: file holding the shared token");
  tune->add_option("--rpc-wait", options->request.measuring.rpc_wait, "--rpc: seconds to wait in the tracker's queue for a device, and for a tracker that "
                   "cannot be reached (restarting)")
      ->capture_default_str()->check(finite_number(0.0, 86400.0));
  tune->callback([options, op, trials, batch_size, &action] {
    if (op->count() > 0 && !options->request.kernel_file.empty())
      throw CLI::ValidationError("--op", "does not go with --kernel (the file is the kernel)");
    options->request.trials_given = trials->count() > 0;
    options->request.batch_size_given = batch_size->count() > 0;
    action = [options] { return run_tune(*options); };
  });
}

}  // namespace optune::cli
