// The cpu backend's template of a user's kernel file (kernels/kernel_file_template.hpp). A
// candidate is one translation unit: the config's knobs as #defines, the file's source (and its
// reference's, where that is another file) included, and trampolines that take every argument's
// address (candidate.hpp's calling convention) and call the file's entry and reference with typed
// arguments. LocalBuilder compiles it into a shared object with the file's build options.
#include <fmt/format.h>

#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/measure/kernel_operands.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

// The C++ type of an argument's elements as the entry declares it. bf16 and e4m3 are their bits,
// std::uint16_t and std::uint8_t: GCC 12 has no arithmetic bfloat16 or fp8 type.
std::string_view cpp_type(DataType dtype) {
  switch (dtype) {
    case DataType::kF16: return "_Float16";
    case DataType::kBF16: return "std::uint16_t";
    case DataType::kF32: return "float";
    case DataType::kF64: return "double";
    case DataType::kI8: return "std::int8_t";
    case DataType::kU8:
    case DataType::kU7: return "std::uint8_t";
    case DataType::kI16: return "std::int16_t";
    case DataType::kU16: return "std::uint16_t";
    case DataType::kI32: return "std::int32_t";
    case DataType::kU32: return "std::uint32_t";
    case DataType::kI64: return "std::int64_t";
    case DataType::kU64: return "std::uint64_t";
    case DataType::kE4M3: return "std::uint8_t";
  }
  return "void";
}

// "extern "C" void <symbol>(void* const* args) { <function>(static_cast<float*>(args[0]), ...); }"
std::string trampoline(const char* symbol, const std::string& function, const std::vector<BoundArg>& args) {
  std::string call;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view type = cpp_type(args[i].dtype);
    call += i ? ", " : "";
    call += args[i].is_buffer() ? fmt::format("static_cast<{}*>(args[{}])", type, i)
                                : fmt::format("*static_cast<const {}*>(args[{}])", type, i);
  }
  return fmt::format("extern \"C\" void {}(void* const* args) {{ {}({}); }}\n", symbol, function, call);
}

class CpuKernelFileTemplate final : public KernelFileTemplate<KernelTemplate> {
 public:
  using KernelFileTemplate::KernelFileTemplate;
  std::string_view backend() const override { return "cpu"; }

  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const search_space::ConfigView& config) const override {
    const KernelProblem& problem = binding().problem(workload, device);
    const KernelSpec& spec = problem.spec();
    std::string source = fmt::format("// optune: candidate of {} for {}\n#include <cstdint>\n", spec.file.string(),
                                     workload.key());
    for (const KernelDefine& define : problem.defines(config.config()))
      source += fmt::format("#define {} {}\n", define.name, define.value);
    source += fmt::format("#include \"{}\"\n", spec.source.string());
    source += trampoline(kUserKernelSymbol, spec.entry, problem.args());
    if (spec.check.kind != KernelCheck::Kind::kReference) return source;
    source += fmt::format("#ifndef {}\n", kWithoutReferenceMacro);
    if (spec.check.reference_source != spec.source)
      source += fmt::format("#include \"{}\"\n", spec.check.reference_source.string());
    source += trampoline(kUserReferenceSymbol, spec.check.reference, problem.args());
    return source + "#endif\n";
  }

  std::vector<std::string> compiler_flags(const Workload&, const DeviceInfo&) const override {
    return binding().spec().build_options;
  }

  std::optional<nlohmann::json> worker_operands(const Workload& workload, const DeviceInfo& device) const override {
    return nlohmann::json(measure::kernel_operands_spec(binding().problem(workload, device), "", ""));
  }
};

}  // namespace

std::unique_ptr<KernelTemplate> cpu_kernel_file_template(KernelSpec spec) {
  return std::make_unique<CpuKernelFileTemplate>(std::move(spec));
}

}  // namespace optune::kernels
