// Workload: the canonical key and its inverse, the `--shape` parser, layouts, and the checks every
// operator shares; what an operator's extents are and mean is its entry's in the catalog
// (operator_catalog.hpp). Both parsers end in validate_workload(), so a workload that exists is a
// sane one.
#include "optune/kernels/workload.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "ops/entry_support.hpp"
#include "optune/kernels/operator_catalog.hpp"
#include "optune/kernels/reference.hpp"
#include "trim.hpp"

namespace optune::kernels {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The whole text as a decimal integer; nullopt for anything else ("5x", "", "1.5").
// Overflow reads as a value past any limit.
std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    return text.front() == '-' ? INT64_MIN : INT64_MAX;
  }
  if (error != std::errc()) return std::nullopt;
  return value;
}

std::string expected_names(const OperatorEntry& entry) {
  std::string names;
  for (const auto& spec : entry.extents()) {
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

std::int64_t parse_extent(std::string_view name, std::string_view text, std::string_view context) {
  const auto value = parse_integer(text);
  check_extent(name, value, text, context);
  return *value;
}

// The entry's workload of the given extents, with fallbacks for those left out.
Workload workload_from_extents(const OperatorEntry& entry, const ExtentValues& given,
                               std::string_view context) {
  ExtentValues extents;
  for (const auto& spec : entry.extents()) {
    if (const auto it = given.find(spec.name); it != given.end()) {
      extents[spec.name] = it->second;
    } else if (spec.required) {
      fail(context, std::string("missing extent ") + spec.name);
    } else {
      extents[spec.name] = spec.fallback;
    }
  }
  return entry.workload_from(extents, context);
}

[[noreturn]] void bad_key(std::string_view key, const std::string& why) {
  fail("workload key", why + " in '" + std::string(key) + "'");
}

std::string format_gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
  return text;
}

void validate_kernel(const KernelShape& shape, std::string_view context) {
  if (!is_kernel_name(shape.name)) fail(context, "kernel name '" + shape.name + "' is not letters, digits, _ and -");
  if (shape.extents.empty()) fail(context, "kernel " + shape.name + " has no extents");
  for (const Extent& extent : shape.extents) {
    if (extent.value < 1 || extent.value > kMaxKernelExtent)
      fail(context, extent.name + "=" + std::to_string(extent.value) + " must be from 1 to " +
                        std::to_string(kMaxKernelExtent));
  }
}

void validate(const Workload& workload, std::string_view context) {
  if (workload.op == Op::kKernel) return validate_kernel(workload.kernel(), context);
  try {
    layout_name(workload.layout_block);
  } catch (const std::invalid_argument& error) {
    fail(context, error.what());
  }
  const OperatorEntry& entry = operator_entry(workload.op);
  entry.validate(workload, context);
  // The widest inputs a template may read for an integer dtype: u8 activations, s8 weights.
  if (!is_floating(workload.dtype) &&
      !accumulation_fits_int32(workload, {DataType::kU8, DataType::kI8})) {
    fail(context, "a sum of " + std::to_string(static_cast<long long>(entry.reduction_length(workload))) + " " +
                      std::string(data_type_name(workload.dtype)) + " products could overflow its int32 accumulator");
  }
  const double bytes = entry.tensor_elements(workload) * double(data_type_bytes(workload.dtype));
  if (bytes > kMaxTensorBytes) {
    fail(context, "tensors would need " + format_gib(bytes) + ", more than the " +
                      std::to_string(static_cast<long long>(kMaxTensorBytes / double(1ull << 30))) +
                      " GiB limit");
  }
}

}  // namespace

std::string_view op_name(Op op) { return op == Op::kKernel ? "kernel" : operator_entry(op).name(); }

