#include "optune/app/measuring.hpp"

#include <filesystem>

#include "optune/app/bad_input.hpp"
#include "optune/measure/local_builder.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/opencl_builder.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"
#include "optune/tuner/jobs/target_description.hpp"

namespace optune::app {
namespace {

// OpenCL candidates become artifact files; CPU ones shared objects, cross-compiled for a
// `cpu:<triple>` target with its description's compiler and flags.
std::unique_ptr<measure::Builder> make_builder(const MeasureSettings& settings, const InstallPaths& paths) {
  kernels::Target target;
  try {
    target = kernels::parse_target(settings.target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  if (target.backend == kernels::Backend::kOpenCL)
    return std::make_unique<measure::OpenCLBuilder>(measure::OpenCLBuilderOptions{paths.opencl_kernel_dir, ""});
  measure::LocalBuilderOptions build;
  build.compiler = settings.compiler;
  build.include_dirs = paths.kernel_include_dirs;
  build.jobs = settings.jobs;
  build.timeout_seconds = settings.compile_timeout;
  if (!target.is_native_cpu()) {
    try {
      auto description = tuner::find_target_description(target.triple, paths.target_description_dirs);
      build.compiler = description.compiler;
      build.flags = description.flags;
    } catch (const tuner::TargetDescriptionError& error) {
      throw BadInput(error.what());
    }
  }
  return std::make_unique<measure::LocalBuilder>(build);
}

// Both kinds are measured in an isolated worker: this machine's, or a remote server's.
std::unique_ptr<measure::Runner> make_runner(const MeasureSettings& settings, const InstallPaths& paths,
                                             const std::optional<Remote>& remote,
                                             std::function<void(const std::string&)> log) {
  if (!remote) {
    if (!std::filesystem::exists(paths.worker))
      throw std::runtime_error("the measuring worker " + paths.worker + " is missing");
    measure::LocalRunnerOptions local;
    local.worker_path = paths.worker;
    local.timing = settings.timing;
    local.opencl_cache_dir = paths.opencl_cache_dir;
    return std::make_unique<measure::LocalRunner>(local);
  }
  measure::rpc::RpcRunnerOptions rpc;
  rpc.tracker = remote->address.tracker;
  rpc.key = remote->address.key;
  rpc.token = remote->token;
  rpc.timing = settings.timing;
  rpc.lease_wait_seconds = settings.rpc_wait;
  rpc.log = [log = std::move(log)](const std::string& line) {
    if (log) log("rpc: " + line);
  };
  return std::make_unique<measure::rpc::RpcRunner>(rpc);
}

}  // namespace

Measuring::Measuring(const MeasureSettings& settings, const InstallPaths& paths, const std::optional<Remote>& remote,
                     std::function<void(const std::string&)> log)
    : builder(make_builder(settings, paths)),
      runner_owner(make_runner(settings, paths, remote, std::move(log))),
      runner(*runner_owner) {}

}  // namespace optune::app
