// Choosing the batch a model-based tuner measures next from the annealer's candidates: a diverse
// pick (AutoTVM's submodular selection), so that one batch does not spend itself on near-copies of
// one predicted optimum, and an epsilon share of random valid configs, so that a wrong model
// still sees the rest of the space.
#pragma once

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "optune/cost_model/simulated_annealing.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::cost_model {

// n of the candidates, chosen greedily: each pick maximises
//   normalised score + coverage_weight * (share of knobs whose option no earlier pick has),
// scores normalised to [0, 1] over the candidates. coverage_weight 0 takes the top n by score.
// Returned in pick order (best first).
std::vector<search_space::Config> select_diverse(std::span<const ScoredConfig> candidates,
                                                 std::size_t n, double coverage_weight = 0.5);

// A batch of n: round(epsilon * n) uniform random valid configs that are neither in `exclude` nor
// among `ranked`, the rest taken from `ranked` in order (skipping excluded ones). If `ranked` runs
// short, random configs fill the batch; fewer than n come back only when sampling finds no more.
std::vector<search_space::Config> mix_in_random(const search_space::ConfigSpace& space,
                                                std::span<const search_space::Config> ranked,
                                                std::size_t n, double epsilon,
                                                const ConfigSet& exclude, std::mt19937_64& rng);

}  // namespace optune::cost_model
