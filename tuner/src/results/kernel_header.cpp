#include "optune/tuner/results/kernel_header.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/tuner/search/record_check.hpp"

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
  return fmt::format("{{{}}}", fmt::join(values, ", "));
}

std::string defines_text(const kernels::KernelProblem& problem, const search_space::Config& config) {
  std::vector<std::string> defines;
  for (const auto& define : problem.defines(config)) defines.push_back("-D" + define.name + "=" + define.value);
  return fmt::format("{}", fmt::join(defines, " "));
}

kernels::LaunchModel launch_model(const kernels::KernelSpec& spec) { return spec.traits->launch; }

// A row's launch members after build_options (none for kernels called on the host).
std::string launch_initializer(const kernels::KernelProblem& problem, const search_space::Config& config) {
  if (launch_model(problem.spec()) == kernels::LaunchModel::kCall) return "";
  const kernels::LaunchSize launch = problem.launch(config);
  switch (launch_model(problem.spec())) {
    case kernels::LaunchModel::kNDRange:
      return fmt::format(", {}, {}, {}", launch.dimensions, size_list(launch.global), size_list(launch.local));
    case kernels::LaunchModel::kGridBlock:
      return fmt::format(", {}, {}, {}, {}, {}", literal(problem.entry(config)), launch.dimensions,
                         size_list(launch.global), size_list(launch.local), launch.shared_memory_bytes);
    case kernels::LaunchModel::kCall: break;
  }
  return "";
}

// The same members declared in the row struct.
std::string launch_members(const kernels::KernelSpec& spec) {
  switch (launch_model(spec)) {
    case kernels::LaunchModel::kNDRange:
      return "  int dimensions;\n  std::array<std::size_t, 3> global_size;  // work-items; unused dimensions 1\n"
             "  std::array<std::size_t, 3> local_size;\n";
    case kernels::LaunchModel::kGridBlock:
      return "  std::string_view entry;       // the kernel to start (a template instance: a name expression)\n"
             "  int dimensions;\n  std::array<unsigned, 3> grid;   // blocks; unused dimensions 1\n"
             "  std::array<unsigned, 3> block;  // threads per block\n"
             "  unsigned shared_memory_bytes;  // dynamic shared memory per block\n";
    case kernels::LaunchModel::kCall: break;
  }
  return "";
}

// The default's launch in a note: ", global {..}, local {..}" or ", entry .., grid .., block ..".
std::string launch_note(const kernels::KernelProblem& problem, const search_space::Config& config) {
  if (launch_model(problem.spec()) == kernels::LaunchModel::kCall) return "";
  const kernels::LaunchSize launch = problem.launch(config);
  switch (launch_model(problem.spec())) {
    case kernels::LaunchModel::kNDRange:
      return ", global " + size_list(launch.global) + ", local " + size_list(launch.local);
    case kernels::LaunchModel::kGridBlock:
      return fmt::format(", entry {}, grid {}, block {}, shared memory {} bytes", problem.entry(config),
                         size_list(launch.global), size_list(launch.local), launch.shared_memory_bytes);
    case kernels::LaunchModel::kCall: break;
  }
  return "";
}

Row make_row(const kernels::KernelFileBinding& binding, const db::TuningRecord& record,
             const kernels::DeviceInfo& device) {
  const kernels::Workload workload = kernels::parse_workload_key(record.workload_key);
  const kernels::KernelProblem& problem = binding.problem(workload, device);
  const search_space::Config config = problem.space().from_json(record.config);
  std::vector<std::string> extents;
  for (const auto& extent : problem.extents()) extents.push_back(std::to_string(extent.value));
  std::string text = fmt::format("    {{{}, {{{}}}, {}, {}, {}, {}, {}, {}", literal(record.workload_key),
                                 fmt::join(extents, ", "), literal(record.target), literal(device.name),
                                 literal(record.device_id), config_initializer(binding.spec(), config),
                                 literal(defines_text(problem, config)),
                                 literal(fmt::format("{}", fmt::join(problem.build_options(config), " "))));
  text += launch_initializer(problem, config);
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
    return "//   on " + device.name + ": " + defines_text(problem, config) + launch_note(problem, config) + "\n";
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
      spec.name, extent_count, fmt::join(extent_names, ", "), spec.traits->header.device_name_note,
      spec.traits->header.build_options_note);
  return config + row + launch_members(spec) + "};\n\n";
}

