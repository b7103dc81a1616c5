// The OpenCL backend's host side.
#include "optune/backends/opencl/backend.hpp"

#include <fmt/format.h>

#include "optune/backends/opencl/builder.hpp"
#include "optune/backends/opencl/devices.hpp"
#include "templates.hpp"
#include "worker.hpp"

namespace optune::backends {
namespace {

class OpenCLBackend final : public measure::Backend {
 public:
  std::string_view name() const override { return "opencl"; }
  std::string target_forms() const override { return "opencl, opencl:<platform>:<device>"; }
  std::string canonical_spec(std::string_view spec) const override { return measure::parse_opencl_spec(spec).spec(); }

  std::vector<measure::TargetDevice> devices() const override {
    std::vector<measure::TargetDevice> devices;
    for (auto& device : measure::list_opencl_devices())
      devices.push_back({kernels::Target{"opencl", device.platform + ":" + device.name}, device});
    return devices;
  }
  kernels::DeviceInfo device(const kernels::Target& target) const override {
    return measure::find_opencl_device(target);
  }
  std::string details(const kernels::DeviceInfo& device) const override {
    // NVIDIA's compute capability decides whether GEMMs get the tensor-core kernel.
    const int capability = device.nvidia_compute_capability();
    const std::string nvidia =
        capability > 0 ? fmt::format(", compute capability {}.{}", capability / 10, capability % 10) : "";
    return fmt::format("{} compute units, local memory {} KiB, max work-group {}, driver {}{}", device.cores,
                       device.local_mem_bytes / 1024, device.max_work_group_size, device.driver_version, nvidia);
  }

  std::vector<const kernels::KernelTemplate*> templates() const override {
    std::vector<const kernels::KernelTemplate*> all;
    for (const auto* kernel_template : kernels::opencl_templates()) all.push_back(kernel_template);
    return all;
  }

  std::optional<measure::KernelSourceDir> kernel_sources() const override {
    return measure::KernelSourceDir{OPTUNE_OPENCL_KERNEL_SOURCE_DIR, OPTUNE_OPENCL_INSTALLED_KERNEL_SOURCE_DIR, "gemm.cl"};
  }
  const kernels::KernelFileTraits* kernel_file_traits() const override { return &kernels::opencl_kernel_file_traits(); }
  std::unique_ptr<kernels::KernelTemplate> kernel_file_template(kernels::KernelSpec spec) const override {
    return kernels::opencl_kernel_file_template(std::move(spec));
  }

  std::unique_ptr<measure::WorkerBackend> make_worker() const override { return make_opencl_worker(); }

  std::unique_ptr<measure::Builder> make_builder(const kernels::Target&,
                                                 const measure::BuildSettings& settings) const override {
    return std::make_unique<measure::OpenCLBuilder>(measure::OpenCLBuilderOptions{settings.kernel_sources_of(name()), ""});
  }
};

}  // namespace

const measure::Backend& opencl_backend() {
  static const OpenCLBackend backend;
  return backend;
}


}  // namespace optune::backends