bool is_kernel_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || !std::isalpha(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

std::optional<std::int64_t> kernel_extent_value(std::string_view digits) {
  if (digits.empty() || digits.size() > 10) return std::nullopt;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  const std::int64_t value = std::stoll(std::string(digits));
  if (value < 1 || value > kMaxKernelExtent) return std::nullopt;
  return value;
}

std::string kernel_workload_key(const std::string& kernel_name, const std::vector<Extent>& extents) {
  std::string key = "kernel." + kernel_name;
  for (const Extent& extent : extents) key += "." + extent.name + std::to_string(extent.value);
  return key;
}

KernelWorkloadKey parse_kernel_workload_key(std::string_view key) {
  const auto bad = [&](const std::string& problem) {
    return std::invalid_argument("workload key '" + std::string(key) + "': " + problem);
  };
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    fields.emplace_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (fields.size() < 3 || fields[0] != "kernel" || fields[1].empty())
    throw bad("not kernel.<name>.<extent><value>...");
  KernelWorkloadKey parsed{fields[1], {}};
  for (std::size_t i = 2; i < fields.size(); ++i) {
    const std::string& field = fields[i];
    const auto digits = field.find_last_not_of("0123456789") + 1;
    const std::optional<std::int64_t> value = kernel_extent_value(std::string_view(field).substr(digits));
    if (digits == 0 || !value) throw bad("'" + field + "' is not an extent name followed by its value");
    parsed.extents.push_back({field.substr(0, digits), *value});
  }
  return parsed;
}

std::string kernel_shape_text(const KernelShape& shape) {
  std::string text;
  for (const Extent& extent : shape.extents)
    text += (text.empty() ? "" : ",") + extent.name + "=" + std::to_string(extent.value);
  return text;
}

Workload kernel_workload(const std::string& kernel_name, const std::vector<Extent>& extents, double work) {
  Workload workload;
  workload.op = Op::kKernel;
  workload.shape = KernelShape{kernel_name, extents, work};
  return workload;
}

std::string layout_name(int layout_block) {
  if (layout_block == kLayoutNchw) return "nchw";
  if (layout_block == kLayoutNhwc) return "nhwc";
  if (layout_block == 4 || layout_block == 8 || layout_block == 16) return "nchw" + std::to_string(layout_block) + "c";
  throw std::invalid_argument("layout: no layout has channel blocks of " + std::to_string(layout_block));
}

int parse_layout(std::string_view name) {
  for (int block : {kLayoutNchw, 4, 8, 16, kLayoutNhwc}) {
    if (trim(name) == layout_name(block)) return block;
  }
  throw std::invalid_argument("layout: unknown layout '" + std::string(name) +
                              "' (expected nchw, nchw4c, nchw8c, nchw16c or nhwc)");
}

std::string layouts_name(Layouts layouts) {
  const std::string output = layout_name(layouts.block);
  return layouts.nchw_input && is_blocked_layout(layouts.block) ? "nchw-" + output : output;
}

Layouts parse_layouts(std::string_view name) {
  const std::string_view text = trim(name);
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    try {
      return {parse_layout(text), false};
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("layout: unknown layout '" + std::string(text) +
                                  "' (expected nchw, nchw4c, nchw8c, nchw16c or nhwc, or nchw-nchw8c for a "
                                  "layer that reads NCHW and writes nchw8c)");
    }
  }
  if (trim(text.substr(0, dash)) != "nchw") {
    throw std::invalid_argument("layout: '" + std::string(text) +
                                "': only an NCHW input may change layout (nchw-nchw8c)");
  }
  const int block = parse_layout(text.substr(dash + 1));
  if (block == kLayoutNchw) throw std::invalid_argument("layout: write 'nchw', not 'nchw-nchw'");
  if (!is_blocked_layout(block)) {
    throw std::invalid_argument("layout: '" + std::string(text) +
                                "' is not a layout: an NCHW input goes only into a blocked layout (nchw-nchw8c)");
  }
  return {block, true};
}

Op parse_op(std::string_view name) {
  if (const OperatorEntry* entry = find_operator(name)) return entry->op();
  throw std::invalid_argument("op: unknown op '" + std::string(name) + "' (expected " +
                              operator_names(", ", " or ") + ")");
}

// A negative numerator means even the first window does not fit; C++ division would round it
// toward zero and report one output row.
std::int64_t Conv2dShape::out_h() const {
  const std::int64_t span = H + 2 * pad - dilation * (R - 1) - 1;
  return span < 0 || stride < 1 ? 0 : span / stride + 1;
}

