// SearchDomain: where a search strategy looks, and the bookkeeping every strategy shares. The
// domain is the task's space, or a replayed landscape's pool of measured configs
// (candidate_pool.hpp), less the configs already visited: measured before this run (the
// database's records of the task) or proposed in it. A strategy claims what it proposes, so no
// strategy proposes a config twice, nor one the database already holds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

using ConfigSet = std::unordered_set<search_space::Config, search_space::ConfigHash>;

class CandidatePool;

class SearchDomain {
 public:
  // `space` must outlive the domain. `pool` null: the whole space.
  explicit SearchDomain(const search_space::ConfigSpace& space, ConfigSet already_measured = {},
                        std::shared_ptr<const CandidatePool> pool = nullptr);

  const search_space::ConfigSpace& space() const { return space_; }
  // The replayed landscape's configs; null when the whole space is searched.
  const CandidatePool* pool() const { return pool_.get(); }
  // Measured before this run or proposed in it.
  const ConfigSet& visited() const { return visited_; }
  bool is_visited(const search_space::Config& config) const { return visited_.contains(config); }
  // Neither visited nor invalid in the space: a config a strategy may propose.
  bool is_open(const search_space::Config& config) const;

  // Marks `config` visited when it is open and says whether it was; a strategy proposes it then.
  bool claim(const search_space::Config& config);
  // Marks configs visited without checking them: those a strategy took from this domain already.
  void claim_all(const std::vector<search_space::Config>& configs);

  // The domain's configs in a fixed order, visited or not: the pool's, or the space's by index.
  std::uint64_t size() const;
  search_space::Config at(std::uint64_t index) const;
  // The config to propose for `config`: itself when the whole space is searched; in a pool, the
  // unvisited pool config with the fewest knobs different from it (nullopt when none is left).
  std::optional<search_space::Config> closest_candidate(const search_space::Config& config) const;
  // A random config to propose: a uniformly drawn unvisited pool config, or a valid config of the
  // space (perhaps a visited one; claim() tells); nullopt when none is found. Where rejection
  // sampling finds no valid config, a walk_candidate().
  std::optional<search_space::Config> random_candidate(std::mt19937_64& rng) const;
  // Where valid configs are too rare for rejection sampling (a tiny shape leaves a few of a GPU
  // template's 10^8 configs valid), the end of a random walk through valid one-knob neighbours
  // from a visited valid config (the default, measured first); perhaps a visited one. nullopt in
  // a pool, or with no valid config visited.
  std::optional<search_space::Config> walk_candidate(std::mt19937_64& rng) const;

 private:
  const search_space::ConfigSpace& space_;
  ConfigSet visited_;
  std::shared_ptr<const CandidatePool> pool_;
};

}  // namespace optune::tuner
