// A shape range's measured dispatch as the database keeps it (issue 38): which template, target
// and device it was measured for, the range (its lowest and highest shapes as workload keys) and
// the rule as JSON (tuner/results/shape_dispatch.hpp reads it). A newer rule of the same range,
// target and device replaces an older one; both stay stored.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace optune::db {

struct DispatchRecord {
  std::int64_t id = 0;
  std::string template_name;
  std::string target;
  std::string device_id;
  std::string low_key, high_key;  // e.g. gemm.f32.M1.N768.K768 and gemm.f32.M2048.N768.K768
  nlohmann::json rule;
  double timestamp = 0;           // unix seconds
  std::string optune_version;
};

// A rule as a line of `optune export`: {"dispatch_rule": {"template", "target", "device_id",
// "low", "high", "rule", "timestamp", "optune_version"}} (no id: the importing database numbers it).
nlohmann::json dispatch_line(const DispatchRecord& dispatch);
// Whether a JSON line is a rule's (else a record's).
bool is_dispatch_line(const nlohmann::json& line);
// Throws std::invalid_argument naming the field that is missing, of the wrong type or empty.
DispatchRecord dispatch_from_line(const nlohmann::json& line);

}  // namespace optune::db
