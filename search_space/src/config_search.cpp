// The moves search strategies make in a ConfigSpace: uniform valid samples and neighbours.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

// Spaces at most this large are enumerated when drawing distinct samples, so that a small space
// yields all of its valid configs instead of whatever rejection sampling happened to hit.
constexpr std::uint64_t kEnumerableSpace = 1u << 16;

std::uint32_t uniform_option(std::uint64_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::uint64_t> draw(0, count - 1);
  return static_cast<std::uint32_t>(draw(rng));
}

// Independent uniform digits are uniform over the product space, and need no size() (which may
// overflow).
Config uniform_config(const ConfigSpace& space, std::mt19937_64& rng) {
  Config config;
  config.options.resize(space.knobs().size());
  for (std::size_t k = 0; k < config.options.size(); ++k) {
    config.options[k] = uniform_option(space.option_count(k), rng);
  }
  return config;
}

// size(), or nullopt past 2^64 points.
std::optional<std::uint64_t> checked_size(const ConfigSpace& space) {
  try {
    return space.size();
  } catch (const std::overflow_error&) {
    return std::nullopt;
  }
}

}  // namespace

Config ConfigSpace::sample_valid(std::mt19937_64& rng, int max_attempts) const {
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    Config config = uniform_config(*this, rng);
    if (is_valid(config)) return config;
  }
  throw std::runtime_error("no valid config found in " + std::to_string(max_attempts) +
                           " random draws; the constraints may exclude the whole space");
}

std::vector<Config> ConfigSpace::sample_valid_distinct(std::mt19937_64& rng, std::size_t n) const {
  std::vector<Config> result;
  const auto points = checked_size(*this);
  if (points && *points <= kEnumerableSpace) {
    for (std::uint64_t i = 0; i < *points; ++i) {
      Config config = from_index(i);
      if (is_valid(config)) result.push_back(std::move(config));
    }
    std::shuffle(result.begin(), result.end(), rng);
    if (result.size() > n) result.resize(n);
    return result;
  }
  std::unordered_set<Config, ConfigHash> seen;
  // Enough draws to collect n distinct configs in any space where valid ones are not rare.
  const std::size_t max_draws = 100000 + 100 * n;
  for (std::size_t draw = 0; draw < max_draws && result.size() < n; ++draw) {
    Config config = uniform_config(*this, rng);
    if (!is_valid(config)) continue;
    if (seen.insert(config).second) result.push_back(std::move(config));
  }
  return result;
}

std::vector<Config> ConfigSpace::neighbours(const Config& config) const {
  std::vector<Config> result;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::uint32_t option = config.options.at(k);
    for (int delta : {-1, +1}) {
      if (option == 0 && delta < 0) continue;
      if (option + 1 >= option_count(k) && delta > 0) continue;
      Config next = config;
      next.options[k] = static_cast<std::uint32_t>(option + delta);
      if (is_valid(next)) result.push_back(std::move(next));
    }
  }
  return result;
}

Config ConfigSpace::random_neighbour(const Config& config, std::mt19937_64& rng,
                                     int max_attempts) const {
  std::vector<std::size_t> movable;  // knobs with another option to move to
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (option_count(k) > 1) movable.push_back(k);
  }
  if (movable.empty()) return config;
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    const std::size_t k = movable[uniform_option(movable.size(), rng)];
    // Draw among the other options: skip over the current one.
    std::uint32_t option = uniform_option(option_count(k) - 1, rng);
    if (option >= config.options.at(k)) ++option;
    Config next = config;
    next.options[k] = option;
    if (is_valid(next)) return next;
  }
  return config;
}

}  // namespace optune::search_space
