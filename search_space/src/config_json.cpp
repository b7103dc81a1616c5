// The JSON form of configs and spaces. A config is stored by knob name and value, never by option
// index, so records in the database keep their meaning when a later optune reorders knobs, adds
// knobs or adds options.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "knob_options.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

// How many options describe() shows per knob: enough to see the pattern, short enough to read.
constexpr std::uint64_t kPreviewOptions = 16;

[[noreturn]] void reject_value(const std::string& knob, const nlohmann::json& value,
                               const std::string& why) {
  throw std::invalid_argument("knob '" + knob + "': " + why + " (got " + value.dump() + ")");
}

std::int64_t integer_of(const std::string& knob, const nlohmann::json& value) {
  if (!value.is_number_integer()) reject_value(knob, value, "expected an integer");
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    reject_value(knob, value, "integer out of range");
  }
  return value.get<std::int64_t>();
}

std::uint32_t split_option(const SplitKnob& knob, const std::vector<SplitValue>& options,
                           const nlohmann::json& value) {
  if (!value.is_array() || value.size() != static_cast<std::size_t>(knob.num_outputs)) {
    reject_value(knob.name, value,
                 "expected an array of " + std::to_string(knob.num_outputs) + " factors");
  }
  SplitValue factors;
  for (const auto& factor : value) factors.push_back(integer_of(knob.name, factor));
  // Options ascend lexicographically on the inner factors (all but the first).
  auto inner_less = [](const SplitValue& a, const SplitValue& b) {
    return std::lexicographical_compare(a.begin() + 1, a.end(), b.begin() + 1, b.end());
  };
  auto found = std::lower_bound(options.begin(), options.end(), factors, inner_less);
  if (found == options.end() || *found != factors) {
    reject_value(knob.name, value, "not a split of extent " + std::to_string(knob.extent));
  }
  return static_cast<std::uint32_t>(found - options.begin());
}

std::uint32_t choice_option(const ChoiceKnob& knob, const nlohmann::json& value) {
  if (!value.is_string()) reject_value(knob.name, value, "expected a string");
  auto found = std::find(knob.options.begin(), knob.options.end(), value.get<std::string>());
  if (found == knob.options.end()) reject_value(knob.name, value, "not one of the options");
  return static_cast<std::uint32_t>(found - knob.options.begin());
}

std::uint32_t bool_option(const BoolKnob& knob, const nlohmann::json& value) {
  if (!value.is_boolean()) reject_value(knob.name, value, "expected true or false");
  return value.get<bool>() ? 1 : 0;
}

std::uint32_t int_option(const IntRangeKnob& knob, const nlohmann::json& value) {
  const std::int64_t v = integer_of(knob.name, value);
  if (v < knob.lo || v > knob.hi) reject_value(knob.name, value, "outside the range");
  const auto offset = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(knob.lo);
  if (offset % static_cast<std::uint64_t>(knob.step) != 0) {
    reject_value(knob.name, value, "not on the range's step");
  }
  return static_cast<std::uint32_t>(offset / static_cast<std::uint64_t>(knob.step));
}

std::uint32_t permutation_option(const PermutationKnob& knob, const nlohmann::json& value) {
  if (!value.is_array()) reject_value(knob.name, value, "expected an array of item names");
  std::vector<std::string> order;
  for (const auto& item : value) {
    if (!item.is_string()) reject_value(knob.name, value, "expected an array of item names");
    order.push_back(item.get<std::string>());
  }
  try {
    return static_cast<std::uint32_t>(detail::permutation_index(knob.items, order));
  } catch (const std::invalid_argument& error) {
    reject_value(knob.name, value, std::string("not a permutation of the items: ") + error.what());
  }
}

std::uint32_t values_option(const ValuesKnob& knob, const nlohmann::json& value) {
  if (!value.is_number()) reject_value(knob.name, value, "expected a number");
  auto found = std::find(knob.values.begin(), knob.values.end(), value.get<double>());
  if (found == knob.values.end()) reject_value(knob.name, value, "not one of the values");
  return static_cast<std::uint32_t>(found - knob.values.begin());
}

