// The OpenCL backend's template of a user's kernel file (kernels/kernel_file_template.hpp): the
// file's source compiled with a config's knobs as -D options, launched with the file's sizes; the
// artifact carries the source text, so a remote server needs nothing of the file.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/measure/kernel_operands.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

std::array<std::size_t, 3> sizes(const std::array<std::int64_t, 3>& values) {
  return {static_cast<std::size_t>(values[0]), static_cast<std::size_t>(values[1]), static_cast<std::size_t>(values[2])};
}

class OpenCLKernelFileTemplate final : public KernelFileTemplate<OpenCLTemplate> {
 public:
  using KernelFileTemplate::KernelFileTemplate;

  OpenCLKernel opencl_kernel(const Workload& workload, const DeviceInfo& device,
                             const search_space::ConfigView& config) const override {
    const KernelProblem& problem = binding().problem(workload, device);
    const LaunchSize launch = problem.launch(config.config());
    OpenCLKernel kernel;
    kernel.source_file = problem.spec().source.string();  // absolute: the builder reads it as it is
    kernel.kernel_name = problem.spec().entry;
    kernel.build_options = binding().build_options(workload, device, config.config());
    kernel.dimensions = launch.dimensions;
    kernel.global_size = sizes(launch.global);
    kernel.local_size = sizes(launch.local);
    return kernel;
  }

  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const search_space::ConfigView& config) const override {
    return "// build options: " + binding().build_options(workload, device, config.config()) + "\n" +
           read_kernel_source(binding().spec().source);
  }

  // The reference is built with the default config's defines (any valid config's would do).
  std::optional<nlohmann::json> worker_operands(const Workload& workload, const DeviceInfo& device) const override {
    const KernelProblem& problem = binding().problem(workload, device);
    std::string source, options;
    if (problem.spec().check.kind == KernelCheck::Kind::kReference) {
      source = read_kernel_source(problem.spec().check.reference_source);
      options = binding().build_options(workload, device, binding().first_valid(problem.space()));
    }
    return nlohmann::json(measure::kernel_operands_spec(problem, source, options));
  }
};

}  // namespace

std::unique_ptr<KernelTemplate> opencl_kernel_file_template(KernelSpec spec) {
  return std::make_unique<OpenCLKernelFileTemplate>(std::move(spec));
}

}  // namespace optune::kernels
