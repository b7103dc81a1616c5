// What the OpenCL templates (gemm.opencl, conv2d.opencl, depthwise_conv2d.opencl) share: the
// device limits a space must obey, numeric choice knobs, the -D build options that carry a
// config into a .cl file, the rows of the build-time table, and the choice of a default config from a list of preferences.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels::opencl {

// The limits of one device, with conservative stand-ins where the device info lacks them.
struct DeviceLimits {
  std::int64_t max_work_group_size = 256;
  std::array<std::int64_t, 3> max_work_item_sizes{256, 256, 64};
  std::int64_t local_mem_bytes = 32 * 1024;
  int max_vector_width = 4;  // widest float vector the space offers

  bool fits_work_group(std::int64_t x, std::int64_t y, std::int64_t z) const;
};
DeviceLimits device_limits(const DeviceInfo& device);

// A choice knob of numbers ("16", "32", ...), read back with number().
search_space::ChoiceKnob number_knob(std::string name, const std::vector<std::int64_t>& values);
std::int64_t number(const search_space::ConfigView& config, const std::string& knob);

// -D options, in the order given, then the options every candidate gets.
std::string build_options(const std::vector<std::pair<std::string, std::int64_t>>& defines);
// The dtypes of kernels/storage.cl (buffers in the type; float32 arithmetic, int32 for i8), and
// the option that picks a workload's: "" for f32, so a float32 config builds the program it
// always did.
inline std::vector<DataType> storage_dtypes() {
  return {DataType::kF32, DataType::kF16, DataType::kBF16, DataType::kI8};
}
std::string storage_option(DataType dtype);
// An i8 workload's space gets the one-option knob `activations` = "s8", so that every int8
// record says which signedness ran, as the CPU templates' do (x86 reads u8 there).
void add_activations_knob(search_space::ConfigSpace& space, const Workload& workload);

// The human-readable form of a candidate (emit_source): its build options and launch, then the
// .cl file it compiles.
std::string describe_program(const OpenCLKernel& kernel);

// The first preference whose knob values (by name, as option text) form a valid config; else a
// valid config drawn with a fixed seed. `name` prefixes the error when the space has none.
using Preference = std::vector<std::pair<std::string, std::string>>;
search_space::Config preferred_config(const search_space::ConfigSpace& space,
                                      const std::vector<Preference>& preferences,
                                      const std::string& name);

// Build-time consumption: the application's call of an OpenCL template, as apply-best writes it
// into the header for each dtype of storage.cl: `function` (f32), `function`_f16, _bf16 and _i8,
// each dispatching through its own table (`table`, `table`F16, ...) of
// optune::opencl::TunedKernel rows, the default chosen at run time. cl_mem buffers carry no type,
// so the dtype is in the name.
struct EntryPoint {
  std::string table;          // "kGemm"
  std::string default_shape;  // the shape whose default config a note of the header names
  std::string function;       // "gemm": the opencl:: call of runtime.hpp and the entry point's name
  std::string what;           // a comment line: "C[M,N] = A[M,K] * B[K,N], row-major"
  std::string parameters;     // after the runtime: "std::int64_t M, ..., cl_mem C"
  std::string arguments;      // after the table: "M, N, K, A, B, C"
};
std::vector<KernelTemplate::TableForm> table_forms(const EntryPoint& entry);
// One row: the workload's kernel as built and launched (opencl/runtime.hpp).
std::string table_row(const Workload& workload, const OpenCLKernel& kernel);

// An OpenCL template: what it emits and what it writes to the build-time table both follow from
// its kernel and launch (opencl_kernel), which each template defines.
class TemplateBase : public OpenCLTemplate {
 public:
  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const search_space::ConfigView& config) const final {
    return describe_program(opencl_kernel(workload, device, config));
  }
  std::string table_row(const Workload& workload, const DeviceInfo& device,
                        const search_space::ConfigView& config) const final {
    return opencl::table_row(workload, opencl_kernel(workload, device, config));
  }
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b);
// The smallest power of two at least x (1 for x <= 1): how far a tile may reach past a small extent.
std::int64_t next_pow2(std::int64_t x);

// The OpenCL conv kernels read and write NCHW: a workload on another layout is refused with
// std::invalid_argument naming the template and the layout.
void require_nchw(const std::string& template_name, const Workload& workload);

// The float vector widths 1, 2, 4, ... up to `widest` that the device takes.
std::vector<std::int64_t> vector_widths(const DeviceLimits& limits, std::int64_t widest);
// Input rows (or columns) that `outputs` consecutive output rows (columns) of a convolution read.
std::int64_t input_extent(std::int64_t outputs, std::int64_t stride, std::int64_t taps, std::int64_t dilation);

}  // namespace optune::kernels::opencl
