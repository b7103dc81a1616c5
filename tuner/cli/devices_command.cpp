// optune devices: this machine's CPU and every OpenCL device, with their fingerprints.
#include <cstdio>
#include <string>

#include "cli_support.hpp"
#include "optune/app/describe.hpp"
#include "optune/measure/cpu_device.hpp"
#include "optune/measure/opencl_devices.hpp"

namespace optune::cli {
namespace {

int run_devices(const std::string& format) {
  if (format == "json") {
    std::printf("%s\n", app::describe_devices().dump(2).c_str());
    return 0;
  }
  auto cpu = measure::detect_local_cpu();
  auto opencl = measure::list_opencl_devices();
  std::string isa;
  for (const auto& flag : cpu.isa) isa += (isa.empty() ? "" : " ") + flag;
  std::printf("cpu      %s  [%s]\n         %d cores, %s, L1d %lld KiB, L2 %lld KiB, L3 %lld KiB, isa: %s\n",
              cpu.name.c_str(), cpu.fingerprint_id().c_str(), cpu.cores, cpu.arch.c_str(),
              static_cast<long long>(cpu.l1d_bytes / 1024), static_cast<long long>(cpu.l2_bytes / 1024),
              static_cast<long long>(cpu.l3_bytes / 1024), isa.c_str());
  if (opencl.empty()) std::printf("opencl   no OpenCL platform found\n");
  for (const auto& device : opencl) {
    // NVIDIA's compute capability decides whether GEMMs get the tensor-core kernel.
    const int capability = device.nvidia_compute_capability();
    const std::string nvidia = capability > 0 ? ", compute capability " + std::to_string(capability / 10) + "." +
                                                    std::to_string(capability % 10)
                                              : "";
    std::printf("opencl   %s / %s  [%s]\n         %d compute units, local memory %lld KiB, max work-group %lld, driver %s%s\n",
                device.platform.c_str(), device.name.c_str(), device.fingerprint_id().c_str(), device.cores,
                static_cast<long long>(device.local_mem_bytes / 1024),
                static_cast<long long>(device.max_work_group_size), device.driver_version.c_str(), nvidia.c_str());
  }
  return 0;
}

}  // namespace

void add_devices_command(CLI::App& app, CommandAction& action) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* devices = app.add_subcommand("devices", "List this machine's CPU and OpenCL devices with their fingerprints");
  devices->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  devices->callback([format, &action] { action = [format] { return run_devices(*format); }; });
}

}  // namespace optune::cli
