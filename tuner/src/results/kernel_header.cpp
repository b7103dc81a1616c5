#include "optune/tuner/results/kernel_header.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/tuner/results/record_check.hpp"

namespace optune::tuner {
namespace {

// The fastest records read per workload, target and device: the best one the file's space no
// longer holds is passed over for the next.
constexpr std::size_t kCandidates = 32;

// A C++ string literal of any text.
std::string literal(const std::string& text) {
  std::string quoted = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') quoted += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7f) quoted += fmt::format("\\x{:02x}\"\"", c);  // "" ends the escape
    else quoted += static_cast<char>(c);
  }
  return quoted + "\"";
}

// A knob's C++ member name: its own, or with "_" after it where that is a C++ keyword.
std::string member_name(const std::string& knob) {
  static const std::set<std::string> kKeywords = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
      "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "not",
      "operator", "or", "private", "protected", "public", "register", "return", "short", "signed", "sizeof",
      "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typename", "union",
      "unsigned", "using", "virtual", "void", "volatile", "while", "xor"};
  return kKeywords.count(knob) ? knob + "_" : knob;
}

std::string member_type(const kernels::KernelKnob& knob) {
  if (!knob.is_numeric()) return "std::string_view";
  const bool integral = std::all_of(knob.numbers.begin(), knob.numbers.end(),
                                    [](double value) { return value == static_cast<double>(static_cast<long long>(value)); });
  return integral ? "long long" : "double";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::string size_list(const std::array<std::int64_t, 3>& sizes) {
  return fmt::format("{{{}, {}, {}}}", sizes[0], sizes[1], sizes[2]);
}

// One row: what the table holds of a record, computed from the file as the tuner computed it.
struct Row {
  std::string workload_key;
  std::string device;
  std::string text;
};

std::string config_initializer(const kernels::KernelSpec& spec, const search_space::Config& config) {
  std::vector<std::string> values;
  for (std::size_t k = 0; k < spec.knobs.size(); ++k) {
    const std::string value = spec.knobs[k].value_text(config.options[k]);
    values.push_back(spec.knobs[k].is_numeric() ? value : literal(value));
  }
  return "{" + joined(values, ", ") + "}";
}

std::string defines_text(const kernels::KernelProblem& problem, const search_space::Config& config) {
  std::vector<std::string> defines;
  for (const auto& define : problem.defines(config)) defines.push_back("-D" + define.name + "=" + define.value);
  return joined(defines, " ");
}

Row make_row(const kernels::KernelFileBinding& binding, const db::TuningRecord& record,
             const kernels::DeviceInfo& device) {
  const kernels::Workload workload = kernels::parse_workload_key(record.workload_key);
  const kernels::KernelProblem& problem = binding.problem(workload, device);
  const search_space::Config config = problem.space().from_json(record.config);
  std::vector<std::string> extents;
  for (const auto& extent : problem.extents()) extents.push_back(std::to_string(extent.value));
  std::string text = fmt::format("    {{{}, {{{}}}, {}, {}, {}, {}, {}, {}", literal(record.workload_key),
                                 joined(extents, ", "), literal(record.target), literal(device.name),
                                 literal(record.device_id), config_initializer(binding.spec(), config),
                                 literal(defines_text(problem, config)),
                                 literal(joined(problem.build_options(config), " ")));
  if (binding.spec().backend == "opencl") {
    const kernels::LaunchSize launch = problem.launch(config);
    text += fmt::format(", {}, {}, {}", launch.dimensions, size_list(launch.global), size_list(launch.local));
  }
  const std::string unit = problem.flops() > 0 ? "GFLOP/s" : problem.bytes() > 0 ? "GB/s" : "runs/s";
  text += fmt::format("}},  // {:.4g} {}{}", record.gflops, unit, record.tuner == "kernel_tuner" ? " (Kernel Tuner)" : "");
  return {record.workload_key, device.name, text};
}

// The default config of the file's own extents on a device, as a comment line.
std::string default_note(const kernels::KernelFileBinding& binding, const kernels::DeviceInfo& device) {
  try {
    const kernels::Workload workload = binding.workload("", device);
    const kernels::KernelProblem& problem = binding.problem(workload, device);
    const search_space::Config config = binding.first_valid(problem.space());
    std::string note = "//   on " + device.name + ": " + defines_text(problem, config);
    if (binding.spec().backend == "opencl") {
      const kernels::LaunchSize launch = problem.launch(config);
      note += ", global " + size_list(launch.global) + ", local " + size_list(launch.local);
    }
    return note + "\n";
  } catch (const std::exception&) {
    return "//   on " + device.name + ": no config is valid at these extents\n";
  }
}

std::string struct_text(const kernels::KernelSpec& spec, std::size_t extent_count) {
  std::string config = "// The knobs, as the source receives them (-D NAME=value).\nstruct Config {\n";
  for (const auto& knob : spec.knobs) config += "  " + member_type(knob) + " " + member_name(knob.name) + ";\n";
  config += "};\n\n";
  std::vector<std::string> extent_names;
  for (const auto& extent : spec.extents) extent_names.push_back(extent.name);
  std::string row = fmt::format(
      "// The best recorded config of one problem size on one device.\n"
      "struct TunedKernel {{\n"
      "  std::string_view workload_key;  // kernel.{}.<extents>\n"
      "  std::array<long long, {}> extents;  // {}\n"
      "  std::string_view target;\n"
      "  std::string_view device;      // the device's name{}\n"
      "  std::string_view device_id;   // optune's id of the device's fingerprint\n"
      "  Config config;\n"
      "  std::string_view defines;     // the knobs as -D options\n"
      "  std::string_view build_options;  // the defines, then the kernel file's build_options: {}\n",
      spec.name, extent_count, joined(extent_names, ", "), spec.backend == "opencl" ? " (CL_DEVICE_NAME)" : "",
      spec.backend == "opencl" ? "clBuildProgram's options" : "the compiler's, for the shared object");
  if (spec.backend == "opencl")
    row += "  int dimensions;\n  std::array<std::size_t, 3> global_size;  // work-items; unused dimensions 1\n"
           "  std::array<std::size_t, 3> local_size;\n";
  return config + row + "};\n\n";
}

// The namespace of a kernel's table: its name, '-' as '_'.
std::string namespace_of(const std::string& kernel_name) {
  std::string name = "kernel_" + kernel_name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

KernelHeader make_kernel_header(const db::Database& database, const kernels::KernelTemplate& kernel_file,
                                const KernelHeaderRequest& request) {
  const kernels::KernelFileBinding* binding = kernels::kernel_file_of(kernel_file);
  if (binding == nullptr) throw std::logic_error("make_kernel_header: not a kernel file's template");
  const kernels::KernelSpec& spec = binding->spec();
  std::vector<std::string> extent_names;
  for (const auto& extent : spec.extents) extent_names.push_back(extent.name);
  for (const auto& key : request.wanted) {
    const auto parsed = kernels::parse_kernel_workload_key(key);
    std::vector<std::string> names;
    for (const auto& extent : parsed.extents) names.push_back(extent.name);
    if (parsed.kernel_name != spec.name || names != extent_names)
      throw std::invalid_argument("workload '" + key + "' is not a size of kernel " + spec.name + " (its sizes: " +
                                  kernels::kernel_workload_key(spec.name, spec.extents) + ")");
  }

  KernelHeader header;
  db::RecordFilter filter;
  filter.template_name = kernel_file.name();
  filter.target = request.target;
  filter.device = request.device;
  RecordCheck check;
  check.add_template(kernel_file);
  std::map<std::string, Row> rows;  // by workload key, target and device id: the first usable is the best
  std::set<std::string> devices;
  std::map<std::string, kernels::DeviceInfo> device_infos;  // by name
  for (const auto& record : checked_top_k(database, filter, kCandidates, header.passed_over)) {
    const std::string group = record.workload_key + " " + record.target + " " + record.device_id;
    if (rows.count(group)) continue;
    try {
      check.full(record);
      const auto device = kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
      rows.emplace(group, make_row(*binding, record, device));
      device_infos.emplace(device.name, device);
    } catch (const std::invalid_argument& error) {
      header.passed_over.push_back(record.workload_key + ": " + error.what());
    }
  }
  for (const auto& [name, device] : device_infos) header.devices.push_back(name);
  header.rows = rows.size();

  std::vector<std::string> device_names = header.devices;
  if (device_names.empty() && request.fallback_device) {
    device_names.push_back(request.fallback_device->name);
    device_infos.emplace(request.fallback_device->name, *request.fallback_device);
  }
  for (const auto& key : request.wanted)
    for (const auto& name : device_names) {
      const bool tuned = std::any_of(rows.begin(), rows.end(), [&](const auto& row) {
        return row.second.workload_key == key && row.second.device == name;
      });
      if (!tuned) header.untuned.push_back(key + " on " + name);
    }

  std::string untuned;
  for (const auto& item : header.untuned) untuned += "//   " + item + "\n";
  std::string defaults;
  for (const auto& name : device_names) defaults += default_note(*binding, device_infos.at(name));
  std::vector<std::string> extents;
  for (const auto& extent : spec.extents) extents.push_back(extent.name + "=" + std::to_string(extent.value));
  std::vector<std::string> extent_literals;
  for (const auto& extent : spec.extents) extent_literals.push_back(literal(extent.name));
  std::string table;
  for (const auto& [group, row] : rows) table += row.text + "\n";

  header.text = fmt::format(
      "// Generated by `optune apply-best --kernel {}` from {}.\n"
      "// Do not edit: regenerate with optune apply-best --kernel.\n"
      "// Kernel {} ({}: {}, entry {}); tuned rows: {}.{}\n"
      "#pragma once\n\n#include <array>\n#include <cstddef>\n#include <string_view>\n\n"
      "namespace optune::tuned::{} {{\n\n"
      "inline constexpr std::string_view kName = {};\n"
      "inline constexpr std::string_view kBackend = {};\n"
      "inline constexpr std::string_view kSource = {};  // beside the kernel file\n"
      "inline constexpr std::string_view kEntry = {};\n"
      "inline constexpr std::array<std::string_view, {}> kExtents = {{{}}};\n\n"
      "{}"
      "// A size or device without a row runs the default config: the first valid config for its size\n"
      "// and device. At the kernel file's extents ({}):\n{}\n"
      "inline constexpr std::array<TunedKernel, {}> kTuned = {{{{\n{}}}}};\n\n"
      "// The row of a problem size on a device (by name), or nullptr: then the default config runs.\n"
      "constexpr const TunedKernel* find_tuned(std::string_view workload_key, std::string_view device) {{\n"
      "  for (const TunedKernel& row : kTuned)\n"
      "    if (row.workload_key == workload_key && row.device == device) return &row;\n"
      "  return nullptr;\n"
      "}}\n\n"
      "}}  // namespace optune::tuned::{}\n",
      request.kernel_file, request.source, spec.name, spec.backend, spec.source.filename().string(), spec.entry,
      header.rows, untuned.empty() ? "" : "\n// Wanted sizes without a tuned row (they run the default config):\n" + untuned,
      namespace_of(spec.name), literal(spec.name), literal(spec.backend), literal(spec.source.filename().string()),
      literal(spec.entry), extent_literals.size(), joined(extent_literals, ", "), struct_text(spec, spec.extents.size()),
      joined(extents, ", "), defaults.empty() ? "//   (no device known)\n" : defaults, header.rows, table,
      namespace_of(spec.name));
  return header;
}

}  // namespace optune::tuner
