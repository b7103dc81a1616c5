#include "template_support.hpp"
#include "templates.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace optune::kernels::opencl {

namespace ss = search_space;

bool DeviceLimits::fits_work_group(std::int64_t x, std::int64_t y, std::int64_t z) const {
  return x * y * z <= max_work_group_size && x <= max_work_item_sizes[0] &&
         y <= max_work_item_sizes[1] && z <= max_work_item_sizes[2];
}

DeviceLimits device_limits(const DeviceInfo& device) {
  DeviceLimits limits;
  if (device.max_work_group_size > 0) limits.max_work_group_size = device.max_work_group_size;
  for (std::size_t i = 0; i < 3 && i < device.max_work_item_sizes.size(); ++i) {
    if (device.max_work_item_sizes[i] > 0) limits.max_work_item_sizes[i] = device.max_work_item_sizes[i];
  }
  if (device.local_mem_bytes > 0) limits.local_mem_bytes = device.local_mem_bytes;
  // 128-bit loads are native on every GPU and CPU that matters even where the driver prefers
  // scalars (NVIDIA reports 1); wider only where the device prefers wider.
  limits.max_vector_width = std::max(4, device.preferred_vector_width);
  return limits;
}

ss::ChoiceKnob number_knob(std::string name, const std::vector<std::int64_t>& values) {
  ss::ChoiceKnob knob{std::move(name), {}};
  for (std::int64_t value : values) knob.options.push_back(std::to_string(value));
  return knob;
}

std::int64_t number(const ss::ConfigView& config, const std::string& knob) {
  return std::stoll(config.choice(knob));
}

std::string build_options(const std::vector<std::pair<std::string, std::int64_t>>& defines) {
  std::string options;
  for (const auto& [name, value] : defines) options += "-D" + name + "=" + std::to_string(value) + " ";
  // -w: the kernels unroll loops whose trip count is only known at run time at the edges, and
  // some compilers (PoCL) print a warning to the worker's stderr for each.
  return options + "-cl-mad-enable -w";
}

std::string storage_option(DataType dtype) {
  if (dtype == DataType::kF16) return " -DOPTUNE_F16";
  if (dtype == DataType::kBF16) return " -DOPTUNE_BF16";
  if (dtype == DataType::kI8) return " -DOPTUNE_I8";
  return "";
}

void add_activations_knob(ss::ConfigSpace& space, const Workload& workload) {
  if (workload.dtype == DataType::kI8) space.add(ss::ChoiceKnob{"activations", {"s8"}});
}

std::string describe_program(const OpenCLKernel& kernel) {
  auto sizes = [&](const std::array<std::size_t, 3>& s) {
    std::string text;
    for (int i = 0; i < kernel.dimensions; ++i) text += (i ? " x " : "") + std::to_string(s[i]);
    return text;
  };
  return "// OpenCL program of kernel " + kernel.kernel_name + "\n// build options: " +
         kernel.build_options + "\n// global size: " + sizes(kernel.global_size) +
         ", local size: " + sizes(kernel.local_size) +
         (kernel.scratch_bytes ? "\n// scratch buffer: " + std::to_string(kernel.scratch_bytes) + " bytes, zero-filled once" : "") +
         "\n#include \"" + kernel.source_file + "\"\n";
}

ss::Config preferred_config(const ss::ConfigSpace& space, const std::vector<Preference>& preferences,
                            const std::string& name) {
  for (const Preference& preference : preferences) {
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    bool complete = true;
    for (const auto& [knob, value] : preference) {
      const std::size_t k = space.knob_index(knob);
      const auto& options = std::get<ss::ChoiceKnob>(space.knobs()[k]).options;
      const auto found = std::find(options.begin(), options.end(), value);
      if (found == options.end()) {
        complete = false;
        break;
      }
      config.options[k] = static_cast<std::uint32_t>(found - options.begin());
    }
    if (complete && space.is_valid(config)) return config;
  }
  std::mt19937_64 rng(0);
  try {
    return space.sample_valid(rng);
  } catch (const std::runtime_error&) {
    throw std::logic_error(name + ": the space has no valid config for this device");
  }
}

