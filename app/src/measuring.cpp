#include "optune/app/measuring.hpp"

#include <filesystem>

#include "optune/app/bad_input.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/measure/device_spread_runner.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"

namespace optune::app {
namespace {

// Each backend builds its own candidates (C++ shared objects, cross-compiled for a `cpu:<triple>`
// target; artifact files of device programs).
std::unique_ptr<measure::Builder> make_builder(const MeasureSettings& settings, const kernels::Target& target,
                                              const InstallPaths& paths) {
  try {
    measure::BuildSettings build = settings.build;
    build.kernel_source_dirs = paths.kernel_source_dirs;
    build.target_description_dirs = paths.target_description_dirs;
    build.bin_dir = std::filesystem::path(paths.worker).parent_path().string();
    build.program_cache_dir = paths.program_cache_dir;
    return backends::find_backend(target.backend).make_builder(target, build);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

// Every backend is measured in an isolated worker: this machine's, or a remote server's.
std::unique_ptr<measure::Runner> make_runner(const MeasureSettings& settings, const kernels::Target& target,
                                             const InstallPaths& paths, const std::optional<Remote>& remote,
                                             std::function<void(const std::string&)> log,
                                             const std::vector<kernels::Target>& spread) {
  if (!remote) {
    if (!std::filesystem::exists(paths.worker))
      throw std::runtime_error("the measuring worker " + paths.worker + " is missing");
    measure::LocalRunnerOptions local;
    local.worker_path = paths.worker;
    local.timing = timing_for(settings, target);
    local.program_cache_dir = paths.program_cache_dir;
    if (spread.size() <= 1) return std::make_unique<measure::LocalRunner>(local);
    local.remove_artifacts = false;  // the spread runner removes them once every device is done
    std::vector<std::unique_ptr<measure::LocalRunner>> devices;
    for (const auto& device : spread) {
      local.device_target = device.str();
      devices.push_back(std::make_unique<measure::LocalRunner>(local));
    }
    return std::make_unique<measure::DeviceSpreadRunner>(std::move(devices), true);
  }
  measure::rpc::RpcRunnerOptions rpc;
  rpc.tracker = remote->address.tracker;
  rpc.key = remote->address.key;
  rpc.token = remote->token;
  rpc.timing = timing_for(settings, target);
  rpc.lease_wait_seconds = settings.rpc_wait;
  rpc.log = [log = std::move(log)](const std::string& line) {
    if (log) log("rpc: " + line);
  };
  return std::make_unique<measure::rpc::RpcRunner>(rpc);
}

}  // namespace

measure::TimingPolicy timing_for(const MeasureSettings& settings, const kernels::Target& target) {
  measure::TimingPolicy timing = settings.timing;
  if (settings.min_repeat_ms) {
    // The user's length is every measurement's, the finalists' comparison's too.
    timing.min_repeat_ms = *settings.min_repeat_ms;
    timing.comparison_min_repeat_ms = 0;
    return timing;
  }
  const measure::Backend& backend = backends::find_backend(target.backend);
  timing.min_repeat_ms = backend.default_min_repeat_ms();
  timing.comparison_min_repeat_ms = backend.comparison_min_repeat_ms();
  return timing;
}

measure::Toolchain todays_toolchain(const MeasureSettings& settings, const InstallPaths& paths,
                                    const kernels::DeviceInfo& device) {
  return make_builder(settings, parse_target_option(settings.target), paths)->toolchain(device);
}

Measuring::Measuring(const MeasureSettings& settings, const InstallPaths& paths, const std::optional<Remote>& remote,
                     std::function<void(const std::string&)> log)
    : Measuring(settings, parse_target_option(settings.target), paths, remote, std::move(log)) {}

Measuring::Measuring(const MeasureSettings& settings, const kernels::Target& target, const InstallPaths& paths,
                     const std::optional<Remote>& remote, std::function<void(const std::string&)> log,
                     const std::vector<kernels::Target>& spread)
    : builder(make_builder(settings, target, paths)),
      runner_owner(make_runner(settings, target, paths, remote, std::move(log), spread)),
      runner(*runner_owner) {}

}  // namespace optune::app
