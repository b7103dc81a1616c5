#include "optune/kernels/kernel_problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {
namespace {

std::string trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  const auto end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

std::string number_text(double value) {
  std::ostringstream text;
  text.precision(15);
  text << value;
  return text.str();
}

// A launch evaluated for one set of values: the sizes, or the first problem found.
struct LaunchOutcome {
  LaunchSize size;
  std::string field;
  std::string problem;
};

std::string count_text(double value) { return std::to_string(static_cast<std::int64_t>(value)); }

// "launch.global[1]"
std::string dimension_field(const std::string& field, std::string_view key, std::size_t dimension) {
  std::string text = field;
  text.append(key).append("[").append(std::to_string(dimension)).append("]");
  return text;
}

// The sizes: each a positive integer, as the expression gives it (no rounding).
void evaluate_sizes(const KernelLaunch& launch, const std::string& field, std::span<const double> values,
                    LaunchModel model, LaunchOutcome& outcome) {
  const bool grid_block = model == LaunchModel::kGridBlock;
  outcome.size.dimensions = static_cast<int>(launch.global.size());
  outcome.size.has_local = !launch.local.empty();
  const auto size_of = [&](const Expression& expression, const std::string& size_field) -> std::int64_t {
    if (!outcome.problem.empty()) return 1;
    try {
      const std::int64_t size = expression.evaluate_integer(values);
      if (size >= 1) return size;
      outcome.problem = "\"" + expression.text() + "\" is " + std::to_string(size) + "; sizes must be positive";
    } catch (const std::domain_error& error) {
      outcome.problem = error.what();
    }
    outcome.field = size_field;
    return 1;
  };
  for (std::size_t d = 0; d < launch.global.size(); ++d) {
    outcome.size.global[d] = size_of(launch.global[d], dimension_field(field, grid_block ? ".grid" : ".global", d));
    if (outcome.size.has_local)
      outcome.size.local[d] = size_of(launch.local[d], dimension_field(field, grid_block ? ".block" : ".local", d));
  }
}

// OpenCL 1.2: local divides global, and the work-group fits the device.
void check_ndrange(const std::string& field, const WorkGroupLimits& limits, LaunchOutcome& outcome) {
  double work_group = 1;
  for (std::size_t d = 0; d < static_cast<std::size_t>(outcome.size.dimensions); ++d) {
    const std::int64_t global = outcome.size.global[d], local = outcome.size.local[d];
    work_group *= static_cast<double>(local);
    if (global % local != 0) {
      outcome.field = dimension_field(field, ".global", d);
      outcome.problem = std::to_string(global) + " is not a multiple of the local size " + std::to_string(local);
      return;
    }
    if (limits.max_per_dimension[d] > 0 && static_cast<double>(local) > limits.max_per_dimension[d]) {
      outcome.field = dimension_field(field, ".local", d);
      outcome.problem = std::to_string(local) + " exceeds max_work_item_size_" + std::to_string(d);
      return;
    }
  }
  if (limits.max_size > 0 && work_group > limits.max_size) {
    outcome.field = field + ".local";
    outcome.problem = "a work-group of " + count_text(work_group) + " work-items exceeds max_work_group_size " +
                      count_text(limits.max_size);
  }
}

// A grid counts blocks, so only the block is held to the device: its threads per dimension and in
// all, and its dynamic shared memory (a whole number of bytes, at least 0).
void check_grid_block(const KernelLaunch& launch, const std::string& field, std::span<const double> values,
                      const WorkGroupLimits& limits, LaunchOutcome& outcome) {
  static constexpr std::array<const char*, 3> kAxes = {"x", "y", "z"};
  double threads = 1;
  for (std::size_t d = 0; d < static_cast<std::size_t>(outcome.size.dimensions); ++d) {
    const std::int64_t block = outcome.size.local[d];
    threads *= static_cast<double>(block);
    if (limits.max_per_dimension[d] > 0 && static_cast<double>(block) > limits.max_per_dimension[d]) {
      outcome.field = dimension_field(field, ".block", d);
      outcome.problem = std::to_string(block) + " threads exceed the device's max_block_dim_" + kAxes[d] + " " +
                        count_text(limits.max_per_dimension[d]);
      return;
    }
  }
  if (limits.max_size > 0 && threads > limits.max_size) {
    outcome.field = field + ".block";
    outcome.problem = "a block of " + count_text(threads) + " threads exceeds the device's max_threads_per_block " +
                      count_text(limits.max_size);
    return;
  }
  if (!launch.shared_memory) return;
  const Expression& shared_memory = *launch.shared_memory;
  std::int64_t bytes = 0;
  try {
    bytes = shared_memory.evaluate_integer(values);
  } catch (const std::domain_error& error) {
    outcome.problem = error.what();
  }
  if (outcome.problem.empty() && bytes < 0)
    outcome.problem = "\"" + shared_memory.text() + "\" is " + std::to_string(bytes) + "; bytes must be at least 0";
  if (outcome.problem.empty() && limits.max_shared_memory > 0 && static_cast<double>(bytes) > limits.max_shared_memory)
    outcome.problem = std::to_string(bytes) + " bytes exceed the device's max_shared_memory_per_block " +
                      count_text(limits.max_shared_memory);
  if (!outcome.problem.empty()) outcome.field = field + ".shared_memory";
  else outcome.size.shared_memory_bytes = bytes;
}

LaunchOutcome evaluate_launch(const KernelLaunch& launch, const std::string& field, std::span<const double> values,
                              LaunchModel model, const WorkGroupLimits& limits) {
  LaunchOutcome outcome;
  evaluate_sizes(launch, field, values, model, outcome);
  if (!outcome.problem.empty() || !outcome.size.has_local) return outcome;
  if (model == LaunchModel::kGridBlock) check_grid_block(launch, field, values, limits, outcome);
  else check_ndrange(field, limits, outcome);
  return outcome;
}

}  // namespace

