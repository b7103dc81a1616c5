// The CPU backend's host side: targets "cpu" (this machine, -march=native) and "cpu:<triple>"
// (cross-compiled with configs/targets/<triple>.toml's compiler and flags, measured on a remote
// device).
#include "optune/backends/cpu/backend.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/cpu/local_builder.hpp"
#include "optune/backends/cpu/target_description.hpp"
#include "templates.hpp"
#include "worker.hpp"

namespace optune::backends {
namespace {

class CpuBackend final : public measure::Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string target_forms() const override { return "cpu, cpu:<triple>"; }

  std::string canonical_spec(std::string_view spec) const override {
    if (spec.find_first_of(" \t:") != std::string_view::npos)
      throw std::invalid_argument("target: bad triple '" + std::string(spec) + "' (e.g. aarch64-linux-gnu)");
    return std::string(spec);
  }
  bool runs_here(const kernels::Target& target) const override { return target.spec.empty(); }

  std::vector<measure::TargetDevice> devices() const override {
    return {{kernels::Target{"cpu", ""}, measure::detect_local_cpu()}};
  }
  kernels::DeviceInfo device(const kernels::Target& target) const override {
    if (!runs_here(target))
      throw std::invalid_argument("target " + target.str() + " is measured on a remote device: give --rpc KEY@HOST:PORT");
    return measure::detect_local_cpu();
  }
  std::string details(const kernels::DeviceInfo& cpu) const override {
    std::string isa;
    for (const auto& flag : cpu.isa) isa += (isa.empty() ? "" : " ") + flag;
    return fmt::format("{} cores, {}, L1d {} KiB, L2 {} KiB, L3 {} KiB, isa: {}", cpu.cores, cpu.arch,
                       cpu.l1d_bytes / 1024, cpu.l2_bytes / 1024, cpu.l3_bytes / 1024, isa);
  }

  std::vector<const kernels::KernelTemplate*> templates() const override {
    return {&kernels::cpu_gemm_template(),        &kernels::cpu_gemm_int8_template(),
            &kernels::cpu_gemm_bf16_template(),   &kernels::cpu_conv2d_template(),
            &kernels::cpu_conv2d_gemm_template(), &kernels::cpu_conv2d_int8_template(),
            &kernels::cpu_conv2d_bf16_template(), &kernels::cpu_conv2d_int8_direct_template(),
            &kernels::cpu_conv2d_bf16_direct_template(), &kernels::cpu_depthwise_conv2d_template()};
  }

  std::optional<measure::KernelSourceDir> kernel_sources() const override {
    return measure::KernelSourceDir{OPTUNE_CPU_KERNEL_INCLUDE_DIR, OPTUNE_CPU_INSTALLED_INCLUDE_DIR,
                                    "optune/kernels/cpu/gemm.hpp"};
  }
  const kernels::KernelFileTraits* kernel_file_traits() const override { return &kernels::cpu_kernel_file_traits(); }
  std::unique_ptr<kernels::KernelTemplate> kernel_file_template(kernels::KernelSpec spec) const override {
    return kernels::cpu_kernel_file_template(std::move(spec));
  }

  std::unique_ptr<measure::WorkerBackend> make_worker() const override { return make_cpu_worker(); }

  std::unique_ptr<measure::Builder> make_builder(const kernels::Target& target,
                                                 const measure::BuildSettings& settings) const override {
    measure::LocalBuilderOptions build;
    build.compiler = settings.compiler;
    if (std::string headers = settings.kernel_sources_of(name()); !headers.empty()) build.include_dirs = {std::move(headers)};
    build.jobs = settings.jobs;
    build.timeout_seconds = settings.compile_timeout;
    // OPTUNE_PRECOMPILED_HEADERS=0: every candidate parses its headers (a benchmark's "before").
    if (const char* value = std::getenv("OPTUNE_PRECOMPILED_HEADERS"); value && std::string(value) == "0")
      build.precompiled_headers = false;
    if (!runs_here(target)) {
      auto description = measure::find_target_description(target.spec, settings.target_description_dirs);
      build.compiler = description.compiler;
      build.flags = description.flags;
    } else {
      for (std::string& flag : measure::isa_cap_flags()) build.flags.push_back(std::move(flag));
    }
    return std::make_unique<measure::LocalBuilder>(build);
  }
};

}  // namespace

const measure::Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}


}  // namespace optune::backends
