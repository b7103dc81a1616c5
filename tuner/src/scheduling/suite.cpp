#include "optune/tuner/scheduling/suite.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/kernels/operator_catalog.hpp"
#include "scheduling/suite_toml.hpp"

namespace optune::tuner {
namespace {

[[noreturn]] void fail(const std::string& source, const toml::source_region& where, const std::string& problem) {
  throw SuiteError(one_line(source + ":" + std::to_string(where.begin.line) + ": " + problem));
}

std::string required_string(const toml::table& table, const char* key, const std::string& source) {
  const toml::node* node = table.get(key);
  if (!node) fail(source, table.source(), std::string("missing '") + key + "'");
  auto value = node->value<std::string>();
  if (!value) fail(source, node->source(), std::string("'") + key + "' must be a string");
  return *value;
}

int parse_layout_key(const toml::table& table, const std::string& source) {
  const std::string name = required_string(table, "layout", source);
  try {
    return kernels::parse_layout(name);
  } catch (const std::invalid_argument& error) {
    fail(source, table.get("layout")->source(), error.what());
  }
}

// A user kernel's entry: its file, relative to the suite's, and its extents (`shape`, default the
// file's). Operator keys do not go with it.
SuiteEntry kernel_entry(const toml::table& table, const std::string& source) {
  for (const char* key : {"op", "layout", "input_layout", "dtype"})
    if (table.contains(key)) fail(source, table.get(key)->source(), std::string("'") + key + "' does not go with 'kernel'");
  const std::filesystem::path file =
      std::filesystem::absolute(std::filesystem::path(source).parent_path() / required_string(table, "kernel", source));
  const kernels::KernelSpec spec = backends::load_kernel_file(file);
  const std::string shape = table.contains("shape") ? required_string(table, "shape", source) : "";
  SuiteEntry entry;
  entry.workload = kernels::kernel_workload(spec.name, kernels::resolve_extents(spec, shape));
  entry.kernel_file = file.string();
  return entry;
}

// An operator with a layout (convolutions) takes its own `layout` key, else a layout named in its
// shape, else the suite's; with `input_layout = "nchw"` it reads NCHW whatever that layout is (a
// network's first layer).
// A `dtype` key's type ("bf16"), or nullopt where the table has none.
std::optional<kernels::DataType> parse_dtype_key(const toml::table& table, const std::string& source) {
  if (!table.contains("dtype")) return std::nullopt;
  try {
    return kernels::parse_data_type(required_string(table, "dtype", source));
  } catch (const std::invalid_argument& error) {
    fail(source, table.get("dtype")->source(), std::string("dtype: ") + error.what());
  }
}

// An entry's dtype is its own `dtype` key, else one named in its shape, else the file's (f32).
SuiteEntry parse_entry(const toml::table& table, std::size_t index, const std::string& source, int suite_layout,
                       std::optional<kernels::DataType> suite_dtype) {
  static const std::set<std::string> kKnownKeys = {"name", "op", "shape", "count", "layout", "input_layout", "kernel",
                                                   "dtype"};
  for (const auto& [key, node] : table)
    if (!kKnownKeys.count(std::string(key.str())))
      fail(source, node.source(), "unknown key '" + std::string(key.str()) + "' in [[workload]]");
  SuiteEntry entry;
  try {
    if (table.contains("kernel")) {
      entry = kernel_entry(table, source);
    } else {
      const std::string shape = required_string(table, "shape", source);
      std::optional<kernels::DataType> dtype = parse_dtype_key(table, source);
      if (!dtype && shape.find("dtype") == std::string::npos) dtype = suite_dtype;
      entry.workload = kernels::parse_workload(kernels::parse_op(required_string(table, "op", source)), shape, dtype);
      const bool layout_in_shape = shape.find("layout") != std::string::npos;
      if (table.contains("layout")) {
        if (layout_in_shape) fail(source, table.source(), "layout given both in 'shape' and in 'layout'");
        entry.workload.layout_block = parse_layout_key(table, source);
      } else if (!layout_in_shape && kernels::operator_entry(entry.workload.op).has_layout()) {
        entry.workload.layout_block = suite_layout;
      }
      if (table.contains("input_layout")) {
        if (required_string(table, "input_layout", source) != "nchw") {
          fail(source, table.get("input_layout")->source(),
               "input_layout: only \"nchw\" (a first layer reading the image) is known");
        }
        entry.workload.nchw_input = entry.workload.layout_block != kernels::kLayoutNchw;
      }
    }
    kernels::validate_workload(entry.workload);
  } catch (const SuiteError&) {
    throw;
  } catch (const std::invalid_argument& error) {
    fail(source, table.source(), error.what());
  }
  entry.name = table.contains("name") ? required_string(table, "name", source) : "workload" + std::to_string(index + 1);
  if (const toml::node* count = table.get("count")) {
    auto value = count->value<std::int64_t>();
    if (!value || *value < 1 || *value > 1000000) fail(source, count->source(), "'count' must be a whole number from 1 to 1000000");
    entry.count = static_cast<int>(*value);
  }
  return entry;
}

}  // namespace

std::vector<SuiteEntry> parse_workload_tables(const toml::table& root, const std::string& source, int layout,
                                              std::optional<kernels::DataType> dtype_override) {
  const toml::array* workloads = root["workload"].as_array();
  if (!workloads || workloads->empty()) fail(source, root.source(), "no [[workload]] tables");
  std::vector<SuiteEntry> entries;
  std::set<std::string> names, keys;
  std::optional<kernels::DataType> dtype = parse_dtype_key(root, source);
  if (dtype_override) dtype = dtype_override;
  for (std::size_t i = 0; i < workloads->size(); ++i) {
    const toml::table* table = (*workloads)[i].as_table();
    if (!table) fail(source, (*workloads)[i].source(), "each workload must be a [[workload]] table");
    SuiteEntry entry = parse_entry(*table, i, source, layout, dtype);
    if (!names.insert(entry.name).second) fail(source, table->source(), "duplicate workload name '" + entry.name + "'");
    if (!keys.insert(entry.workload.key()).second)
      fail(source, table->source(), "workload " + entry.workload.key() + " is listed twice; give it one entry with its count");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Suite parse_suite(const std::string& text, const std::string& source, std::optional<int> layout,
                  std::optional<kernels::DataType> dtype) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    fail(source, error.source(), std::string(error.description()));
  }
  Suite suite;
  suite.name = required_string(root, "name", source);
  if (root.contains("description")) suite.description = required_string(root, "description", source);
  if (!layout && root.contains("layout")) layout = parse_layout_key(root, source);
  suite.layout_block = layout.value_or(kernels::kLayoutNchw);
  suite.entries = parse_workload_tables(root, source, suite.layout_block, dtype);
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    if (name != "name" && name != "description" && name != "workload" && name != "layout" && name != "dtype")
      fail(source, node.source(), "unknown key '" + name + "'");
  }
  return suite;
}

Suite load_suite(const std::string& path, std::optional<int> layout, std::optional<kernels::DataType> dtype) {
  std::ifstream in(path);
  if (!in) throw SuiteError(path + ": cannot read the suite file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path, layout, dtype);
}

}  // namespace optune::tuner