std::int64_t Conv2dShape::out_w() const {
  const std::int64_t span = W + 2 * pad - dilation * (S - 1) - 1;
  return span < 0 || stride < 1 ? 0 : span / stride + 1;
}

std::string Workload::key() const {
  if (op == Op::kKernel) return kernel_workload_key(kernel().name, kernel().extents);
  const OperatorEntry& entry = operator_entry(op);
  std::string key(entry.name());
  if (entry.has_layout()) {
    key += '.';
    key += layouts_name(layouts());
  }
  key += '.';
  key += data_type_name(dtype);
  const ExtentValues extents = entry.extents_of(*this);
  for (const auto& field : entry.key_fields()) {
    key += '.';
    key += field.prefix;
    key += std::to_string(extents.at(field.extent));
  }
  return key;
}

double Workload::flops() const { return op == Op::kKernel ? kernel().work : operator_entry(op).flops(*this); }

void validate_workload(const Workload& workload) { validate(workload, "shape"); }

namespace {

// "M,N,K": the extents in order, as an operator with a positional `--shape` takes them.
std::string positional_names(const OperatorEntry& entry) {
  std::string names;
  for (const auto& spec : entry.extents()) {
    if (!names.empty()) names += ",";
    names += spec.name;
  }
  return names;
}

Workload parse_positional_shape(const OperatorEntry& entry, std::string_view text, std::string_view context) {
  const auto items = split(text, ',');
  if (!entry.takes_positional_shape()) {
    fail(context, std::string(entry.name()) + " takes named extents (" + expected_names(entry) + "), got '" +
                      std::string(text) + "'");
  }
  const auto& specs = entry.extents();
  if (items.size() != specs.size()) {
    fail(context, std::string(entry.name()) + " takes " + std::to_string(specs.size()) + " extents " +
                      positional_names(entry) + ", got " + std::to_string(items.size()) + " in '" +
                      std::string(text) + "'");
  }
  ExtentValues extents;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    extents[specs[i].name] = parse_extent(specs[i].name, trim(items[i]), context);
  }
  return workload_from_extents(entry, extents, context);
}

Workload parse_named_shape(const OperatorEntry& entry, std::string_view text, std::string_view context) {
  ExtentValues extents;
  std::optional<Layouts> layouts;
  std::optional<DataType> dtype;
  std::vector<std::string_view> positional;  // "512,512,512,dtype=bf16": extents in order, then options
  for (const auto raw : split(text, ',')) {
    const auto item = trim(raw);
    const auto equals = item.find('=');
    if (item.empty()) fail(context, "empty extent in '" + std::string(text) + "'");
    if (equals == std::string_view::npos && entry.takes_positional_shape()) {
      positional.push_back(item);
      continue;
    }
    if (equals == std::string_view::npos) {
      fail(context, "extent '" + std::string(item) + "' has no name (write NAME=VALUE, e.g. " +
                        std::string(entry.extents()[0].name) + "=" + "512)");
    }
    const auto name = trim(item.substr(0, equals));
    const auto value = trim(item.substr(equals + 1));
    if (name == "layout" && entry.has_layout()) {
      if (layouts) fail(context, "layout given twice");
      try {
        layouts = parse_layouts(value);
      } catch (const std::invalid_argument& error) {
        fail(context, std::string(error.what()).substr(std::string_view("layout: ").size()));
      }
      continue;
    }
    if (name == "dtype") {
      if (dtype) fail(context, "dtype given twice");
      try {
        dtype = parse_data_type(value);
      } catch (const std::invalid_argument& error) {
        fail(context, error.what());
      }
      continue;
    }
    bool known = false;
    for (const auto& spec : entry.extents()) known = known || name == spec.name;
    if (!known) {
      fail(context, "unknown extent '" + std::string(name) + "' for " + std::string(entry.name()) +
                        " (expected " + expected_names(entry) + ")");
    }
    if (extents.count(name) != 0) fail(context, "extent " + std::string(name) + " given twice");
    extents[std::string(name)] = parse_extent(name, value, context);
  }
  if (!positional.empty()) {
    const auto& specs = entry.extents();
    if (!extents.empty())
      fail(context, "extent '" + std::string(positional.front()) + "' has no name (give " +
                        std::string(entry.name()) + "'s extents " + positional_names(entry) +
                        " all positional or all named)");
    if (positional.size() != specs.size())
      fail(context, std::string(entry.name()) + " takes " + std::to_string(specs.size()) + " extents " +
                        positional_names(entry) + ", got " + std::to_string(positional.size()) + " in '" +
                        std::string(text) + "'");
    for (std::size_t i = 0; i < specs.size(); ++i) extents[specs[i].name] = parse_extent(specs[i].name, positional[i], context);
  }
  Workload workload = workload_from_extents(entry, extents, context);
  workload.layout_block = layouts.value_or(Layouts{}).block;
  workload.nchw_input = layouts.value_or(Layouts{}).nchw_input;
  workload.dtype = dtype.value_or(DataType::kF32);
  return workload;
}

}  // namespace