// Everything the space's constraints need, shared with them so that a copied space outlives the
// problem safely.
struct KernelProblem::Values {
  std::vector<double> fixed;  // extents, knob slots (0), device limits
  std::size_t first_knob = 0;
  std::vector<KernelKnob> knobs;
  std::optional<KernelLaunch> launch;
  LaunchModel launch_model = LaunchModel::kCall;
  WorkGroupLimits work_group_limits;

  std::vector<double> of(const search_space::Config& config) const {
    std::vector<double> values = fixed;
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      const std::uint32_t option = config.options.at(k);
      // String knobs have no value in expressions (the parser refuses them there).
      values[first_knob + k] = knobs[k].is_numeric() ? knobs[k].numbers.at(option) : option;
    }
    return values;
  }
};

std::vector<Extent> resolve_extents(const KernelSpec& spec, std::string_view shape_text) {
  std::vector<Extent> extents = spec.extents;
  std::set<std::string> given;
  std::string_view rest = shape_text;
  while (!trimmed(rest).empty()) {
    const auto comma = rest.find(',');
    const std::string part = trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto equals = part.find('=');
    if (equals == std::string::npos) throw std::invalid_argument("shape: '" + part + "' is not NAME=VALUE");
    const std::string name = trimmed(std::string_view(part).substr(0, equals));
    const std::string value_text = trimmed(std::string_view(part).substr(equals + 1));
    const auto extent = std::find_if(extents.begin(), extents.end(), [&](const Extent& e) { return e.name == name; });
    if (extent == extents.end()) {
      std::string known;
      for (const Extent& e : spec.extents) known += (known.empty() ? "" : ", ") + e.name;
      throw std::invalid_argument("shape: unknown extent '" + name + "' (" + spec.name + " has " + known + ")");
    }
    if (!given.insert(name).second) throw std::invalid_argument("shape: '" + name + "' is given twice");
    const std::optional<std::int64_t> value = kernel_extent_value(value_text);
    if (!value)
      throw std::invalid_argument("shape: " + name + "=" + value_text + " must be a whole number from 1 to " +
                                  std::to_string(kMaxKernelExtent));
    extent->value = *value;
  }
  return extents;
}

