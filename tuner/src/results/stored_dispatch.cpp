#include "optune/tuner/results/stored_dispatch.hpp"

#include <stdexcept>

#include "optune/backends/registry.hpp"
#include "optune/kernels/operator_catalog.hpp"
#include "optune/tuner/results/nearest_config.hpp"

namespace optune::tuner {

bool is_between(const kernels::ExtentValues& extents, const kernels::ExtentValues& low, const kernels::ExtentValues& high) {
  for (const auto& [name, value] : extents) {
    auto lowest = low.find(name), highest = high.find(name);
    if (lowest == low.end() || highest == high.end() || value < lowest->second || value > highest->second) return false;
  }
  return true;
}

bool is_same_kind(const kernels::Workload& a, const kernels::Workload& b) {
  return a.op == b.op && a.dtype == b.dtype && a.layout_block == b.layout_block && a.nchw_input == b.nchw_input;
}

kernels::Workload workload_at(const kernels::Workload& kind, const kernels::ExtentValues& extents) {
  kernels::Workload workload = kernels::operator_entry(kind.op).workload_from(extents, "dispatch");
  workload.dtype = kind.dtype;
  workload.layout_block = kind.layout_block;
  workload.nchw_input = kind.nchw_input;
  return workload;
}

std::optional<DispatchMatch> dispatch_for(const std::vector<db::DispatchRecord>& in_force,
                                          const kernels::Workload& workload, std::vector<std::string>& passed_over) {
  if (workload.op == kernels::Op::kKernel) return std::nullopt;  // a kernel file's sizes have no rule
  const auto& entry = kernels::operator_entry(workload.op);
  const auto extents = entry.extents_of(workload);
  for (const auto& record : in_force) {
    try {
      const auto low = kernels::parse_workload_key(record.low_key);
      const auto high = kernels::parse_workload_key(record.high_key);
      if (!is_same_kind(low, workload) || !is_same_kind(high, workload)) continue;
      if (!is_between(extents, entry.extents_of(low), entry.extents_of(high))) continue;
      DispatchRule rule = rule_from_json(record.rule);
      auto leaf = rule.leaf_of(extents);
      if (!leaf) continue;
      return DispatchMatch{record, std::move(rule), *leaf};
    } catch (const std::invalid_argument& error) {
      passed_over.push_back("dispatch rule " + std::to_string(record.id) + ": " + error.what());
    }
  }
  return std::nullopt;
}

std::optional<LeafConfig> leaf_config(const DispatchMatch& match, const kernels::Workload& workload,
                                      const kernels::DeviceInfo& device) {
  const auto& stored = match.rule.configs.at(match.rule.leaves.at(match.leaf).config);
  try {
    const auto& kernel = backends::template_of_record(match.record.template_name, stored);
    auto space = kernel.space(workload, device);
    auto config = config_for_shape(space, stored);
    if (!config) return std::nullopt;
    return LeafConfig{&kernel, std::move(space), std::move(*config)};
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

void check_dispatch_record(const db::DispatchRecord& dispatch) {
  const DispatchRule rule = rule_from_json(dispatch.rule);
  const auto low = kernels::parse_workload_key(dispatch.low_key), high = kernels::parse_workload_key(dispatch.high_key);
  if (!is_same_kind(low, high))
    throw std::invalid_argument("dispatch rule: " + dispatch.low_key + " and " + dispatch.high_key + " are not of one kind");
  const auto& entry = kernels::operator_entry(low.op);
  const auto lowest = entry.extents_of(low), highest = entry.extents_of(high);
  if (!is_between(lowest, lowest, highest))
    throw std::invalid_argument("dispatch rule: " + dispatch.low_key + " is not below " + dispatch.high_key);
  for (std::size_t l = 0; l < rule.leaves.size(); ++l)
    if (!is_between(rule.leaves[l].low, lowest, highest) || !is_between(rule.leaves[l].high, lowest, highest))
      throw std::invalid_argument("dispatch rule: leaf " + rule.leaf_name(l) + " is outside its range");
}

std::string range_text(const db::DispatchRecord& record) { return record.low_key + " .. " + record.high_key; }

}  // namespace optune::tuner
