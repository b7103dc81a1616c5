// optune devices: this machine's devices of every backend, with their fingerprints.
#include <cstdio>
#include <string>

#include "cli_support.hpp"
#include "optune/app/describe.hpp"
#include "optune/backends/registry.hpp"

namespace optune::cli {
namespace {

int run_devices(const std::string& format) {
  if (format == "json") {
    std::printf("%s\n", app::describe_devices().dump(2).c_str());
    return 0;
  }
  for (const auto* backend : backends::all_backends()) {
    const auto devices = backend->devices();
    if (devices.empty()) std::printf("%-8s no device found\n", std::string(backend->name()).c_str());
    for (const auto& [target, device] : devices) {
      const std::string name = device.platform.empty() ? device.name : device.platform + " / " + device.name;
      std::printf("%-8s %s  [%s]\n         %s\n", std::string(backend->name()).c_str(), name.c_str(),
                  device.fingerprint_id().c_str(), backend->details(device).c_str());
    }
  }
  return 0;
}

}  // namespace

void add_devices_command(CLI::App& app, CommandAction& action) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* devices = app.add_subcommand("devices", "List this machine's devices of every backend with their fingerprints");
  devices->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  devices->callback([format, &action] { action = [format] { return run_devices(*format); }; });
}

}  // namespace optune::cli
