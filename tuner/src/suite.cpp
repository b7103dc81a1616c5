#include "optune/tuner/suite.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "suite_toml.hpp"

namespace optune::tuner {
namespace {

[[noreturn]] void fail(const std::string& source, const toml::source_region& where, const std::string& problem) {
  throw SuiteError(source + ":" + std::to_string(where.begin.line) + ": " + problem);
}

std::string required_string(const toml::table& table, const char* key, const std::string& source) {
  const toml::node* node = table.get(key);
  if (!node) fail(source, table.source(), std::string("missing '") + key + "'");
  auto value = node->value<std::string>();
  if (!value) fail(source, node->source(), std::string("'") + key + "' must be a string");
  return *value;
}

SuiteEntry parse_entry(const toml::table& table, std::size_t index, const std::string& source) {
  static const std::set<std::string> kKnownKeys = {"name", "op", "shape", "count"};
  for (const auto& [key, node] : table)
    if (!kKnownKeys.count(std::string(key.str())))
      fail(source, node.source(), "unknown key '" + std::string(key.str()) + "' in [[workload]]");
  SuiteEntry entry;
  try {
    entry.workload = kernels::parse_workload(kernels::parse_op(required_string(table, "op", source)),
                                             required_string(table, "shape", source));
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

std::vector<SuiteEntry> parse_workload_tables(const toml::table& root, const std::string& source) {
  const toml::array* workloads = root["workload"].as_array();
  if (!workloads || workloads->empty()) fail(source, root.source(), "no [[workload]] tables");
  std::vector<SuiteEntry> entries;
  std::set<std::string> names, keys;
  for (std::size_t i = 0; i < workloads->size(); ++i) {
    const toml::table* table = (*workloads)[i].as_table();
    if (!table) fail(source, (*workloads)[i].source(), "each workload must be a [[workload]] table");
    SuiteEntry entry = parse_entry(*table, i, source);
    if (!names.insert(entry.name).second) fail(source, table->source(), "duplicate workload name '" + entry.name + "'");
    if (!keys.insert(entry.workload.key()).second)
      fail(source, table->source(), "workload " + entry.workload.key() + " is listed twice; give it one entry with its count");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Suite parse_suite(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    fail(source, error.source(), std::string(error.description()));
  }
  Suite suite;
  suite.name = required_string(root, "name", source);
  if (root.contains("description")) suite.description = required_string(root, "description", source);
  suite.entries = parse_workload_tables(root, source);
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    if (name != "name" && name != "description" && name != "workload")
      fail(source, node.source(), "unknown key '" + name + "'");
  }
  return suite;
}

Suite load_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SuiteError(path + ": cannot read the suite file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path);
}

}  // namespace optune::tuner