KernelProblem::KernelProblem(KernelSpec spec, std::string_view shape_text, const DeviceInfo& device)
    : spec_(std::move(spec)) {
  try {
    extents_ = resolve_extents(spec_, shape_text);
  } catch (const std::invalid_argument& error) {
    fail("", error.what());
  }
  workload_key_ = kernel_workload_key(spec_.name, extents_);
  if (device.kind != spec_.backend)
    fail("backend", spec_.backend + " kernel, but the device '" + device.name + "' is " + device.kind);
  if (!spec_.traits) fail("backend", "no kernel-file traits for " + spec_.backend + " (a spec not made by the parser)");
  auto values = std::make_shared<Values>();
  for (const Extent& extent : extents_) values->fixed.push_back(static_cast<double>(extent.value));
  values->first_knob = values->fixed.size();
  values->fixed.resize(values->fixed.size() + spec_.knobs.size(), 0.0);
  const std::vector<double> limits = spec_.traits->limit_values(device);
  values->fixed.insert(values->fixed.end(), limits.begin(), limits.end());
  values->knobs = spec_.knobs;
  values->launch = spec_.launch;
  values->launch_model = spec_.traits->launch;
  if (spec_.traits->work_group_limits) values->work_group_limits = spec_.traits->work_group_limits(device);
  values_ = std::move(values);
  bind_totals();
  bind_args();
  check_expected_files();
  bind_reference_launch();
  build_space();
}

void KernelProblem::fail(const std::string& field, const std::string& problem) const {
  throw std::invalid_argument(spec_.file.string() + ": " + (field.empty() ? problem : field + ": " + problem));
}

void KernelProblem::bind_totals() {
  const auto total = [&](const std::optional<Expression>& expression, const char* field) {
    if (!expression) return 0.0;
    const double value = expression->evaluate(values_->fixed);
    if (!std::isfinite(value) || value < 0)
      fail(field, "\"" + expression->text() + "\" is " + number_text(value) + "; it must be a number of at least 0");
    return value;
  };
  flops_ = total(spec_.flops, "flops");
  bytes_ = total(spec_.bytes, "bytes");
}

void KernelProblem::bind_args() {
  for (std::size_t i = 0; i < spec_.args.size(); ++i) {
    const KernelArg& arg = spec_.args[i];
    BoundArg bound{arg.name, arg.kind, arg.dtype, 0, 0, 0, arg.init, arg.is_output, arg.data};
    const std::string field = "args[" + std::to_string(i) + "]";
    try {
      if (arg.is_buffer()) {
        bound.count = arg.count->evaluate_integer(values_->fixed);
        if (bound.count < 1) fail(field + ".count", "\"" + arg.count->text() + "\" is " + std::to_string(bound.count) + "; a buffer needs at least 1 element");
        const double bytes = static_cast<double>(bound.count) * static_cast<double>(data_type_bytes(arg.dtype));
        if (bytes > kMaxTensorBytes)
          fail(field + ".count", "\"" + arg.count->text() + "\" is " + std::to_string(bound.count) + " elements, more than the " +
                                     std::to_string(static_cast<int>(kMaxTensorBytes / (1 << 30))) + " GiB a buffer may take");
        bound.bytes = static_cast<std::int64_t>(bytes);
      } else if (is_floating(arg.dtype)) {
        bound.value = arg.value->evaluate(values_->fixed);
        if (!std::isfinite(bound.value)) fail(field + ".value", "\"" + arg.value->text() + "\" is not a finite number");
      } else {
        bound.value = static_cast<double>(arg.value->evaluate_integer(values_->fixed));
        const auto [low, high] = integer_range(arg.dtype);
        if (bound.value < low || bound.value > high)
          fail(field + ".value", "\"" + arg.value->text() + "\" is " + std::to_string(static_cast<std::int64_t>(bound.value)) +
                                     ", outside " + std::string(data_type_name(arg.dtype)));
      }
    } catch (const std::domain_error& error) {
      fail(field + (arg.is_buffer() ? ".count" : ".value"), error.what());
    }
    args_.push_back(std::move(bound));
  }
}

void KernelProblem::check_expected_files() const {
  for (const BoundArg& arg : args_) {
    if (arg.data.empty()) continue;
    std::error_code error;
    const auto size = std::filesystem::file_size(arg.data, error);
    if (error) fail("args." + arg.name + ".data", "cannot read " + arg.data.string());
    if (static_cast<std::int64_t>(size) != arg.bytes)
      fail("args." + arg.name + ".data", arg.data.string() + " has " + std::to_string(size) + " bytes; '" + arg.name +
                                             "' has " + std::to_string(arg.bytes));
  }
  if (spec_.check.kind != KernelCheck::Kind::kExpected) return;
  std::size_t file = 0;
  for (const BoundArg& arg : args_) {
    if (!arg.is_output) continue;
    const std::filesystem::path& path = spec_.check.expected.at(file++);
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error) fail("check.expected", "cannot read " + path.string());
    if (static_cast<std::int64_t>(size) != arg.bytes)
      fail("check.expected", path.string() + " has " + std::to_string(size) + " bytes; output '" + arg.name + "' has " +
                                 std::to_string(arg.bytes));
  }
}

