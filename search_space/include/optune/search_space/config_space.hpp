// ConfigSpace: the knobs of one template for one workload and device, with constraints.
// Its size is a 64-bit product of the knobs' option counts, so a space of 10^15 points is
// indexed, sampled and searched without ever being enumerated. A Config is one option index per
// knob; its flat index is the mixed-radix number with the first knob as the least significant
// digit. Constraints are predicates over a Config; is_valid() checks them all.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/search_space/knob.hpp"

namespace optune::search_space {

class ConfigSpace;

// One point of a space: an option index for each knob, in the space's knob order.
struct Config {
  std::vector<std::uint32_t> options;
  friend bool operator==(const Config&, const Config&) = default;
};

struct ConfigHash {
  std::size_t operator()(const Config& config) const noexcept;
};

// Read access to a config's knob values by name. Cheap to construct; holds references.
class ConfigView {
 public:
  ConfigView(const ConfigSpace& space, const Config& config) : space_(space), config_(config) {}
  SplitValue split(const std::string& knob) const;
  std::int64_t split_factor(const std::string& knob, int i) const;  // one factor of a split
  const std::string& choice(const std::string& knob) const;
  bool flag(const std::string& knob) const;
  std::int64_t integer(const std::string& knob) const;
  PermutationValue permutation(const std::string& knob) const;
  double number(const std::string& knob) const;  // a values knob's value
  // Whether the space has the knob (for knobs that only some workloads' spaces hold).
  bool has(const std::string& knob) const;
  // The config itself, for constraints over whole configs (membership in a measured set).
  const Config& config() const { return config_; }

 private:
  const ConfigSpace& space_;
  const Config& config_;
};

using Constraint = std::function<bool(const ConfigView&)>;

class ConfigSpace {
 public:
  // Adds a knob; throws std::invalid_argument on a duplicate name or a knob with no options.
  void add(Knob knob);
  void add_constraint(std::string description, Constraint predicate);
  // A knob added to a released space: from_json reads a config written before it existed (its
  // entry missing) as `value`, the option that means the older schedule, so stored records stay
  // points of the newer space. Throws std::invalid_argument if the knob is unknown.
  void read_missing_as(const std::string& knob, nlohmann::json value);

  const std::vector<Knob>& knobs() const { return knobs_; }
  std::size_t knob_index(const std::string& name) const;  // throws std::out_of_range
  std::uint64_t option_count(std::size_t knob) const;     // number of options of one knob

  // Product of option counts, counting invalid configs too. Throws std::overflow_error past 2^64.
  std::uint64_t size() const;

  Config from_index(std::uint64_t index) const;  // throws std::out_of_range
  std::uint64_t to_index(const Config& config) const;

  bool is_valid(const Config& config) const;
  // The description of the first constraint the config breaks, or "" when it is valid.
  std::string first_violation(const Config& config) const;

  // A uniformly drawn config that satisfies every constraint. Rejection sampling; throws
  // std::runtime_error after max_attempts draws without a valid one.
  Config sample_valid(std::mt19937_64& rng, int max_attempts = 100000) const;
  // n distinct valid configs (fewer if the space has fewer that are found in the attempts).
  std::vector<Config> sample_valid_distinct(std::mt19937_64& rng, std::size_t n) const;

  // Valid configs that differ from `config` in one knob by one option step (index +-1).
  std::vector<Config> neighbours(const Config& config) const;
  // A valid config that differs in one randomly chosen knob, set to a random other option.
  // Returns `config` itself when no valid change is found in max_attempts.
  Config random_neighbour(const Config& config, std::mt19937_64& rng, int max_attempts = 64) const;

  // Resolved values.
  SplitValue split_value(std::size_t knob, std::uint32_t option) const;
  nlohmann::json option_json(std::size_t knob, std::uint32_t option) const;

  // Stable JSON form of a config: {"knob name": value, ...}, values not indices, so a config
  // read back by a later optune (with knobs reordered or added) still means the same schedule.
  nlohmann::json to_json(const Config& config) const;
  // Throws std::invalid_argument naming the knob when a value is missing or not an option.
  Config from_json(const nlohmann::json& json) const;
  // The space itself, for `optune space`: knobs with kind, option count and options.
  nlohmann::json describe() const;

 private:
  friend class ConfigView;
  std::vector<Knob> knobs_;
  std::vector<std::vector<SplitValue>> split_options_;  // per knob; empty for other kinds
  std::unordered_map<std::string, std::size_t> index_by_name_;
  std::unordered_map<std::string, nlohmann::json> missing_as_;  // read_missing_as
  std::vector<std::pair<std::string, Constraint>> constraints_;
};

}  // namespace optune::search_space
