// Kernel Tuner cache files to records of a kernel file's workload and back.
#include "optune/tuner/interop/kernel_tuner_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "optune/kernels/kernel_file_template.hpp"
#include "optune/measure/measure_result.hpp"
#include "optune/tuner/search/record_check.hpp"

namespace optune::tuner {
namespace {

constexpr double kSecondsPerMs = 1e-3;

const kernels::KernelFileBinding& binding_of(const measure::MeasureTask& task) {
  const auto* binding = kernels::kernel_file_of(*task.kernel_template);
  if (binding == nullptr) throw std::logic_error("a Kernel Tuner cache maps onto a kernel file's template only");
  return *binding;
}

std::vector<std::string> knob_names(const search_space::ConfigSpace& space) {
  std::vector<std::string> names;
  for (const auto& knob : space.knobs()) names.push_back(std::visit([](const auto& k) { return k.name; }, knob));
  return names;
}

// The cache's parameters and the file's knobs are one set of names.
void check_parameters(const LandscapeFile& cache, const kernels::KernelSpec& spec) {
  const auto parameters = knob_names(cache.task->space);
  std::vector<std::string> knobs;
  for (const auto& knob : spec.knobs) knobs.push_back(knob.name);
  for (const auto& parameter : parameters)
    if (std::find(knobs.begin(), knobs.end(), parameter) == knobs.end())
      throw std::invalid_argument("Kernel Tuner parameter '" + parameter + "' of " + cache.name + " is not a knob of " +
                                  spec.file.string() + " (its knobs: " + fmt::format("{}", fmt::join(knobs, ", ")) + ")");
  for (const auto& knob : knobs)
    if (std::find(parameters.begin(), parameters.end(), knob) == parameters.end())
      throw std::invalid_argument("knob '" + knob + "' of " + spec.file.string() + " is not a parameter of " +
                                  cache.name + " (its parameters: " + fmt::format("{}", fmt::join(parameters, ", ")) + ")");
}

// A value as Kernel Tuner writes it in a cache key: str() of the value.
std::string key_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Kernel Tuner's key of a configuration: its values in parameter order, joined by commas.
std::string cache_key(const search_space::ConfigSpace& space, const search_space::Config& config) {
  std::string key;
  for (std::size_t k = 0; k < config.options.size(); ++k) {
    if (k > 0) key += ',';
    key += key_text(space.option_json(k, config.options[k]));
  }
  return key;
}

db::TuningRecord record_of_entry(const LandscapeFile& cache, std::size_t i, const measure::MeasureTask& task,
                                 const std::string& run_id) {
  const LandscapeEntry& entry = cache.entries[i];
  db::TuningRecord record;
  record.workload_key = task.workload.key();
  record.template_name = task.kernel_template->name();
  record.target = task.target.str();
  record.device_id = task.device.fingerprint_id();
  record.device_fingerprint = task.device.fingerprint();
  record.config = task.space.to_json(task.space.from_json(cache.task->space.to_json(cache.configs[i])));
  record.build_seconds = entry.compile_ms * kSecondsPerMs;
  record.timestamp = parse_kernel_tuner_timestamp(entry.timestamp).value_or(0);
  record.tuner = kKernelTunerTuner;
  record.run_id = run_id;
  if (std::isnan(cache.times[i])) {
    record.error_kind = error_kind_of_failure(entry.failure);
    record.error_message = "Kernel Tuner: " + entry.failure;
    return record;
  }
  if (entry.samples.empty()) record.costs = {cache.times[i] * kSecondsPerMs};
  for (double sample : entry.samples) record.costs.push_back(sample * kSecondsPerMs);
  record.median_seconds = measure::median(record.costs);
  record.gflops = task.workload.flops() / record.median_seconds / 1e9;
  return record;
}

// A number of a knob as Kernel Tuner's Python would hold it: integers as int, others as float.
nlohmann::ordered_json knob_value_json(const kernels::KernelKnob& knob, std::size_t option) {
  if (!knob.is_numeric()) return knob.strings.at(option);
  const double value = knob.numbers.at(option);
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return value;
}

// Python's json.dumps separators (", " and ": "), as Kernel Tuner writes its entries.
std::string python_json(const nlohmann::ordered_json& value) {
  if (value.is_array()) {
    std::string text = "[";
    for (std::size_t i = 0; i < value.size(); ++i) text += (i ? ", " : "") + python_json(value[i]);
    return text + "]";
  }
  if (value.is_object()) {
    std::string text = "{";
    bool first = true;
    for (const auto& [name, field] : value.items()) {
      text += (first ? "" : ", ") + nlohmann::json(name).dump() + ": " + python_json(field);
      first = false;
    }
    return text + "}";
  }
  return value.dump();
}

// One entry's fields in Kernel Tuner's order: the parameters, the objective, then its timings
// (simulation mode reads compile_time, verification_time and benchmark_time of every entry).
nlohmann::ordered_json cache_entry(const measure::MeasureTask& task, const db::TuningRecord& record,
                                   const search_space::Config& config, const std::string& unit) {
  const auto& spec = binding_of(task).spec();
  nlohmann::ordered_json entry;
  for (std::size_t k = 0; k < spec.knobs.size(); ++k)
    entry[spec.knobs[k].name] = knob_value_json(spec.knobs[k], config.options[k]);
  double benchmark_ms = 0;
  if (record.ok()) {
    entry["time"] = record.median_seconds / kSecondsPerMs;
    nlohmann::ordered_json times = nlohmann::ordered_json::array();
    for (double cost : record.costs) {
      times.push_back(cost / kSecondsPerMs);
      benchmark_ms += cost / kSecondsPerMs;
    }
    entry["times"] = times;
  } else {
    entry["time"] = kernel_tuner_failure(record.error_kind);
  }
  entry["compile_time"] = record.build_seconds / kSecondsPerMs;
  entry["verification_time"] = 0;
  entry["benchmark_time"] = benchmark_ms;
  if (record.ok() && unit != "runs/s") entry[unit] = record.gflops;
  entry["strategy_time"] = 0;
  entry["framework_time"] = 0;
  if (record.timestamp > 0) entry["timestamp"] = kernel_tuner_timestamp(record.timestamp);
  return entry;
}

// The header as Kernel Tuner's json.dumps(header, indent="") writes it, without the closing
// "}\n}" of its empty cache, so that entries follow.
std::string cache_header(const measure::MeasureTask& task) {
  const auto& spec = binding_of(task).spec();
  nlohmann::ordered_json header;
  header["device_name"] = task.device.name;
  header["kernel_name"] = spec.entry;
  header["problem_size"] = nlohmann::ordered_json::array();
  for (const auto& extent : task.workload.kernel().extents) header["problem_size"].push_back(extent.value);
  header["tune_params_keys"] = nlohmann::ordered_json::array();
  header["tune_params"] = nlohmann::ordered_json::object();
  for (const auto& knob : spec.knobs) {
    header["tune_params_keys"].push_back(knob.name);
    auto& values = header["tune_params"][knob.name] = nlohmann::ordered_json::array();
    for (std::size_t option = 0; option < knob.size(); ++option) values.push_back(knob_value_json(knob, option));
  }
  header["objective"] = "time";
  header["cache"] = nlohmann::ordered_json::object();
  std::string text = header.dump(0);
  return text.substr(0, text.size() - 3);  // "}\n}"
}

}  // namespace

std::string error_kind_of_failure(const std::string& failure) {
  if (failure == "CompilationFailedConfig" || failure == "compile") return "build_error";
  if (failure == "correctness") return "wrong_answer";
  return "runtime_error";
}

std::string kernel_tuner_failure(const std::string& error_kind) {
  return error_kind == "build_error" ? "CompilationFailedConfig" : "RuntimeFailedConfig";
}

std::optional<double> parse_kernel_tuner_timestamp(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, consumed = 0;
  double second = 0;
  char separator = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &year, &month, &day, &separator, &hour, &minute,
                  &second, &consumed) != 7 ||
      (separator != ' ' && separator != 'T'))
    return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || !(second >= 0 && second < 61))
    return std::nullopt;
  const std::string zone = text.substr(static_cast<std::size_t>(consumed));
  int offset_minutes = 0;
  if (!zone.empty() && zone != "Z") {
    int zone_hours = 0, zone_minutes = 0, zone_consumed = 0;
    if ((zone[0] != '+' && zone[0] != '-') ||
        std::sscanf(zone.c_str() + 1, "%2d:%2d%n", &zone_hours, &zone_minutes, &zone_consumed) != 2 ||
        static_cast<std::size_t>(zone_consumed) + 1 != zone.size())
      return std::nullopt;
    offset_minutes = (zone[0] == '-' ? -1 : 1) * (zone_hours * 60 + zone_minutes);
  }
  std::tm time{};
  time.tm_year = year - 1900;
  time.tm_mon = month - 1;
  time.tm_mday = day;
  time.tm_hour = hour;
  time.tm_min = minute;
  const double whole = static_cast<double>(timegm(&time));
  return whole + second - 60.0 * offset_minutes;
}

