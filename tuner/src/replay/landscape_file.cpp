// Reading Kernel Tuner cache files and T4 results files into a space with measured times.
#include "optune/tuner/replay/landscape_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "replay/landscape_json.hpp"

namespace optune::tuner {
namespace {

using Json = nlohmann::ordered_json;  // keeps the file's parameter order
using BadFile = BadLandscapeFile;

constexpr double kFailed = std::numeric_limits<double>::quiet_NaN();

// Times are milliseconds. Past these bounds 1 / time, or one time over another, is no longer a
// finite normal number, and no kernel's time is there.
constexpr double kShortestTime = 1e-100;
constexpr double kLongestTime = 1e100;
const std::string kNotATime = "not a time in ms (from 1e-100 to 1e100)";

std::string quoted(const Json& value) { return clipped(value.dump()); }

bool is_time(const Json& value) {
  return value.is_number() && value.get<double>() >= kShortestTime && value.get<double>() <= kLongestTime;
}

// An object's text field, `fallback` where it is absent; a field of another type is refused.
std::string text_field(const std::filesystem::path& path, const Json& object, const std::string& name,
                       const std::string& where, const std::string& fallback = "") {
  const auto field = object.find(name);
  if (field == object.end()) return fallback;
  if (!field->is_string())
    throw BadFile(path, where + (where.empty() ? "'" : ": '") + name + "' is " + quoted(*field) + ", not a string");
  return field->get<std::string>();
}

// Only a landscape of times is read: a replay minimises the objective and an import stores it as
// seconds, so another one (GFLOP/s, which is maximised) would be taken for times.
void check_objective(const std::filesystem::path& path, const std::string& objective, const std::string& where) {
  if (objective != "time")
    throw BadFile(path, where + "objective '" + clipped(objective) +
                            "' is not time: only a file tuned for time (Kernel Tuner's default) holds times");
}

// One tunable parameter: its values in the file's order, numbers as a values knob, anything else
// (strings) as a choice knob of the values' text.
struct Parameter {
  std::string name;
  std::vector<Json> values;
};

bool is_numeric(const Json& value) { return value.is_number() || value.is_boolean(); }
double numeric(const Json& value) { return value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>(); }
std::string text_of(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

search_space::Knob make_knob(const Parameter& parameter) {
  if (std::all_of(parameter.values.begin(), parameter.values.end(), is_numeric)) {
    search_space::ValuesKnob knob{parameter.name, {}};
    for (const auto& value : parameter.values) knob.values.push_back(numeric(value));
    return knob;
  }
  search_space::ChoiceKnob knob{parameter.name, {}};
  for (const auto& value : parameter.values) knob.options.push_back(text_of(value));
  return knob;
}

// Finds a configuration's option per parameter from its values by name.
class ConfigReader {
 public:
  ConfigReader(const std::filesystem::path& path, std::vector<Parameter> parameters)
      : path_(path), parameters_(std::move(parameters)) {
    for (const auto& parameter : parameters_) {
      std::map<std::string, std::uint32_t> options;
      for (std::size_t i = 0; i < parameter.values.size(); ++i)
        options.emplace(key_of(parameter.values[i]), static_cast<std::uint32_t>(i));
      options_.push_back(std::move(options));
    }
  }

  search_space::Config read(const Json& values, const std::string& where) const {
    if (!values.is_object()) throw BadFile(path_, where + " is not an object");
    search_space::Config config;
    for (std::size_t k = 0; k < parameters_.size(); ++k) {
      const std::string name = clipped(parameters_[k].name);
      auto value = values.find(parameters_[k].name);
      if (value == values.end()) throw BadFile(path_, where + " has no value for '" + name + "'");
      auto option = options_[k].find(key_of(*value));
      if (option == options_[k].end())
        throw BadFile(path_, where + ": '" + name + "' = " + quoted(*value) + " is not one of its values");
      config.options.push_back(option->second);
    }
    return config;
  }

  const std::vector<Parameter>& parameters() const { return parameters_; }

 private:
  // 16 and 16.0 are one value.
  static std::string key_of(const Json& value) {
    return is_numeric(value) ? Json(numeric(value)).dump() : text_of(value);
  }

  std::filesystem::path path_;
  std::vector<Parameter> parameters_;
  std::vector<std::map<std::string, std::uint32_t>> options_;
};

struct Measured {
  std::vector<search_space::Config> configs;
  std::vector<double> times;
  std::vector<LandscapeEntry> entries;
  std::size_t invalid = 0;
};

// A Kernel Tuner entry's single runs: times, or none.
std::vector<double> samples_of(const std::filesystem::path& path, const Json& entry, const std::string& where) {
  std::vector<double> samples;
  const auto times = entry.find("times");
  if (times == entry.end() || !times->is_array()) return samples;
  for (const auto& time : *times) {
    if (!is_time(time)) throw BadFile(path, where + ": 'times' holds " + quoted(time) + ", " + kNotATime);
    samples.push_back(time.get<double>());
  }
  return samples;
}

LandscapeEntry kernel_tuner_entry(const std::filesystem::path& path, const Json& entry, const std::string& failure,
                                  const std::string& where) {
  LandscapeEntry details;
  details.failure = failure;
  if (failure.empty()) details.samples = samples_of(path, entry, where);
  if (auto compile = entry.find("compile_time");
      compile != entry.end() && compile->is_number() && std::isfinite(compile->get<double>()) && compile->get<double>() >= 0)
    details.compile_ms = compile->get<double>();
  if (auto timestamp = entry.find("timestamp"); timestamp != entry.end() && timestamp->is_string())
    details.timestamp = timestamp->get<std::string>();
  return details;
}

// Kernel Tuner keys its cache by the values of `tune_params_keys` in that order; `tune_params`
// holds each one's values. Both must name the same parameters.
std::vector<Parameter> kernel_tuner_parameters(const std::filesystem::path& path, const Json& json) {
  const auto params = json.find("tune_params");
  if (params == json.end() || !params->is_object()) throw BadFile(path, "no 'tune_params' object");
  if (params->empty()) throw BadFile(path, "no tunable parameters ('tune_params' is empty)");
  std::vector<std::string> order;
  if (const auto keys = json.find("tune_params_keys"); keys != json.end()) {
    if (!keys->is_array()) throw BadFile(path, "'tune_params_keys' is " + quoted(*keys) + ", not a list of names");
    for (const auto& key : *keys) {
      if (!key.is_string()) throw BadFile(path, "'tune_params_keys' holds " + quoted(key) + ", not a name");
      order.push_back(key.get<std::string>());
    }
  } else {
    for (const auto& [name, values] : params->items()) order.push_back(name);
  }
  const std::set<std::string> listed(order.begin(), order.end());
  for (const auto& [name, values] : params->items())
    if (!listed.contains(name))
      throw BadFile(path, "parameter '" + clipped(name) + "' of 'tune_params' is not in 'tune_params_keys' (" +
                              clipped(fmt::format("{}", fmt::join(order, ", "))) + ")");
  std::vector<Parameter> parameters;
  for (const auto& name : order) {
    auto values = params->find(name);
    if (values == params->end() || !values->is_array() || values->empty())
      throw BadFile(path, "parameter '" + clipped(name) + "' has no list of values in 'tune_params'");
    parameters.push_back({name, std::vector<Json>(values->begin(), values->end())});
  }
  return parameters;
}

// Kernel Tuner's `objective`: a name, or since 1.5 a list of names (several for multi-objective
// tuning; the first is read, as T4's first objective is).
std::string kernel_tuner_objective(const std::filesystem::path& path, const Json& json) {
  const auto objective = json.find("objective");
  if (objective == json.end()) return "time";
  if (objective->is_string()) return objective->get<std::string>();
  if (objective->is_array() && !objective->empty() && objective->front().is_string())
    return objective->front().get<std::string>();
  throw BadFile(path, "'objective' is " + quoted(*objective) + ", neither a name nor a list of names");
}

// Kernel Tuner marks a configuration it could not time with a failure string, before 1.5 in place
// of the objective's value, since 1.5 in `__error__` (and no time); its own reader takes both
// (util.read_cache), `__error__` first. InvalidConfig is a configuration its restrictions removed,
// which is not in the space. Two entries of one configuration are refused: their keys disagree
// with their values, and which one holds the time is unknown.
Measured read_kernel_tuner(const std::filesystem::path& path, const Json& json, ConfigReader& reader) {
  const auto cache = json.find("cache");
  if (cache == json.end() || !cache->is_object()) throw BadFile(path, "no 'cache' object");
  const std::string objective = kernel_tuner_objective(path, json);
  check_objective(path, objective, "");
  Measured measured;
  std::unordered_map<search_space::Config, std::string, search_space::ConfigHash> keys;
  for (const auto& [key, entry] : cache->items()) {
    const std::string where = "cache entry '" + clipped(key) + "'";
    if (!entry.is_object()) throw BadFile(path, where + " is not an object");
    const auto error = entry.find("__error__");
    const auto value = error != entry.end() ? error : entry.find(objective);
    if (value == entry.end()) throw BadFile(path, where + " has no '" + objective + "'");
    std::string failure;
    if (value->is_string()) {
      failure = value->get<std::string>();
      if (failure == "InvalidConfig") {
        ++measured.invalid;
        continue;
      }
    } else if (value == error) {
      throw BadFile(path, where + ": '__error__' is " + quoted(*value) + ", not a failure string");
    } else if (!value->is_number()) {
      throw BadFile(path, where + ": '" + objective + "' is neither a number nor a failure string");
    } else if (!is_time(*value)) {
      throw BadFile(path, where + ": '" + objective + "' = " + quoted(*value) + " is " + kNotATime);
    }
    auto config = reader.read(entry, where);
    if (const auto [first, added] = keys.emplace(config, key); !added)
      throw BadFile(path, "cache entries '" + clipped(first->second) + "' and '" + clipped(key) +
                              "' hold the same configuration");
    measured.configs.push_back(std::move(config));
    measured.times.push_back(failure.empty() ? value->get<double>() : kFailed);
    measured.entries.push_back(kernel_tuner_entry(path, entry, failure, where));
  }
  return measured;
}

// Numbers (booleans as 0 and 1) ascending, then other values by their text.
bool value_before(const Json& a, const Json& b) {
  if (is_numeric(a) != is_numeric(b)) return is_numeric(a);
  if (is_numeric(a)) return numeric(a) < numeric(b);
  return text_of(a) < text_of(b);
}

// T4: the parameters are those of the first result, in its order; each parameter's values are the
// distinct values the results hold, ascending.
std::vector<Parameter> t4_parameters(const std::filesystem::path& path, const Json& results) {
  if (!results.is_array() || results.empty()) throw BadFile(path, "'results' is not a non-empty array");
  std::vector<Parameter> parameters;
  const auto& first = results.front().find("configuration");
  if (first == results.front().end() || !first->is_object() || first->empty())
    throw BadFile(path, "result 0 has no 'configuration' object");
  for (const auto& [name, value] : first->items()) parameters.push_back({name, {}});
  for (auto& parameter : parameters) {
    std::vector<Json> values;
    for (const auto& result : results) {
      const auto configuration = result.find("configuration");
      if (configuration == result.end() || !configuration->is_object()) continue;
      if (const auto value = configuration->find(parameter.name); value != configuration->end())
        values.push_back(*value);
    }
    std::sort(values.begin(), values.end(), value_before);
    values.erase(std::unique(values.begin(), values.end()), values.end());
    parameter.values = std::move(values);
  }
  return parameters;
}

// T4's objective: a result's first `objectives` entry ("time" where it names none).
std::string t4_objective(const std::filesystem::path& path, const Json& result, const std::string& where) {
  const auto objectives = result.find("objectives");
  if (objectives == result.end()) return "time";
  if (objectives->is_string()) return objectives->get<std::string>();
  if (objectives->is_array() && objectives->empty()) return "time";
  if (objectives->is_array() && objectives->front().is_string()) return objectives->front().get<std::string>();
  throw BadFile(path, where + ": 'objectives' is " + quoted(*objectives) + ", not a list of names");
}

Measured read_t4(const std::filesystem::path& path, const Json& results, ConfigReader& reader) {
  Measured measured;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    const std::string where = "result " + std::to_string(i);
    if (!result.is_object()) throw BadFile(path, where + " is not an object");
    const std::string invalidity = text_field(path, result, "invalidity", where, "correct");
    if (invalidity == "constraints") {  // outside the space, as Kernel Tuner's InvalidConfig
      ++measured.invalid;
      continue;
    }
    const std::string objective = t4_objective(path, result, where);
    check_objective(path, objective, where + ": ");
    double time = kFailed;
    if (invalidity == "correct") {
      const auto measurements = result.find("measurements");
      if (measurements == result.end() || !measurements->is_array())
        throw BadFile(path, where + " has no 'measurements' array");
      for (const auto& measurement : *measurements) {
        if (!measurement.is_object() || text_field(path, measurement, "name", where) != objective) continue;
        const auto value = measurement.find("value");
        if (value == measurement.end() || !value->is_number()) continue;
        if (!is_time(*value))
          throw BadFile(path, where + ": '" + objective + "' = " + quoted(*value) + " is " + kNotATime);
        time = value->get<double>();
      }
      if (std::isnan(time)) throw BadFile(path, where + " has no measurement named '" + objective + "'");
    }
    const auto configuration = result.find("configuration");
    measured.configs.push_back(reader.read(configuration == result.end() ? Json() : *configuration, where));
    measured.times.push_back(time);
    measured.entries.push_back({std::isnan(time) ? invalidity : "", {}, 0, ""});
  }
  return measured;
}

// The space: values knobs in the file's order, valid where the file holds the configuration.
search_space::ConfigSpace make_space(const std::filesystem::path& path, const std::vector<Parameter>& parameters,
                                     const std::vector<search_space::Config>& configs) {
  search_space::ConfigSpace space;
  try {
    for (const auto& parameter : parameters) space.add(make_knob(parameter));
  } catch (const std::invalid_argument& error) {
    throw BadFile(path, error.what());
  }
  auto members = std::make_shared<std::unordered_set<search_space::Config, search_space::ConfigHash>>(
      configs.begin(), configs.end());
  space.add_constraint("measured in " + path.filename().string(),
                       [members](const search_space::ConfigView& view) { return members->contains(view.config()); });
  return space;
}

std::string stem_of(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  for (const std::string suffix : {".gz", ".json"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return name;
}

LandscapeFile landscape_of(const std::filesystem::path& path, const Json& json) {
  if (!json.is_object()) throw BadFile(path, "not a JSON object");
  Measured measured;
  std::vector<Parameter> parameters;
  if (json.contains("cache")) {
    ConfigReader reader(path, kernel_tuner_parameters(path, json));
    measured = read_kernel_tuner(path, json, reader);
    parameters = reader.parameters();
  } else if (json.contains("results")) {
    ConfigReader reader(path, t4_parameters(path, json["results"]));
    measured = read_t4(path, json["results"], reader);
    parameters = reader.parameters();
  } else {
    throw BadFile(path, "neither a Kernel Tuner cache file ('cache') nor a T4 results file ('results')");
  }
  LandscapeFile file;
  file.name = stem_of(path);
  file.kernel = text_field(path, json, "kernel_name", "");
  file.device = text_field(path, json, "device_name", "");
  if (const auto size = json.find("problem_size"); size != json.end()) {
    if (size->is_number_integer()) file.problem_size.push_back(size->get<std::int64_t>());
    if (size->is_array())
      for (const auto& extent : *size)
        if (extent.is_number_integer()) file.problem_size.push_back(extent.get<std::int64_t>());
  }
  file.optimum = std::numeric_limits<double>::infinity();
  std::unordered_set<search_space::Config, search_space::ConfigHash> seen;
  for (std::size_t i = 0; i < measured.configs.size(); ++i) {
    if (!seen.insert(measured.configs[i]).second) continue;  // a T4 file may repeat a configuration: the first counts
    const double time = measured.times[i];
    if (time < file.optimum) file.optimum = time;
    file.configs.push_back(measured.configs[i]);
    file.times.push_back(time);
    file.entries.push_back(std::move(measured.entries[i]));
  }
  file.invalid = measured.invalid;
  file.task = std::make_shared<measure::MeasureTask>();
  file.task->space = make_space(path, parameters, file.configs);
  file.task->device.name = file.device;
  return file;
}

}  // namespace

LandscapeFile read_landscape_file(const std::filesystem::path& path) {
  LandscapeFile file = read_measured_file(path);
  if (!std::isfinite(file.optimum)) throw BadFile(path, "no configuration with a time");
  return file;
}

LandscapeFile read_measured_file(const std::filesystem::path& path) {
  const Json json = read_landscape_json(path);
  try {
    return landscape_of(path, json);
  } catch (const Json::exception& error) {  // a field of a type the checks above did not foresee
    throw BadFile(path, clipped(error.what(), 200));
  }
}

Landscape replay_landscape(const LandscapeFile& file) {
  Landscape landscape;
  landscape.task = file.task;
  landscape.configs = file.configs;
  for (double time : file.times) landscape.gflops.push_back(std::isnan(time) ? 0.0 : 1.0 / time);
  landscape.best = 1.0 / file.optimum;
  return landscape;
}

std::string landscape_device(const LandscapeFile& file) { return file.device.empty() ? file.name : file.device; }

std::vector<db::TuningRecord> landscape_records(const LandscapeFile& file) {
  std::vector<db::TuningRecord> records;
  for (std::size_t i = 0; i < file.configs.size(); ++i) {
    db::TuningRecord record;
    record.workload_key = file.kernel;
    record.device_id = landscape_device(file);
    record.config = file.task->space.to_json(file.configs[i]);
    const double time = file.times[i];
    if (std::isnan(time)) {
      record.error_kind = "runtime_error";
    } else {
      record.median_seconds = time * 1e-3;
      record.gflops = 1.0 / time;
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace optune::tuner
