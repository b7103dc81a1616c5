#include <stdexcept>
#include <string>

#include "optune/db/tuning_record.hpp"

namespace optune::db {

namespace {

using nlohmann::json;

// Fields without which a record has no meaning; the others default as in TuningRecord when absent
// (so lines written by an older optune still import), but must have the right type when present.
const json& required(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end()) throw std::invalid_argument(std::string("missing field \"") + field + "\"");
  return *it;
}

[[noreturn]] void mistyped(const char* field, const char* expected) {
  throw std::invalid_argument(std::string("field \"") + field + "\" must be " + expected);
}

std::string as_string(const json& value, const char* field) {
  if (!value.is_string()) mistyped(field, "a string");
  return value.get<std::string>();
}

std::string required_string(const json& object, const char* field) {
  std::string value = as_string(required(object, field), field);
  if (value.empty()) mistyped(field, "a non-empty string");
  return value;
}

void read_string(const json& object, const char* field, std::string& out) {
  if (const auto it = object.find(field); it != object.end()) out = as_string(*it, field);
}

void read_number(const json& object, const char* field, double& out) {
  const auto it = object.find(field);
  if (it == object.end()) return;
  if (!it->is_number()) mistyped(field, "a number");
  out = it->get<double>();
}

void read_bool(const json& object, const char* field, bool& out) {
  const auto it = object.find(field);
  if (it == object.end()) return;
  if (!it->is_boolean()) mistyped(field, "true or false");
  out = it->get<bool>();
}

// A number, or null / absent for unknown.
std::optional<double> read_optional_number(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) mistyped(field, "a number or null");
  return it->get<double>();
}

std::vector<double> read_costs(const json& object) {
  const auto it = object.find("costs");
  if (it == object.end()) return {};
  if (!it->is_array()) mistyped("costs", "an array of numbers");
  std::vector<double> costs;
  costs.reserve(it->size());
  for (const json& cost : *it) {
    if (!cost.is_number()) mistyped("costs", "an array of numbers");
    costs.push_back(cost.get<double>());
  }
  return costs;
}

}  // namespace

nlohmann::json to_json(const TuningRecord& record) {
  json line{
      {"workload_key", record.workload_key},
      {"template_name", record.template_name},
      {"target", record.target},
      {"device_id", record.device_id},
      {"device_fingerprint", record.device_fingerprint},
      {"config", record.config},
      {"costs", record.costs},
      {"median_seconds", record.median_seconds},
      {"gflops", record.gflops},
      {"error_kind", record.error_kind},
      {"error_message", record.error_message},
      {"build_seconds", record.build_seconds},
      {"timestamp", record.timestamp},
      {"tuner", record.tuner},
      {"run_id", record.run_id},
      {"optune_version", record.optune_version},
      {"is_default", record.is_default},
  };
  if (record.spread) line["spread"] = *record.spread;
  if (record.load) line["load"] = *record.load;
  if (record.device_load) line["device_load"] = *record.device_load;
  if (record.check_seconds) line["check_seconds"] = *record.check_seconds;
  if (record.timing_seconds) line["timing_seconds"] = *record.timing_seconds;
  if (record.check_error) line["check_error"] = *record.check_error;
  if (record.winner) line["winner"] = true;
  if (!record.toolchain.is_null()) line["toolchain"] = record.toolchain;
  return line;
}

TuningRecord record_from_json(const nlohmann::json& object) {
  if (!object.is_object()) throw std::invalid_argument("a record must be a JSON object");
  TuningRecord record;
  record.workload_key = required_string(object, "workload_key");
  record.template_name = required_string(object, "template_name");
  record.target = required_string(object, "target");
  record.device_id = required_string(object, "device_id");
  record.config = required(object, "config");
  if (!record.config.is_object()) mistyped("config", "an object (knob name -> value)");
  record.error_kind = required_string(object, "error_kind");
  if (const auto it = object.find("device_fingerprint"); it != object.end()) {
    if (!it->is_object() && !it->is_null()) mistyped("device_fingerprint", "an object");
    record.device_fingerprint = *it;
  }
  record.costs = read_costs(object);
  read_number(object, "median_seconds", record.median_seconds);
  read_number(object, "gflops", record.gflops);
  read_number(object, "build_seconds", record.build_seconds);
  read_number(object, "timestamp", record.timestamp);
  read_string(object, "error_message", record.error_message);
  read_string(object, "tuner", record.tuner);
  read_string(object, "run_id", record.run_id);
  read_string(object, "optune_version", record.optune_version);
  read_bool(object, "is_default", record.is_default);
  record.spread = read_optional_number(object, "spread");
  record.load = read_optional_number(object, "load");
  record.device_load = read_optional_number(object, "device_load");
  record.check_seconds = read_optional_number(object, "check_seconds");
  record.timing_seconds = read_optional_number(object, "timing_seconds");
  record.check_error = read_optional_number(object, "check_error");
  read_bool(object, "winner", record.winner);
  if (const auto it = object.find("toolchain"); it != object.end() && !it->is_null()) {
    if (!it->is_object()) mistyped("toolchain", "an object (compiler, flags)");
    for (const auto& [key, value] : it->items())
      if (!value.is_string()) mistyped("toolchain", "an object of strings");
    record.toolchain = *it;
  }
  return record;
}

}  // namespace optune::db
