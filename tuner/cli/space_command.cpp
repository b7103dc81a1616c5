// optune space: the knobs of a template's space for a workload and target, its size, an estimate
// of how much of it is valid, and the default config.
#include <cstdio>
#include <random>

#include "cli_support.hpp"

namespace optune::cli {
namespace {

struct SpaceOptions {
  std::string op = "gemm";
  std::string shape;
  std::string target = "cpu";
  std::string format = "table";
};

// Share of valid configs, from uniform index samples (the space is never enumerated).
double estimate_valid_share(const search_space::ConfigSpace& space) {
  constexpr int kSamples = 20000;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> index(0, space.size() - 1);
  int valid = 0;
  for (int i = 0; i < kSamples; ++i) valid += space.is_valid(space.from_index(index(rng)));
  return static_cast<double>(valid) / kSamples;
}

int run_space(const SpaceOptions& options) {
  if (options.shape.empty()) throw UsageError("space: --shape is required");
  auto task = make_task(options.op, options.shape, options.target);
  const auto& space = task->space;
  auto default_config = task->kernel_template->default_config(task->workload, task->device, space);
  double share = estimate_valid_share(space);
  nlohmann::json description = {
      {"workload", task->workload.key()},
      {"template", task->kernel_template->name()},
      {"target", task->target.str()},
      {"device", task->device.name},
      {"size", space.size()},
      {"valid_share_estimate", share},
      {"knobs", space.describe()},
      {"default_config", space.to_json(default_config)},
  };
  if (options.format == "json") {
    std::printf("%s\n", description.dump(2).c_str());
    return 0;
  }
  std::printf("template  %s for %s on %s (%s)\n", task->kernel_template->name().c_str(),
              task->workload.key().c_str(), task->target.str().c_str(), task->device.name.c_str());
  std::printf("size      %llu configs, about %.1f%% valid (%.3g valid)\n",
              static_cast<unsigned long long>(space.size()), share * 100, share * static_cast<double>(space.size()));
  std::printf("knobs\n");
  for (const auto& knob : description["knobs"]) {
    std::string preview = knob.contains("preview") ? knob["preview"].dump() : "";
    std::printf("  %-14s %-12s %6llu options  %s\n", knob.value("name", "").c_str(),
                knob.value("kind", "").c_str(),
                static_cast<unsigned long long>(knob.value("option_count", std::uint64_t{0})), preview.c_str());
  }
  std::printf("default   %s\n", description["default_config"].dump().c_str());
  return 0;
}

}  // namespace

void add_space_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<SpaceOptions>();
  CLI::App* space = app.add_subcommand("space", "Show a template's knobs, space size and default config");
  space->add_option("--op", options->op, "Operator: gemm, conv2d, depthwise_conv2d")->capture_default_str();
  space->add_option("--shape", options->shape, "Shape: M,N,K or named extents");
  space->add_option("--target", options->target, "Target")->capture_default_str();
  space->add_option("--format", options->format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  space->callback([options, &action] { action = [options] { return run_space(*options); }; });
}

}  // namespace optune::cli