std::vector<KernelTemplate::TableForm> table_forms(const EntryPoint& entry) {
  struct Variant {
    DataType dtype;
    const char* suffix;      // of the function; the table's is its CamelCase
    const char* table;
    const char* enumerator;  // kernels::DataType's
    const char* buffers;
  };
  static constexpr Variant kVariants[] = {
      {DataType::kF32, "", "", "kF32", "f32 buffers"},
      {DataType::kF16, "_f16", "F16", "kF16", "f16 buffers (float32 arithmetic)"},
      {DataType::kBF16, "_bf16", "Bf16", "kBF16", "bf16 buffers (float32 arithmetic)"},
      {DataType::kI8, "_i8", "I8", "kI8", "s8 inputs and an int32 output (exact int32 sums)"},
  };
  std::vector<KernelTemplate::TableForm> forms;
  for (const Variant& variant : kVariants) {
    KernelTemplate::TableForm form;
    form.include = "optune/kernels/opencl/runtime.hpp";
    form.row_type = "optune::opencl::TunedKernel";
    form.table_name = entry.table + variant.table;
    form.default_shape = entry.default_shape;
    form.default_at_run_time = true;
    form.dtype = variant.dtype;
    form.entry_point = "// " + entry.what + "\n// " + variant.buffers +
                       " of runtime's context, with the tuned config of the shape (else the default\n"
                       "// config); enqueued on runtime's queue, not waited for.\n"
                       "inline opencl::Launch " + entry.function + variant.suffix + "(opencl::Runtime& runtime,\n    " +
                       entry.parameters + ") {\n  return opencl::" + entry.function +
                       "(runtime, {tuned::kDevice, tuned::" + form.table_name + "}, " + entry.arguments +
                       ",\n      kernels::DataType::" + variant.enumerator + ");\n}\n";
    forms.push_back(std::move(form));
  }
  return forms;
}

std::string table_row(const Workload& workload, const OpenCLKernel& kernel) {
  auto sizes = [](const std::array<std::size_t, 3>& s) {
    return "{{" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + "}}";
  };
  return "{\"" + workload.key() + "\", \"" + kernel.source_file + "\", \"" + kernel.kernel_name + "\",\n     \"" +
         kernel.build_options + "\",\n     " + std::to_string(kernel.dimensions) + ", " + sizes(kernel.global_size) +
         ", " + sizes(kernel.local_size) + (kernel.scratch_bytes ? ", " + std::to_string(kernel.scratch_bytes) : "") + "}";
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::vector<std::int64_t> vector_widths(const DeviceLimits& limits, std::int64_t widest) {
  std::vector<std::int64_t> widths;
  for (std::int64_t w = 1; w <= widest && w <= limits.max_vector_width; w *= 2) widths.push_back(w);
  return widths;
}

std::int64_t input_extent(std::int64_t outputs, std::int64_t stride, std::int64_t taps, std::int64_t dilation) {
  return (outputs - 1) * stride + (taps - 1) * dilation + 1;
}

void require_nchw(const std::string& template_name, const Workload& workload) {
  if (workload.layout_block == kLayoutNchw) return;
  throw std::invalid_argument(template_name + ": layout " + layout_name(workload.layout_block) +
                              " is not supported (the OpenCL kernels take NCHW)");
}

}  // namespace optune::kernels::opencl

namespace optune::kernels {

std::vector<const OpenCLTemplate*> opencl_templates() {
  return {&opencl_gemm_template(), &opencl_conv2d_template(), &opencl_depthwise_conv2d_template()};
}

const OpenCLTemplate& opencl_template_for(Op op) {
  for (const OpenCLTemplate* candidate : opencl_templates())
    if (candidate->op() == op) return *candidate;
  throw std::invalid_argument("opencl: no template for op " + std::string(op_name(op)));
}

const OpenCLTemplate& as_opencl(const KernelTemplate& kernel_template) {
  const auto* opencl = dynamic_cast<const OpenCLTemplate*>(&kernel_template);
  if (!opencl) throw std::invalid_argument("template " + kernel_template.name() + " is not an OpenCL template");
  return *opencl;
}

}  // namespace optune::kernels
