#include "optune/backends/opencl/builder.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "optune/backends/opencl/artifact.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/kernels/opencl/program_text.hpp"

namespace optune::measure {
namespace fs = std::filesystem;

Toolchain OpenCLBuilder::toolchain(const kernels::DeviceInfo& device) const {
  return {"OpenCL: " + device.platform + ", driver " + device.driver_version, ""};
}

OpenCLBuilder::OpenCLBuilder(OpenCLBuilderOptions options)
    : options_(std::move(options)), work_dir_(options_.work_dir, "opencl") {}

OpenCLBuilder::~OpenCLBuilder() = default;

const std::string& OpenCLBuilder::source_text(const std::string& file) {
  auto found = sources_.find(file);
  if (found != sources_.end()) return found->second;
  auto read = [&](const std::string& name) {
    const fs::path path = fs::path(options_.kernel_source_dir) / name;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("OpenCL kernel source " + path.string() + " not found");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  return sources_[file] = optune::opencl::with_includes(read(file), read);
}

std::vector<BuildResult> OpenCLBuilder::build(const std::vector<MeasureInput>& inputs) {
  std::vector<BuildResult> results;
  results.reserve(inputs.size());
  for (const MeasureInput& input : inputs) {
    const auto start = std::chrono::steady_clock::now();
    BuildResult result;
    try {
      const MeasureTask& task = *input.task;
      const auto kernel = kernels::as_opencl(*task.kernel_template)
                              .opencl_kernel(task.workload, task.device, search_space::ConfigView(task.space, input.config));
      OpenCLArtifact artifact{task.kernel_template->name(), task.workload.key(), kernel, source_text(kernel.source_file)};
      result.artifact = work_dir_.path() + "/candidate_" + std::to_string(next_id_++) + ".json";
      write_opencl_artifact(artifact, result.artifact);
    } catch (const EnvironmentFailure&) {
      throw;  // no candidate's fault: the run's (the batch goes unrecorded)
    } catch (const std::exception& error) {
      result = {"", ErrorKind::kBuildError, error.what(), 0};
    }
    result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace optune::measure