nlohmann::json knob_details(const Knob& knob) {
  nlohmann::json details = nlohmann::json::object();
  if (const auto* split = std::get_if<SplitKnob>(&knob)) {
    static constexpr const char* kPolicies[] = {"divisors", "power_of_two", "candidates"};
    details["extent"] = split->extent;
    details["num_outputs"] = split->num_outputs;
    details["policy"] = kPolicies[static_cast<int>(split->policy)];
  } else if (const auto* range = std::get_if<IntRangeKnob>(&knob)) {
    details["lo"] = range->lo;
    details["hi"] = range->hi;
    details["step"] = range->step;
  } else if (const auto* permutation = std::get_if<PermutationKnob>(&knob)) {
    details["items"] = permutation->items;
  }
  return details;
}

}  // namespace

nlohmann::json ConfigSpace::option_json(std::size_t knob, std::uint32_t option) const {
  if (option >= option_count(knob)) {
    throw std::out_of_range("option index out of range for knob '" +
                            detail::knob_name(knobs_[knob]) + "'");
  }
  const Knob& k = knobs_[knob];
  if (std::holds_alternative<SplitKnob>(k)) return split_options_[knob][option];
  if (const auto* choice = std::get_if<ChoiceKnob>(&k)) return choice->options[option];
  if (std::holds_alternative<BoolKnob>(k)) return option != 0;
  if (const auto* range = std::get_if<IntRangeKnob>(&k)) return detail::int_value(*range, option);
  if (const auto* list = std::get_if<ValuesKnob>(&k)) return detail::values_json(list->values[option]);
  return detail::permutation_at(std::get<PermutationKnob>(k).items, option);
}

nlohmann::json ConfigSpace::to_json(const Config& config) const {
  if (config.options.size() != knobs_.size()) {
    throw std::invalid_argument("config does not match the space's knobs");
  }
  nlohmann::json json = nlohmann::json::object();
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    json[detail::knob_name(knobs_[k])] = option_json(k, config.options[k]);
  }
  return json;
}

Config ConfigSpace::from_json(const nlohmann::json& json) const {
  if (!json.is_object()) throw std::invalid_argument("a config must be a JSON object");
  for (const auto& [name, value] : json.items()) {
    if (!index_by_name_.contains(name)) throw std::invalid_argument("unknown knob '" + name + "'");
  }
  Config config;
  config.options.reserve(knobs_.size());
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const Knob& knob = knobs_[k];
    const std::string& name = detail::knob_name(knob);
    const nlohmann::json* value = nullptr;
    if (auto found = json.find(name); found != json.end()) {
      value = &*found;
    } else if (auto fallback = missing_as_.find(name); fallback != missing_as_.end()) {
      value = &fallback->second;
    } else {
      throw std::invalid_argument("knob '" + name + "': missing value");
    }
    config.options.push_back(std::visit(
        [&](const auto& typed) -> std::uint32_t {
          using Type = std::decay_t<decltype(typed)>;
          if constexpr (std::is_same_v<Type, SplitKnob>) {
            return split_option(typed, split_options_[k], *value);
          } else if constexpr (std::is_same_v<Type, ChoiceKnob>) {
            return choice_option(typed, *value);
          } else if constexpr (std::is_same_v<Type, BoolKnob>) {
            return bool_option(typed, *value);
          } else if constexpr (std::is_same_v<Type, IntRangeKnob>) {
            return int_option(typed, *value);
          } else if constexpr (std::is_same_v<Type, ValuesKnob>) {
            return values_option(typed, *value);
          } else {
            return permutation_option(typed, *value);
          }
        },
        knob));
  }
  return config;
}

nlohmann::json ConfigSpace::describe() const {
  nlohmann::json knobs = nlohmann::json::array();
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    nlohmann::json entry = knob_details(knobs_[k]);
    entry["name"] = detail::knob_name(knobs_[k]);
    entry["kind"] = detail::knob_kind(knobs_[k]);
    entry["option_count"] = option_count(k);
    nlohmann::json preview = nlohmann::json::array();
    const std::uint64_t shown = std::min(option_count(k), kPreviewOptions);
    for (std::uint32_t option = 0; option < shown; ++option) {
      preview.push_back(option_json(k, option));
    }
    entry["preview"] = std::move(preview);
    knobs.push_back(std::move(entry));
  }
  return knobs;
}

}  // namespace optune::search_space