// The namespace of a kernel's table: its name, '-' as '_'.
std::string namespace_of(const std::string& kernel_name) {
  std::string name = "kernel_" + kernel_name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// Every wanted key is a size of this kernel: its name and its extents' names.
void check_wanted(const kernels::KernelSpec& spec, const std::vector<std::string>& wanted) {
  auto names_of = [](const std::vector<kernels::Extent>& extents) {
    std::vector<std::string> names;
    for (const auto& extent : extents) names.push_back(extent.name);
    return names;
  };
  for (const auto& key : wanted) {
    const auto parsed = kernels::parse_kernel_workload_key(key);
    if (parsed.kernel_name != spec.name || names_of(parsed.extents) != names_of(spec.extents))
      throw std::invalid_argument("workload '" + key + "' is not a size of kernel " + spec.name + " (its sizes: " +
                                  kernels::kernel_workload_key(spec.name, spec.extents) + ")");
  }
}

// The best usable record of each workload, target and device name (records come fastest first;
// devices of one name, e.g. before and after a driver update, share a row, as find_tuned() finds
// rows by name), and the devices by name.
struct BestRows {
  std::map<std::string, Row> rows;  // by workload key, target and device name
  std::map<std::string, kernels::DeviceInfo> devices;
};
BestRows best_rows(const db::Database& database, const kernels::KernelTemplate& kernel_file,
                   const KernelHeaderRequest& request, std::vector<std::string>& passed_over,
                   std::vector<std::string>& noisy) {
  db::RecordFilter filter;
  filter.template_name = kernel_file.name();
  filter.target = request.target;
  filter.device = request.device;
  RecordCheck check;
  check.add_template(kernel_file);
  BestRows best;
  for (const auto& record : checked_top_k(database, filter, kCandidates, passed_over)) {
    const std::string group =
        record.workload_key + " " + record.target + " " + record.device_fingerprint.value("name", "");
    if (best.rows.count(group)) continue;
    try {
      check.full(record);
      const auto device = kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
      best.rows.emplace(group, make_row(*kernels::kernel_file_of(kernel_file), record, device));
      best.devices.emplace(device.name, device);
      if (record.is_noisy()) noisy.push_back(record.workload_key + " on " + device.name + ": " + db::noise_text(record));
    } catch (const std::invalid_argument& error) {
      passed_over.push_back(record.workload_key + ": " + error.what());
    }
  }
  return best;
}

std::string header_text(const kernels::KernelFileBinding& binding, const KernelHeaderRequest& request,
                        const BestRows& best, const std::vector<std::string>& untuned_items) {
  const kernels::KernelSpec& spec = binding.spec();
  std::string untuned;
  for (const auto& item : untuned_items) untuned += "//   " + item + "\n";
  std::string defaults;
  for (const auto& [name, device] : best.devices) defaults += default_note(binding, device);
  std::vector<std::string> extents, extent_literals;
  for (const auto& extent : spec.extents) {
    extents.push_back(extent.name + "=" + std::to_string(extent.value));
    extent_literals.push_back(literal(extent.name));
  }
  std::string table;
  for (const auto& [group, row] : best.rows) table += row.text + "\n";
  return fmt::format(
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
      best.rows.size(), untuned.empty() ? "" : "\n// Wanted sizes without a tuned row (they run the default config):\n" + untuned,
      namespace_of(spec.name), literal(spec.name), literal(spec.backend), literal(spec.source.filename().string()),
      literal(spec.entry), extent_literals.size(), fmt::join(extent_literals, ", "), struct_text(spec, spec.extents.size()),
      fmt::join(extents, ", "), defaults.empty() ? "//   (no device known)\n" : defaults, best.rows.size(), table,
      namespace_of(spec.name));
}

}  // namespace

KernelHeader make_kernel_header(const db::Database& database, const kernels::KernelTemplate& kernel_file,
                                const KernelHeaderRequest& request) {
  const kernels::KernelFileBinding* binding = kernels::kernel_file_of(kernel_file);
  if (binding == nullptr) throw std::logic_error("make_kernel_header: not a kernel file's template");
  check_wanted(binding->spec(), request.wanted);
  KernelHeader header;
  BestRows best = best_rows(database, kernel_file, request, header.passed_over, header.noisy);
  for (const auto& [name, device] : best.devices) header.devices.push_back(name);
  header.rows = best.rows.size();
  // Nothing recorded: the wanted sizes are untuned on this machine's device, whose default is shown.
  if (best.devices.empty() && request.fallback_device)
    best.devices.emplace(request.fallback_device->name, *request.fallback_device);
  for (const auto& key : request.wanted)
    for (const auto& entry : best.devices) {
      // (Not a structured binding: clang 14, which builds the fuzz targets, cannot capture one.)
      const std::string& name = entry.first;
      const bool tuned = std::any_of(best.rows.begin(), best.rows.end(), [&](const auto& row) {
        return row.second.workload_key == key && row.second.device == name;
      });
      if (!tuned) header.untuned.push_back(key + " on " + name);
    }
  header.text = header_text(*binding, request, best, header.untuned);
  return header;
}

}  // namespace optune::tuner
