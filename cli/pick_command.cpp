// optune pick: the config that would run for one workload on a device and where it came from
// (tuned, nearest with the tuned shape it came from, or default), as a table or JSON.
#include <cstdio>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "optune/app/pick.hpp"

namespace optune::cli {
namespace {

struct PickOptions {
  app::PickRequest request{kDefaultDatabase};
  std::string format = "table";
};

std::string source_text(const app::Pick& pick) {
  switch (pick.source) {
    case app::PickSource::kTuned:
      return fmt::format("tuned ({:.1f} GFLOP/s measured)", pick.record->gflops);
    case app::PickSource::kDispatch:
      return fmt::format("dispatch: leaf {} of the measured rule {} over {} (the config tuned for {})",
                         pick.dispatch->leaf, pick.dispatch->rule_id, pick.dispatch->range,
                         pick.dispatch->from_workload);
    case app::PickSource::kNearest:
      if (pick.candidates == 1)
        return fmt::format("nearest: the config tuned for {} ({:.1f} GFLOP/s there), the only tuned shape whose "
                           "config fits this one", pick.record->workload_key, pick.record->gflops);
      return fmt::format("nearest: the config tuned for {} ({:.1f} GFLOP/s there), {} among {} tuned shapes whose "
                         "configs fit this one", pick.record->workload_key, pick.record->gflops,
                         pick.ranked_by_model ? "ranked first by the cost model"
                                              : "the closest shape (the cost model could not rank them)",
                         pick.candidates);
    case app::PickSource::kDefault:
      return "default (no config tuned on this device for this operator fits this shape)";
  }
  return "";
}

int run_pick(const PickOptions& options) {
  auto pick = app::pick_config(options.request);
  if (options.format == "json") {
    std::printf("%s\n", app::pick_json(pick).dump(2).c_str());
    return 0;
  }
  std::printf("workload   %s on %s (%s)\n", pick.workload.c_str(), pick.target.c_str(), pick.device.c_str());
  std::printf("source     %s\n", source_text(pick).c_str());
  std::printf("template   %s\n", pick.template_name.c_str());
  std::printf("config     %s\n", pick.config.dump().c_str());
  if (pick.record && pick.record->is_noisy()) std::printf("note       %s\n", db::noise_text(*pick.record).c_str());
  if (pick.tied_with)
    std::printf("note       tied within noise with %s (%.4f ms against %.4f ms): either may be the fastest here\n",
                pick.tied_with->config.dump().c_str(), pick.tied_with->median_seconds * 1e3,
                pick.record->median_seconds * 1e3);
  return 0;
}

}  // namespace

void add_pick_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<PickOptions>();
  CLI::App* pick = app.add_subcommand("pick", "Show the config that would run for a shape and where it came from");
  pick->add_option("--op", options->request.op, "Operator: " + app::operator_names())->required();
  pick->add_option("--shape", options->request.shape, "Shape: M,N,K or named extents (M=512,N=512,K=512)")->required();
  add_dtype_option(*pick, options->request.shape);
  pick->add_option("--target", options->request.target, "Target: " + app::target_forms())->capture_default_str();
  pick->add_option("--device", options->request.device, "Device id or part of its name (when several are recorded)");
  add_database_option(*pick, options->request.database);
  pick->add_option("--format", options->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  pick->callback([options, &action] { action = [options] { return run_pick(*options); }; });
}

}  // namespace optune::cli
