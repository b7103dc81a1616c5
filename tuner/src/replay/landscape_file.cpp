// Reading Kernel Tuner cache files and T4 results files into a space with measured times.
#include "optune/tuner/replay/landscape_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace optune::tuner {
namespace {

using Json = nlohmann::ordered_json;  // keeps the file's parameter order

constexpr double kFailed = std::numeric_limits<double>::quiet_NaN();

struct BadFile : std::invalid_argument {
  BadFile(const std::filesystem::path& path, const std::string& why)
      : std::invalid_argument("landscape " + path.string() + ": " + why) {}
};

// The whole file, gunzipped when it is gzip (zlib's gzread passes other files through as they are).
std::string read_text(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw BadFile(path, "cannot open the file");
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  int error = Z_OK;
  const std::string message = got < 0 ? gzerror(file, &error) : "";
  gzclose(file);
  if (got < 0) throw BadFile(path, "unreadable (" + message + ")");
  return text;
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
      auto value = values.find(parameters_[k].name);
      if (value == values.end()) throw BadFile(path_, where + " has no value for '" + parameters_[k].name + "'");
      auto option = options_[k].find(key_of(*value));
      if (option == options_[k].end())
        throw BadFile(path_, where + ": '" + parameters_[k].name + "' = " + value->dump() + " is not one of its values");
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
  std::string objective = "time";
  std::vector<search_space::Config> configs;
  std::vector<double> times;
  std::vector<LandscapeEntry> entries;
  std::size_t invalid = 0;
};

// A Kernel Tuner entry's single runs: positive finite numbers, or none.
std::vector<double> samples_of(const std::filesystem::path& path, const Json& entry, const std::string& where) {
  std::vector<double> samples;
  const auto times = entry.find("times");
  if (times == entry.end() || !times->is_array()) return samples;
  for (const auto& time : *times) {
    if (!time.is_number() || !std::isfinite(time.get<double>()) || !(time.get<double>() > 0))
      throw BadFile(path, where + ": 'times' holds " + time.dump() + ", not a positive time");
    samples.push_back(time.get<double>());
  }
  return samples;
}

LandscapeEntry kernel_tuner_entry(const std::filesystem::path& path, const Json& entry, const Json& value,
                                  const std::string& where) {
  LandscapeEntry details;
  if (value.is_string()) details.failure = value.get<std::string>();
  else details.samples = samples_of(path, entry, where);
  if (auto compile = entry.find("compile_time");
      compile != entry.end() && compile->is_number() && std::isfinite(compile->get<double>()) && compile->get<double>() >= 0)
    details.compile_ms = compile->get<double>();
  if (auto timestamp = entry.find("timestamp"); timestamp != entry.end() && timestamp->is_string())
    details.timestamp = timestamp->get<std::string>();
  return details;
}

std::vector<Parameter> kernel_tuner_parameters(const std::filesystem::path& path, const Json& json) {
  const auto keys = json.find("tune_params_keys");
  const auto params = json.find("tune_params");
  if (params == json.end() || !params->is_object()) throw BadFile(path, "no 'tune_params' object");
  std::vector<std::string> order;
  if (keys != json.end() && keys->is_array()) {
    for (const auto& key : *keys) {
      if (!key.is_string()) throw BadFile(path, "'tune_params_keys' holds a non-string");
      order.push_back(key.get<std::string>());
    }
  } else {
    for (const auto& [name, values] : params->items()) order.push_back(name);
  }
  std::vector<Parameter> parameters;
  for (const auto& name : order) {
    auto values = params->find(name);
    if (values == params->end() || !values->is_array() || values->empty())
      throw BadFile(path, "parameter '" + name + "' has no list of values in 'tune_params'");
    parameters.push_back({name, std::vector<Json>(values->begin(), values->end())});
  }
  return parameters;
}

// Kernel Tuner marks a failed configuration with a string instead of a time; InvalidConfig is a
// configuration its restrictions removed, which is not in the space.
Measured read_kernel_tuner(const std::filesystem::path& path, const Json& json, ConfigReader& reader) {
  const auto cache = json.find("cache");
  if (cache == json.end() || !cache->is_object()) throw BadFile(path, "no 'cache' object");
  std::string objective = json.value("objective", std::string("time"));
  Measured measured;
  measured.objective = objective;
  for (const auto& [key, entry] : cache->items()) {
    const std::string where = "cache entry '" + key + "'";
    if (!entry.is_object()) throw BadFile(path, where + " is not an object");
    auto value = entry.find(objective);
    if (value == entry.end()) throw BadFile(path, where + " has no '" + objective + "'");
    if (value->is_string() && value->get<std::string>() == "InvalidConfig") {
      ++measured.invalid;
      continue;
    }
    if (!value->is_number() && !value->is_string())
      throw BadFile(path, where + ": '" + objective + "' is neither a number nor a failure string");
    measured.configs.push_back(reader.read(entry, where));
    measured.times.push_back(value->is_number() ? value->get<double>() : kFailed);
    measured.entries.push_back(kernel_tuner_entry(path, entry, *value, where));
  }
  return measured;
}

// T4: the parameters are those of the first result, in its order; each parameter's values are the
// distinct values the results hold, ascending.
std::vector<Parameter> t4_parameters(const std::filesystem::path& path, const Json& results) {
  if (!results.is_array() || results.empty()) throw BadFile(path, "'results' is not a non-empty array");
  std::vector<Parameter> parameters;
  std::vector<std::vector<Json>> values;
  const auto& first = results.front().find("configuration");
  if (first == results.front().end() || !first->is_object() || first->empty())
    throw BadFile(path, "result 0 has no 'configuration' object");
  for (const auto& [name, value] : first->items()) parameters.push_back({name, {}});
  for (auto& parameter : parameters) {
    std::vector<Json> seen;
    for (const auto& result : results) {
      const auto configuration = result.find("configuration");
      if (configuration == result.end() || !configuration->is_object()) continue;
      const auto value = configuration->find(parameter.name);
      if (value != configuration->end() && std::find(seen.begin(), seen.end(), *value) == seen.end())
        seen.push_back(*value);
    }
    std::sort(seen.begin(), seen.end(), [](const Json& a, const Json& b) {
      if (is_numeric(a) && is_numeric(b)) return numeric(a) < numeric(b);
      return text_of(a) < text_of(b);
    });
    parameter.values = std::move(seen);
  }
  return parameters;
}

Measured read_t4(const std::filesystem::path& path, const Json& results, ConfigReader& reader) {
  Measured measured;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    const std::string where = "result " + std::to_string(i);
    if (!result.is_object()) throw BadFile(path, where + " is not an object");
    const std::string invalidity = result.value("invalidity", std::string("correct"));
    if (invalidity == "constraints") {  // outside the space, as Kernel Tuner's InvalidConfig
      ++measured.invalid;
      continue;
    }
    std::string objective = "time";
    if (auto objectives = result.find("objectives"); objectives != result.end() && objectives->is_array() &&
                                                     !objectives->empty() && objectives->front().is_string())
      objective = objectives->front().get<std::string>();
    if (objective != "time") measured.objective = objective;
    double time = kFailed;
    if (invalidity == "correct") {
      const auto measurements = result.find("measurements");
      if (measurements == result.end() || !measurements->is_array())
        throw BadFile(path, where + " has no 'measurements' array");
      for (const auto& measurement : *measurements)
        if (measurement.is_object() && measurement.value("name", std::string()) == objective &&
            measurement.contains("value") && measurement["value"].is_number())
          time = measurement["value"].get<double>();
      if (std::isnan(time)) throw BadFile(path, where + " has no measurement named '" + objective + "'");
    }
    measured.configs.push_back(reader.read(result.value("configuration", Json()), where));
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

}  // namespace

LandscapeFile read_landscape_file(const std::filesystem::path& path) {
  LandscapeFile file = read_measured_file(path);
  if (!std::isfinite(file.optimum)) throw BadFile(path, "no configuration with a time");
  return file;
}

LandscapeFile read_measured_file(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    throw BadFile(path, std::string("not JSON (") + error.what() + ")");
  }
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
  file.kernel = json.value("kernel_name", std::string());
  file.device = json.value("device_name", std::string());
  if (const auto size = json.find("problem_size"); size != json.end()) {
    if (size->is_number_integer()) file.problem_size.push_back(size->get<std::int64_t>());
    if (size->is_array())
      for (const auto& extent : *size)
        if (extent.is_number_integer()) file.problem_size.push_back(extent.get<std::int64_t>());
  }
  file.optimum = std::numeric_limits<double>::infinity();
  std::unordered_set<search_space::Config, search_space::ConfigHash> seen;
  for (std::size_t i = 0; i < measured.configs.size(); ++i) {
    if (!seen.insert(measured.configs[i]).second) continue;  // a T4 file may repeat a configuration
    const double time = measured.times[i];
    if (!std::isnan(time) && !(time > 0)) throw BadFile(path, "a time that is not positive");
    if (time < file.optimum) file.optimum = time;
    file.configs.push_back(measured.configs[i]);
    file.times.push_back(time);
    file.entries.push_back(std::move(measured.entries[i]));
  }
  file.invalid = measured.invalid;
  file.objective = measured.objective;
  file.task = std::make_shared<measure::MeasureTask>();
  file.task->space = make_space(path, parameters, file.configs);
  file.task->device.name = file.device;
  return file;
}

Landscape replay_landscape(const LandscapeFile& file) {
  Landscape landscape;
  landscape.task = file.task;
  landscape.configs = file.configs;
  for (double time : file.times) landscape.gflops.push_back(std::isnan(time) ? 0.0 : 1.0 / time);
  landscape.best = 1.0 / file.optimum;
  return landscape;
}

std::vector<db::TuningRecord> landscape_records(const LandscapeFile& file) {
  std::vector<db::TuningRecord> records;
  for (std::size_t i = 0; i < file.configs.size(); ++i) {
    db::TuningRecord record;
    record.workload_key = file.kernel;
    record.device_id = file.device;
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
