// CandidatePool: a finite set of configs that a tuner may choose from instead of the whole space.
// The tuning-efficiency benchmark replays a measured landscape: only its configs have known costs,
// so every tuner searches the same pool (random draws from it, grid walks it, the genetic tuner
// moves each child to its nearest pool config, xgb ranks the whole pool with its model).
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "optune/search_space/config_space.hpp"
#include "optune/tuner/search/search_domain.hpp"

namespace optune::tuner {

class CandidatePool {
 public:
  explicit CandidatePool(std::vector<search_space::Config> configs) : configs_(std::move(configs)) {}
  const std::vector<search_space::Config>& configs() const { return configs_; }
  std::vector<search_space::Config> unvisited(const ConfigSet& visited) const;
  // Up to n unvisited configs, uniformly drawn.
  std::vector<search_space::Config> random(std::size_t n, const ConfigSet& visited, std::mt19937_64& rng) const;
  // The unvisited config with the fewest knobs different from `config`; nullopt when none is left.
  std::optional<search_space::Config> nearest(const search_space::Config& config, const ConfigSet& visited) const;

 private:
  std::vector<search_space::Config> configs_;
};

}  // namespace optune::tuner