std::string kernel_tuner_timestamp(double unix_seconds) {
  auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  long long micros = std::llround((unix_seconds - static_cast<double>(whole)) * 1e6);
  if (micros >= 1'000'000) {
    ++whole;
    micros -= 1'000'000;
  }
  std::tm time{};
  gmtime_r(&whole, &time);
  std::string text = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", time.tm_year + 1900, time.tm_mon + 1,
                                 time.tm_mday, time.tm_hour, time.tm_min, time.tm_sec);
  if (micros > 0) text += fmt::format(".{:06}", micros);  // Python's str(datetime) leaves out zero microseconds
  return text + "+00:00";
}

std::vector<db::TuningRecord> records_of_cache(const LandscapeFile& cache, const measure::MeasureTask& task,
                                               const std::string& run_id) {
  check_parameters(cache, binding_of(task).spec());
  RecordCheck check;
  check.add_template(*task.kernel_template);
  std::vector<db::TuningRecord> records;
  for (std::size_t i = 0; i < cache.configs.size(); ++i) {
    const std::string where = "cache entry '" + cache_key(cache.task->space, cache.configs[i]) + "'";
    try {
      records.push_back(record_of_entry(cache, i, task, run_id));
      check.full(records.back());
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(cache.name + ": " + where + ": " + error.what());
    }
  }
  return records;
}

std::string kernel_tuner_cache_text(const measure::MeasureTask& task, const std::vector<db::TuningRecord>& records) {
  const std::string unit = binding_of(task).throughput_unit(task.workload, task.device);
  std::string text = cache_header(task);
  std::size_t written = 0;
  for (const auto& record : records) {
    if (record.is_transport_failure()) continue;
    const auto config = task.space.from_json(record.config);
    text += "\n" + nlohmann::json(cache_key(task.space, config)).dump() + ": " +
            python_json(cache_entry(task, record, config, unit)) + ",";
    ++written;
  }
  if (written == 0) throw std::invalid_argument("no record of " + task.workload.key() + " to write");
  text.pop_back();  // the last entry's comma, replaced as Kernel Tuner's close_cache() does
  return text + "}\n}";
}

}  // namespace optune::tuner
