// optune space: the knobs of a template's space for a workload and target, its size, an estimate
// of how much of it is valid, and the default config.
#include <cmath>
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/describe.hpp"
#include "optune/app/output_text.hpp"

namespace optune::cli {
namespace {

struct SpaceOptions {
  std::string op = "gemm";
  std::string shape;
  std::string target = "cpu";
  std::string format = "table";
  std::string kernel_file;
};

int run_space(const SpaceOptions& options) {
  const nlohmann::json description = app::describe_space(options.op, options.shape, options.target, options.kernel_file);
  if (options.format == "json") {
    std::printf("%s\n", description.dump(2).c_str());
    return 0;
  }
  auto text = [&](const char* key) { return description[key].get<std::string>(); };
  std::printf("template  %s for %s on %s (%s)\n", text("template").c_str(), text("workload").c_str(),
              text("target").c_str(), text("device").c_str());
  const auto size = description["size"].get<std::uint64_t>();
  const double share = description["valid_share_estimate"].get<double>();
  if (description["valid_share_counted"].get<bool>())
    std::printf("size      %s, %.0f valid (%.1f%%)\n", app::counted(size, "config").c_str(),
                std::round(share * static_cast<double>(size)), share * 100);
  else if (share > 0)
    std::printf("size      %s, about %.1f%% valid (%.3g valid)\n", app::counted(size, "config").c_str(),
                share * 100, share * static_cast<double>(size));
  else  // the default config is valid: the space has some, too few for the samples to hit
    std::printf("size      %s, few valid: none in the %d sampled (the default config is one)\n",
                app::counted(size, "config").c_str(), description["valid_share_samples"].get<int>());
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
  space->add_option("--op", options->op, "Operator: " + app::operator_names())->capture_default_str();
  space->add_option("--shape", options->shape, "Shape: M,N,K or named extents");
  add_dtype_option(*space, options->shape);
  space->add_option("--kernel", options->kernel_file, "A kernel file: its space (--shape: its extents)");
  space->add_option("--target", options->target, "Target")->capture_default_str();
  space->add_option("--format", options->format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  space->callback([options, &action] { action = [options] { return run_space(*options); }; });
}

}  // namespace optune::cli
