// ConfigSpace: knobs, mixed-radix indexing and constraints. Sampling and neighbour moves live in
// config_search.cpp, the JSON form in config_json.cpp.
#include "optune/search_space/config_space.hpp"

#include <stdexcept>

#include "knob_options.hpp"

namespace optune::search_space {

std::size_t ConfigHash::operator()(const Config& config) const noexcept {
  // FNV-1a over the option indices: cheap, and configs differing in one knob hash apart.
  std::uint64_t hash = 14695981039346656037ull;
  for (std::uint32_t option : config.options) {
    hash ^= option;
    hash *= 1099511628211ull;
  }
  return static_cast<std::size_t>(hash);
}

void ConfigSpace::read_missing_as(const std::string& knob, nlohmann::json value) {
  if (!index_by_name_.contains(knob)) throw std::invalid_argument("read_missing_as: unknown knob '" + knob + "'");
  missing_as_[knob] = std::move(value);
}

void ConfigSpace::add(Knob knob) {
  detail::check_knob(knob);
  const std::string& name = detail::knob_name(knob);
  if (index_by_name_.contains(name)) {
    throw std::invalid_argument("duplicate knob name '" + name + "'");
  }
  std::vector<SplitValue> splits;
  if (const auto* split = std::get_if<SplitKnob>(&knob)) {
    splits = detail::enumerate_split_options(*split);
  }
  index_by_name_.emplace(name, knobs_.size());
  split_options_.push_back(std::move(splits));
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::add_constraint(std::string description, Constraint predicate) {
  constraints_.emplace_back(std::move(description), std::move(predicate));
}

std::size_t ConfigSpace::knob_index(const std::string& name) const {
  auto found = index_by_name_.find(name);
  if (found == index_by_name_.end()) throw std::out_of_range("no knob named '" + name + "'");
  return found->second;
}

std::uint64_t ConfigSpace::option_count(std::size_t knob) const {
  const Knob& k = knobs_.at(knob);
  if (std::holds_alternative<SplitKnob>(k)) return split_options_[knob].size();
  if (const auto* choice = std::get_if<ChoiceKnob>(&k)) return choice->options.size();
  if (std::holds_alternative<BoolKnob>(k)) return 2;
  if (const auto* range = std::get_if<IntRangeKnob>(&k)) return detail::int_option_count(*range);
  if (const auto* list = std::get_if<ValuesKnob>(&k)) return list->values.size();
  return detail::factorial(std::get<PermutationKnob>(k).items.size());
}

std::uint64_t ConfigSpace::size() const {
  std::uint64_t product = 1;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (__builtin_mul_overflow(product, option_count(k), &product)) {
      throw std::overflow_error("config space has more than 2^64 points");
    }
  }
  return product;
}

Config ConfigSpace::from_index(std::uint64_t index) const {
  if (index >= size()) throw std::out_of_range("config index past the end of the space");
  Config config;
  config.options.reserve(knobs_.size());
  // First knob is the least significant digit.
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    std::uint64_t radix = option_count(k);
    config.options.push_back(static_cast<std::uint32_t>(index % radix));
    index /= radix;
  }
  return config;
}

std::uint64_t ConfigSpace::to_index(const Config& config) const {
  if (config.options.size() != knobs_.size()) {
    throw std::out_of_range("config has a different number of knobs than the space");
  }
  std::uint64_t index = 0;
  // Horner's rule from the most significant digit (the last knob) down.
  for (std::size_t k = knobs_.size(); k-- > 0;) {
    std::uint64_t radix = option_count(k);
    if (config.options[k] >= radix) {
      throw std::out_of_range("option index out of range for knob '" +
                              detail::knob_name(knobs_[k]) + "'");
    }
    index = index * radix + config.options[k];
  }
  return index;
}

bool ConfigSpace::is_valid(const Config& config) const { return first_violation(config).empty(); }

std::string ConfigSpace::first_violation(const Config& config) const {
  // Constraints read knob values through a ConfigView, which needs every index in range.
  if (config.options.size() != knobs_.size()) return "config does not match the space's knobs";
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (config.options[k] >= option_count(k)) {
      return "option index out of range for knob '" + detail::knob_name(knobs_[k]) + "'";
    }
  }
  const ConfigView view(*this, config);
  for (const auto& [description, predicate] : constraints_) {
    if (!predicate(view)) return description.empty() ? "unnamed constraint" : description;
  }
  return "";
}

SplitValue ConfigSpace::split_value(std::size_t knob, std::uint32_t option) const {
  if (!std::holds_alternative<SplitKnob>(knobs_.at(knob))) {
    throw std::invalid_argument("knob '" + detail::knob_name(knobs_[knob]) + "' is not a split");
  }
  return split_options_[knob].at(option);
}

}  // namespace optune::search_space
