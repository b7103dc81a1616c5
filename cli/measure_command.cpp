// optune measure: given configs of one workload (JSON, the default, pick's), built together and
// timed interleaved over --rounds, each printed with its median and the median's confidence
// interval, and recorded (tuner "measure"). Kernel Tuner's run_kernel counterpart.
#include <cstdio>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "measure_options.hpp"
#include "optune/app/measure_configs.hpp"
#include "optune/app/query.hpp"

namespace optune::cli {
namespace {

struct MeasureOptions {
  app::MeasureRequest request;
  std::string from;
  std::string format = "table";
};

nlohmann::json outcome_json(const app::MeasureOutcome& outcome) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& measured : outcome.configs)
    configs.push_back({{"source", measured.source},
                       {"config", measured.config},
                       {"interval_seconds", {measured.interval.low, measured.interval.high}},
                       {"record", app::record_json(measured.record)}});
  return {{"workload", outcome.task->workload.key()},
          {"template", outcome.task->kernel_template->name()},
          {"target", outcome.task->target.str()},
          {"device", outcome.task->device.name},
          {"rounds", outcome.rounds},
          {"configs", configs}};
}

int run_measure(MeasureOptions& options) {
  if (!options.from.empty()) options.request.from_pick = true;
  const auto outcome = app::measure_configs(options.request, install_paths(), stderr_log());
  if (options.format == "json") {
    std::printf("%s\n", outcome_json(outcome).dump(2).c_str());
  } else {
    const auto& task = *outcome.task;
    const std::string unit = app::throughput_unit(task);
    std::printf("measured   %s (%s) on %s (%s), %d interleaved rounds\n", task.workload.key().c_str(),
                task.kernel_template->name().c_str(), task.target.str().c_str(), task.device.name.c_str(), outcome.rounds);
    std::printf("%-12s %12s %25s %12s  %-13s %s\n", "source", "median ms", "95% interval ms", unit.c_str(), "status",
                "config");
    for (const auto& measured : outcome.configs) {
      const auto& r = measured.record;
      const std::string status = r.error_kind + (r.is_noisy() ? " noisy" : "");
      std::printf("%-12s %12s %25s %12s  %-13s %s\n", measured.source.c_str(),
                  r.ok() ? fmt::format("{:.4f}", r.median_seconds * 1e3).c_str() : "-",
                  r.ok() ? fmt::format("{:.4f} - {:.4f}", measured.interval.low * 1e3, measured.interval.high * 1e3).c_str()
                         : "-",
                  r.ok() ? fmt::format("{:.2f}", r.gflops).c_str() : "-", status.c_str(), r.config.dump().c_str());
      if (!r.ok()) std::printf("             %s\n", app::one_line(r.error_message).c_str());
    }
  }
  for (const auto& measured : outcome.configs)
    if (!measured.record.ok()) return 1;
  return 0;
}

}  // namespace

void add_measure_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<MeasureOptions>();
  auto& request = options->request;
  CLI::App* measure = app.add_subcommand(
      "measure", "Measure given configs of one workload, interleaved, with the interval of each median; records them");
  auto* op = measure->add_option("--op", request.op, "Operator: " + app::operator_names())->capture_default_str();
  measure->add_option("--shape", request.shape, "Shape: M,N,K or named extents (a kernel file's: N=1024)");
  add_dtype_option(*measure, request.shape);
  measure->add_option("--kernel", request.kernel_file, "A kernel file: measure that kernel instead of --op");
  measure->add_option("--template", request.template_name, "Template of the configs (default: the workload's default)");
  measure->add_option("--target", request.measuring.target, "Target: " + app::target_forms())->capture_default_str();
  measure->add_option("--config", request.configs, "A config as JSON, knob values by name (repeatable)");
  measure->add_flag("--default", request.with_default, "Measure the template's default config too");
  measure->add_option("--from", options->from, "pick: measure the config `optune pick` gives (from --db)")
      ->check(CLI::IsMember({"pick"}));
  measure->add_option("--rounds", request.rounds, "Interleaved rounds: every config timed once per round")
      ->capture_default_str()->check(whole_number(1, app::kMaxMeasureRounds));
  add_database_option(*measure, request.database, "records written; --from pick reads it");
  add_timing_options(*measure, request.measuring, "config");
  add_wait_lock_option(*measure, request.wait_lock);
  measure->add_option("--format", options->format, "table, or json: each config's record and interval")
      ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  measure->add_option("--rpc", request.measuring.rpc, "Measure on a remote device of KEY leased from the tracker at HOST:PORT");
  measure->add_option("--token-file", request.measuring.token_file, "--rpc: file holding the shared token");
  measure->callback([options, op, &action] {
    if (op->count() > 0 && !options->request.kernel_file.empty())
      throw CLI::ValidationError("--op", "does not go with --kernel (the file is the kernel)");
    action = [options] { return run_measure(*options); };
  });
}

}  // namespace optune::cli
