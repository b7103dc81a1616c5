// The CUDA backend's template of a user's kernel file (kernels/kernel_file_template.hpp): the
// file's source compiled by NVRTC with a config's knobs as -D options (and templated entries
// instantiated with them), launched with the file's grid, block and dynamic shared memory. A
// check reference in another file is included after the source, so one module holds both.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "cuda_template.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/measure/kernel_operands.hpp"
#include "templates.hpp"

namespace optune::backends::cuda {
namespace {

class CudaKernelFileTemplate final : public kernels::KernelFileTemplate<CudaTemplate> {
 public:
  using KernelFileTemplate::KernelFileTemplate;

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                         const search_space::ConfigView& config) const override {
    const kernels::KernelProblem& problem = binding().problem(workload, device);
    const kernels::KernelSpec& spec = problem.spec();
    CudaKernel kernel;
    kernel.source = kernels::read_kernel_source(spec.source);
    kernel.program_name = spec.source.filename().string();
    kernel.include_dir = spec.source.parent_path();
    kernel.options = problem.build_options(config.config());
    kernel.entry = problem.entry(config.config());
    kernel.launch = problem.launch(config.config());
    if (spec.check.kind == kernels::KernelCheck::Kind::kReference) {
      kernel.reference_entry = problem.reference_entry(config.config());
      if (spec.check.reference_source != spec.source)
        kernel.source += fmt::format("\n#include \"{}\"\n", spec.check.reference_source.string());
    }
    return kernel;
  }

  std::string emit_source(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                          const search_space::ConfigView& config) const override {
    const CudaKernel kernel = cuda_kernel(workload, device, config);
    return fmt::format("// NVRTC options: {}\n// entry: {}\n{}", fmt::join(kernel.options, " "), kernel.entry,
                       kernel.source);
  }

  // The reference is in the candidate's module (the artifact names its symbol).
  std::optional<nlohmann::json> worker_operands(const kernels::Workload& workload,
                                                const kernels::DeviceInfo& device) const override {
    return nlohmann::json(measure::kernel_operands_spec(binding().problem(workload, device), "", ""));
  }
};

}  // namespace

std::unique_ptr<kernels::KernelTemplate> cuda_kernel_file_template(kernels::KernelSpec spec) {
  return std::make_unique<CudaKernelFileTemplate>(std::move(spec));
}

}  // namespace optune::backends::cuda