Workload parse_workload(Op op, std::string_view shape_text, std::optional<DataType> dtype) {
  constexpr std::string_view kContext = "shape";
  const OperatorEntry& entry = operator_entry(op);
  const std::string_view text = trim(shape_text);
  if (text.empty()) {
    fail(kContext, "empty shape (expected named extents " + expected_names(entry) +
                       (entry.takes_positional_shape() ? ", or " + positional_names(entry) + ")" : ")"));
  }
  const bool named = text.find('=') != std::string_view::npos;
  Workload workload = named ? parse_named_shape(entry, text, kContext) : parse_positional_shape(entry, text, kContext);
  if (dtype) {
    const bool said_otherwise = named && text.find("dtype") != std::string_view::npos && workload.dtype != *dtype;
    if (said_otherwise)
      fail(kContext, "dtype=" + std::string(data_type_name(workload.dtype)) + " contradicts --dtype " +
                         std::string(data_type_name(*dtype)));
    workload.dtype = *dtype;
  }
  validate(workload, kContext);
  return workload;
}

Workload parse_workload_key(std::string_view key) {
  constexpr std::string_view kContext = "workload key";
  const auto parts = split(trim(key), '.');
  const auto bad = [&](const std::string& why) { bad_key(key, why); };
  if (parts[0] == "kernel") {
    const KernelWorkloadKey parsed = parse_kernel_workload_key(trim(key));
    Workload workload = kernel_workload(parsed.kernel_name, parsed.extents);
    validate(workload, kContext);
    return workload;
  }
  const OperatorEntry* entry = find_operator(parts[0]);
  if (entry == nullptr) bad("unknown op '" + std::string(parts[0]) + "'");
  const auto& fields = entry->key_fields();
  std::size_t next = 1;
  Layouts layouts;
  if (entry->has_layout()) {
    try {
      if (parts.size() < 2) throw std::invalid_argument("no layout");
      layouts = parse_layouts(parts[1]);
    } catch (const std::invalid_argument&) {
      bad("expected a layout (nchw, nchw4c, nchw8c, nchw16c, nchw-nchw8c or nhwc) after the op");
    }
    next = 2;
  }
  if (parts.size() != next + 1 + fields.size()) {
    bad("expected " + std::to_string(next + 1 + fields.size()) + " dot-separated fields, got " +
        std::to_string(parts.size()));
  }
  DataType dtype = DataType::kF32;
  try {
    dtype = parse_data_type(parts[next++]);
  } catch (const std::invalid_argument& error) {
    bad(error.what());
  }
  // Extents the key leaves out (depthwise's K and groups) take their fallbacks.
  ExtentValues extents;
  for (const auto& field : fields) {
    const auto part = parts[next++];
    const std::string_view prefix(field.prefix);
    const auto value = part.substr(0, prefix.size()) == prefix ? parse_integer(part.substr(prefix.size()))
                                                               : std::nullopt;
    if (!value) bad("expected " + std::string(prefix) + "<integer>, got '" + std::string(part) + "'");
    extents[field.extent] = value.value_or(0);
  }
  Workload workload = workload_from_extents(*entry, extents, kContext);
  workload.dtype = dtype;
  workload.layout_block = layouts.block;
  workload.nchw_input = layouts.nchw_input;
  validate(workload, kContext);
  return workload;
}

}  // namespace optune::kernels
