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

Measuring::Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote)
    : builder(make_builder(settings)), runner_owner(make_runner(settings, remote)), runner(*runner_owner) {}

}  // namespace optune::cli
