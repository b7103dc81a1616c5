// TuningRecord: one measurement of one config, as stored in the database and exported as a JSON
// line. Plain data; the database fills `id` on insert. Failed candidates are records too, with
// error_kind naming the failure (DESIGN.md's measure result).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace optune::db {

struct TuningRecord {
  std::int64_t id = 0;                // assigned by the database
  std::string workload_key;           // kernels::Workload::key()
  std::string template_name;          // kernels::KernelTemplate::name()
  std::string target;                 // kernels::Target::str()
  std::string device_id;              // kernels::DeviceInfo::fingerprint_id()
  nlohmann::json device_fingerprint;  // kernels::DeviceInfo::fingerprint()
  nlohmann::json config;              // ConfigSpace::to_json(), knob name -> value
  std::vector<double> costs;          // seconds, one per repeat
  double median_seconds = 0;          // median of costs; 0 when the candidate failed
  double gflops = 0;                  // 0 when the candidate failed
  std::string error_kind = "ok";      // ok, build_error, runtime_error, timeout, wrong_answer, crash, transport_error
  std::string error_message;
  double build_seconds = 0;
  double timestamp = 0;               // unix seconds
  std::string tuner;                  // "random", "grid", "xgb", "default", "remeasure", ...
  std::string run_id;                 // groups the records of one tuning run
  std::string optune_version;
  bool is_default = false;            // the template's default config

  bool ok() const { return error_kind == "ok"; }
  // The link to a remote device failed, not the config (transport_error): the record says nothing
  // of the config, which counts as unmeasured and is measured again by a later run.
  bool is_transport_failure() const { return error_kind == "transport_error"; }
  // Canonical config text (sorted keys, no spaces): the identity of a config within a task.
  std::string config_text() const { return config.dump(); }
};

nlohmann::json to_json(const TuningRecord& record);  // every field but id
// Throws std::invalid_argument naming the missing or mistyped field.
TuningRecord record_from_json(const nlohmann::json& json);

}  // namespace optune::db