void KernelProblem::bind_reference_launch() {
  if (!spec_.check.reference_launch) return;
  const LaunchOutcome outcome = evaluate_launch(*spec_.check.reference_launch, "check", values_->fixed,
                                                values_->launch_model, values_->work_group_limits);
  if (!outcome.problem.empty()) fail(outcome.field, outcome.problem);
  reference_launch_ = outcome.size;
}

void KernelProblem::build_space() {
  for (const KernelKnob& knob : spec_.knobs) {
    if (knob.is_numeric()) space_.add(search_space::ValuesKnob{knob.name, knob.numbers});
    else space_.add(search_space::ChoiceKnob{knob.name, knob.strings});
  }
  for (const Expression& rule : spec_.rules) {
    space_.add_constraint(rule.text(), [values = values_, rule](const search_space::ConfigView& view) {
      return rule.evaluate_condition(values->of(view.config()));
    });
  }
  if (!spec_.launch) return;
  const std::string description =
      values_->launch_model == LaunchModel::kGridBlock
          ? "launch: positive whole grid and block sizes, a block and its shared memory within the device's limits"
          : "launch: positive whole sizes, local dividing global, a work-group within the device's limits";
  space_.add_constraint(description, [values = values_](const search_space::ConfigView& view) {
    return evaluate_launch(*values->launch, "launch", values->of(view.config()), values->launch_model, values->work_group_limits)
        .problem.empty();
  });
}

std::vector<KernelDefine> KernelProblem::defines(const search_space::Config& config) const {
  std::vector<KernelDefine> defines;
  for (std::size_t k = 0; k < spec_.knobs.size(); ++k)
    defines.push_back({spec_.knobs[k].name, spec_.knobs[k].value_text(config.options.at(k))});
  return defines;
}

std::vector<std::string> KernelProblem::build_options(const search_space::Config& config) const {
  std::vector<std::string> options;
  for (const KernelDefine& define : defines(config)) options.push_back("-D" + define.name + "=" + define.value);
  options.insert(options.end(), spec_.build_options.begin(), spec_.build_options.end());
  return options;
}

std::string KernelProblem::entry(const search_space::Config& config) const { return instantiated(spec_.entry, config); }

std::string KernelProblem::reference_entry(const search_space::Config& config) const {
  return instantiated(spec_.check.reference, config);
}

// The parser has checked a template entry's form, so a scan for identifier tokens suffices; a
// token after '::' is a member of a scope (std::size_t), not one of the file's names.
std::string KernelProblem::instantiated(const std::string& entry, const search_space::Config& config) const {
  const auto open = entry.find('<');
  if (open == std::string::npos) return entry;
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  const auto value_of = [&](const std::string& name) {
    for (std::size_t k = 0; k < spec_.knobs.size(); ++k)
      if (spec_.knobs[k].name == name) return spec_.knobs[k].value_text(config.options.at(k));
    for (const Extent& extent : extents_)
      if (extent.name == name) return std::to_string(extent.value);
    return name;
  };
  std::string result = entry.substr(0, open);
  for (std::size_t i = open; i < entry.size();) {
    if (!is_word(entry[i])) {
      result += entry[i++];
      continue;
    }
    std::size_t end = i;
    while (end < entry.size() && is_word(entry[end])) ++end;
    const std::string token = entry.substr(i, end - i);
    const bool is_scoped = i >= 2 && entry.compare(i - 2, 2, "::") == 0;
    result += is_scoped || std::isdigit(static_cast<unsigned char>(token[0])) ? token : value_of(token);
    i = end;
  }
  return result;
}

LaunchSize KernelProblem::launch(const search_space::Config& config) const {
  if (!spec_.launch) throw std::logic_error(spec_.file.string() + ": a " + spec_.backend + " kernel has no launch");
  const LaunchOutcome outcome =
      evaluate_launch(*spec_.launch, "launch", values_->of(config), values_->launch_model, values_->work_group_limits);
  if (!outcome.problem.empty()) fail(outcome.field, outcome.problem);
  return outcome.size;
}

std::vector<double> KernelProblem::expression_values(const search_space::Config& config) const {
  return values_->of(config);
}

}  // namespace optune::kernels
