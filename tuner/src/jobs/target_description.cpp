#include "optune/tuner/jobs/target_description.hpp"

#include <filesystem>

#include <toml++/toml.h>

#include "scheduling/suite_toml.hpp"

namespace optune::tuner {

TargetDescription load_target_description(const std::string& path) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& error) {
    throw TargetDescriptionError(one_line("target description " + path + ": " + std::string(error.description())));
  }
  TargetDescription target;
  auto text = [&](const char* key) {
    auto value = table[key].value<std::string>();
    if (!value || value->empty()) throw TargetDescriptionError("target description " + path + ": '" + key + "' (text) is required");
    return *value;
  };
  target.triple = text("triple");
  target.compiler = text("compiler");
  const toml::array* flags = table["flags"].as_array();
  if (!flags) throw TargetDescriptionError("target description " + path + ": 'flags' (a list of text) is required");
  for (const auto& flag : *flags) {
    auto value = flag.value<std::string>();
    if (!value) throw TargetDescriptionError("target description " + path + ": every flag must be text");
    target.flags.push_back(*value);
  }
  return target;
}

TargetDescription find_target_description(const std::string& triple, const std::vector<std::string>& dirs) {
  std::string looked;
  for (const auto& dir : dirs) {
    auto path = std::filesystem::path(dir) / (triple + ".toml");
    if (std::filesystem::exists(path)) {
      TargetDescription target = load_target_description(path.string());
      if (target.triple != triple)
        throw TargetDescriptionError(path.string() + " describes " + target.triple + ", not " + triple);
      return target;
    }
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  throw TargetDescriptionError("no target description " + triple + ".toml in " + looked);
}

}  // namespace optune::tuner
