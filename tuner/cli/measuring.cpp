#include "measuring.hpp"

#include <cstdio>

#include "cli_support.hpp"
#include "optune/measure/local_builder.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/opencl_builder.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"
#include "optune/tuner/target_description.hpp"

namespace optune::cli {
namespace {

// OpenCL candidates become artifact files; CPU ones shared objects, cross-compiled for a
// `cpu:<triple>` target with its description's compiler and flags.
std::unique_ptr<measure::Builder> make_builder(const MeasureSettings& settings) {
  auto target = kernels::parse_target(settings.target);
  if (target.backend == kernels::Backend::kOpenCL)
    return std::make_unique<measure::OpenCLBuilder>(measure::OpenCLBuilderOptions{opencl_kernel_dir(), ""});
  measure::LocalBuilderOptions build;
  build.compiler = settings.compiler;
  build.include_dirs = kernel_include_dirs();
  build.jobs = settings.jobs;
  build.timeout_seconds = settings.compile_timeout;
  if (!target.is_native_cpu()) {
    try {
      auto description = tuner::find_target_description(target.triple, target_description_dirs());
      build.compiler = description.compiler;
      build.flags = description.flags;
    } catch (const tuner::TargetDescriptionError& error) {
      throw UsageError(error.what());
    }
  }
  return std::make_unique<measure::LocalBuilder>(build);
}

// Both kinds are measured in an isolated worker: this machine's, or a remote server's.
std::unique_ptr<measure::Runner> make_runner(const MeasureSettings& settings, const std::optional<Remote>& remote) {
  if (!remote)
    return std::make_unique<measure::LocalRunner>(
        measure::LocalRunnerOptions{worker_path(), settings.timing, true, opencl_cache_dir()});
  measure::rpc::RpcRunnerOptions rpc;
  rpc.tracker = remote->address.tracker;
  rpc.key = remote->address.key;
  rpc.token = remote->token;
  rpc.timing = settings.timing;
  rpc.lease_wait_seconds = settings.rpc_wait;
  rpc.log = [](const std::string& line) { std::fprintf(stderr, "optune: rpc: %s\n", line.c_str()); };
  return std::make_unique<measure::rpc::RpcRunner>(rpc);
}

}  // namespace

std::optional<Remote> find_remote(const MeasureSettings& settings) {
  if (settings.rpc.empty()) return std::nullopt;
  Remote remote{parse_rpc_address(settings.rpc), load_token(settings.token_file), {}};
  std::string target;
  try {
    target = kernels::parse_target(settings.target).str();
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
  // The server says which device it measures the target on: records carry that device.
  remote.device = remote_device(remote.address, remote.token, settings.rpc_wait, target);
  return remote;
}

RunLocks lock_for_measuring(const std::string& who, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records) {
  const std::string device_id = device.fingerprint_id();
  const std::string path = tuner::device_lock_path(database_path, device_id);
  std::string holder;
  auto device_lock = tuner::FileLock::try_acquire(path, tuner::FileLock::Mode::kExclusive, who, &holder);
  if (!device_lock && !wait_for_device)
    throw std::runtime_error(who + ": another run (" + holder + ") is measuring on device " + device_id + " (" +
                             path + "); not started (--wait-lock waits for it)");
  if (!device_lock) {
    std::fprintf(stderr, "optune: %s: waiting for another run (%s) to finish measuring on device %s\n",
                 who.c_str(), holder.c_str(), device_id.c_str());
    device_lock = tuner::FileLock::acquire(path, tuner::FileLock::Mode::kExclusive, who);
  }
  RunLocks locks{std::move(*device_lock), std::nullopt};
  // Shared with other runs writing to it; waits only while a prune holds it (seconds at most).
  if (writes_records)
    locks.database = tuner::FileLock::acquire(tuner::database_lock_path(database_path),
                                              tuner::FileLock::Mode::kShared, who);
  return locks;
}

void add_wait_lock_option(CLI::App& command, bool& wait) {
  command.add_flag("--wait-lock", wait,
                   "When another run measures on the device (same database folder), wait for it instead of exiting 1");
}

Measuring::Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote)
    : builder(make_builder(settings)), runner_owner(make_runner(settings, remote)), runner(*runner_owner) {}

}  // namespace optune::cli
