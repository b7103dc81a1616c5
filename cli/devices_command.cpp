// optune devices: this machine's devices of every backend, with their fingerprints.
#include <cstdio>
#include <string>

#include "cli_support.hpp"
#include "optune/app/describe.hpp"

namespace optune::cli {
namespace {

int run_devices(const std::string& format) {
  if (format == "json") {
    std::printf("%s\n", app::describe_devices().dump(2).c_str());
    return 0;
  }
  for (const auto& backend : app::list_backend_devices()) {
    const std::string name = backend["backend"];
    if (backend["devices"].empty()) std::printf("%-8s no device found\n", name.c_str());
    for (const auto& device : backend["devices"])
      std::printf("%-8s %s  [%s]\n         %s\n", name.c_str(), device["name"].get<std::string>().c_str(),
                  device["id"].get<std::string>().c_str(), device["details"].get<std::string>().c_str());
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
