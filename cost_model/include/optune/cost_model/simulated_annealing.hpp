// Simulated annealing over a ConfigSpace, guided by a cost model (AutoTVM's
// SimulatedAnnealingOptimizer): many chains walk the space one random neighbour at a time,
// accepting by the Metropolis rule as the temperature falls, and the best distinct configs seen
// that the tuner has not measured yet are returned. Every step scores all chains' proposals in one
// batch: a model scores a batch of 128 in about the time it scores one.
#pragma once

#include <cstddef>
#include <functional>
#include <random>
#include <span>
#include <unordered_set>
#include <vector>

#include "optune/search_space/config_space.hpp"

namespace optune::cost_model {

using ConfigSet = std::unordered_set<search_space::Config, search_space::ConfigHash>;

struct ScoredConfig {
  search_space::Config config;
  double score = 0;  // higher is predicted faster
};

// Scores a batch of configs, one score per config, higher is better (e.g. XGBCostModel::predict).
using BatchScorer = std::function<std::vector<double>(std::span<const search_space::Config>)>;

struct AnnealingOptions {
  int chains = 128;
  int max_steps = 400;
  // Temperature falls linearly from start to end over max_steps. It is measured in standard
  // deviations of the starting points' scores, so it means the same for any model's score scale.
  double start_temperature = 1.0;
  double end_temperature = 0.0;
  // Stop when the top-n set has not changed for this many steps (0: never stop early).
  int early_stop_steps = 50;
};

struct AnnealingResult {
  std::vector<ScoredConfig> best;  // at most n, distinct, none excluded, best first
  int steps = 0;                   // steps taken (fewer than max_steps after an early stop)
  std::size_t scored = 0;          // configs scored, in all batches
  double seconds = 0;              // wall time of the search
};

// The n configs with the best predicted score found by annealing, valid, distinct and not in
// `exclude` (the measured ones). Chains start at `seeds` (e.g. the best measured configs; invalid
// ones are skipped) and at uniform random valid configs for the rest. Fewer than n come back only
// when the walk finds fewer unexcluded valid configs. Throws std::runtime_error when the space has
// no valid config that sampling can find.
AnnealingResult find_best_predicted(const search_space::ConfigSpace& space,
                                    const BatchScorer& score, std::size_t n,
                                    const ConfigSet& exclude, std::mt19937_64& rng,
                                    const AnnealingOptions& options = {},
                                    std::span<const search_space::Config> seeds = {});

}  // namespace optune::cost_model
