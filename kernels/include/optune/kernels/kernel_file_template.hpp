// A user's kernel file (kernel_file.hpp) as a template, so that everything around a measurement
// (worker isolation, checks, records, tuners, transfer, jobs) serves it as it serves optune's own
// templates. Each backend has its kernel-file template (backends/<backend>/src/kernel_file_template.cpp),
// a KernelFileTemplate<its template base> adding what it builds: the OpenCL program and launch, or
// the C++ translation unit of a shared object. What they share is KernelFileBinding.
//
// A kernel file's template is made from the file when a front end is given one (`--kernel FILE`,
// backends::kernel_file_template), never listed in the registry: its name is
// "kernel.<name>.<backend>#<digest>" (kernel_digest.hpp), its op Op::kKernel, and it applies to the workloads of its own name
// whose extents are the file's. The default config (what runs untuned, and the speed-up's
// baseline) is the first valid config in the space's order: every knob at its first listed value
// where that is valid.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

class KernelFileBinding {
 public:
  explicit KernelFileBinding(KernelSpec spec);

  const KernelSpec& spec() const { return spec_; }
  // "kernel.transpose.opencl#1a2b3c4d": the file's name, backend and digest (kernel_digest.hpp).
  const std::string& template_name() const { return template_name_; }
  bool applies(const Workload& workload, const DeviceInfo& device) const;
  // The file bound to the workload's extents on the device (made once per pair). Throws
  // std::invalid_argument (file and field named) for a workload the file cannot bind.
  const KernelProblem& problem(const Workload& workload, const DeviceInfo& device) const;
  // The workload of `--shape` text over the file's extents ("" for the file's own), with its work.
  Workload workload(std::string_view shape_text, const DeviceInfo& device) const;
  search_space::Config first_valid(const search_space::ConfigSpace& space) const;
  // What a record's gflops column holds for this file (KernelShape::work): "GFLOP/s", "GB/s" or "runs/s".
  std::string throughput_unit(const Workload& workload, const DeviceInfo& device) const;
  // A config's knob values as -D options and then the file's build options, joined by spaces.
  std::string build_options(const Workload& workload, const DeviceInfo& device, const search_space::Config& config) const;

 private:
  KernelSpec spec_;
  std::string template_name_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<KernelProblem>> problems_;  // by workload key and device id
};

// What every kernel-file template is, whatever its backend's template base.
class KernelFileSource {
 public:
  virtual ~KernelFileSource() = default;
  virtual const KernelFileBinding& binding() const = 0;
};

template <class TemplateBase>
class KernelFileTemplate : public TemplateBase, public KernelFileSource {
 public:
  explicit KernelFileTemplate(KernelSpec spec) : binding_(std::move(spec)) {}

  const KernelFileBinding& binding() const final { return binding_; }
  std::string name() const final { return binding_.template_name(); }
  Op op() const final { return Op::kKernel; }
  bool applies(const Workload& workload, const DeviceInfo& device) const final {
    return binding_.applies(workload, device);
  }
  search_space::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const final {
    return binding_.problem(workload, device).space();
  }
  search_space::Config default_config(const Workload&, const DeviceInfo&,
                                      const search_space::ConfigSpace& space) const final {
    return binding_.first_valid(space);
  }

 private:
  KernelFileBinding binding_;
};

// The text of a kernel file's source (or its reference's), for the builders that compile it;
// throws std::invalid_argument "<path>: cannot read the kernel's source".
std::string read_kernel_source(const std::filesystem::path& path);

// The kernel file behind a template, or nullptr for optune's own templates.
inline const KernelFileBinding* kernel_file_of(const KernelTemplate& kernel_template) {
  const auto* source = dynamic_cast<const KernelFileSource*>(&kernel_template);
  return source ? &source->binding() : nullptr;
}

// What a record's gflops column holds for a workload of the template: GFLOP/s for optune's own
// templates, the kernel file's unit (KernelFileBinding::throughput_unit) for a kernel file.
inline std::string throughput_unit(const KernelTemplate& kernel_template, const Workload& workload,
                                   const DeviceInfo& device) {
  const auto* file = kernel_file_of(kernel_template);
  return file ? file->throughput_unit(workload, device) : "GFLOP/s";
}

}  // namespace optune::kernels
