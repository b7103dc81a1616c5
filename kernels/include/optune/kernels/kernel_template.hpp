// KernelTemplate: one schedule template per (op, backend). It declares the knobs of its space for
// a workload and device, gives the default config (what a user gets without tuning), and emits
// the source of one candidate. Keeping all of that in one file per template (see the
// implementations in kernels/src) lets a reader see the whole template at once.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels {

// The symbol every CPU candidate shared object exports. Shapes are compile-time constants of the
// candidate; inputs are in the order of reference.hpp's input_sizes().
inline constexpr const char* kCandidateSymbol = "optune_kernel";
using CandidateFunction = void (*)(const float* const* inputs, float* output);

// How an OpenCL candidate is built and launched: one .cl file of kernels/opencl (installed under
// share/optune/opencl), compiled with the config's knobs as -D build options. Arguments are the
// op's inputs in reference.hpp's order, then the output, all global float buffers.
struct OpenCLKernel {
  std::string source_file;    // e.g. "gemm.cl"
  std::string kernel_name;    // e.g. "optune_gemm"
  std::string build_options;  // "-DMWG=64 -DNWG=64 ... -cl-mad-enable"
  std::array<std::size_t, 3> global_size{1, 1, 1};
  std::array<std::size_t, 3> local_size{1, 1, 1};
  int dimensions = 1;
  // The kernel adds into the output (work-groups that split a reduction, with atomics): every
  // launcher fills the output with zeros right before each launch, and the fill is part of the
  // call, so a measurement times both.
  bool zero_output = false;
};

class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;

  virtual std::string name() const = 0;  // stable, stored in records: "gemm.cpu", ...
  virtual Op op() const = 0;
  virtual Backend backend() const = 0;

  virtual search_space::ConfigSpace space(const Workload& workload,
                                          const DeviceInfo& device) const = 0;
  virtual search_space::Config default_config(const Workload& workload, const DeviceInfo& device,
                                              const search_space::ConfigSpace& space) const = 0;
  // CPU: a C++ translation unit defining extern "C" kCandidateSymbol with CandidateFunction's
  // signature, which instantiates the same header a build-time consumer includes.
  virtual std::string emit_source(const Workload& workload, const DeviceInfo& device,
                                  const search_space::ConfigView& config) const = 0;

  // OpenCL templates: the program and launch of one candidate; emit_source gives the same
  // program as text (the defines, then the .cl file's name) for people to read.
  virtual std::optional<OpenCLKernel> opencl_kernel(const Workload& /*workload*/,
                                                    const DeviceInfo& /*device*/,
                                                    const search_space::ConfigView& /*config*/) const {
    return std::nullopt;
  }

  // Features of a config that the knob values alone do not show, for the cost model: bytes moved
  // per tile, tile footprint against the caches, arithmetic intensity, register tile size, work
  // per thread, share of work wasted on edges. Names are stable; the same list for every config
  // and every shape of this template, so one model serves several shapes.
  // Build-time consumption (`optune apply-best`): how the template's tuned configs appear in a
  // generated header. Templates without a build-time form return nullopt.
  struct TableForm {
    std::string include;        // header defining the row type and the dispatcher
    std::string row_type;       // e.g. "optune::kernels::cpu::TunedGemm"
    std::string config_type;    // e.g. "optune::kernels::cpu::GemmConfig"
    std::string table_name;     // e.g. "kGemm"; the default config is table_name + "Default"
    std::string default_shape;  // the shape whose default config serves untuned shapes
    // The application's call, defined after the tables in namespace optune (e.g. optune::gemm),
    // dispatching through them: the tuned config of the shape, else the default.
    std::string entry_point;
    // OpenCL: the default config is chosen at run time for each shape and device (the program is
    // compiled then anyway), so the header has no default constant, only a note of it.
    bool default_at_run_time = false;
  };
  virtual std::optional<TableForm> table_form() const { return std::nullopt; }
  // One row of the table: a C++ initializer of row_type for the workload and config.
  virtual std::string table_row(const Workload& /*workload*/, const DeviceInfo& /*device*/,
                                const search_space::ConfigView& /*config*/) const {
    return "";
  }
  // The config as a C++ expression of config_type (CPU templates).
  virtual std::string config_literal(const search_space::ConfigView& /*config*/) const { return ""; }

  virtual std::vector<std::pair<std::string, double>> derived_features(
      const Workload& /*workload*/, const DeviceInfo& /*device*/,
      const search_space::ConfigView& /*config*/) const {
    return {};
  }
};

// The templates optune knows; find_template throws std::invalid_argument naming op and backend.
const KernelTemplate& find_template(Op op, Backend backend);
std::vector<const KernelTemplate*> all_templates();

}  // namespace optune::kernels
