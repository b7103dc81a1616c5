#include "optune/tuner/search/candidate_pool.hpp"

#include <algorithm>
#include <limits>

namespace optune::tuner {

std::vector<search_space::Config> CandidatePool::unvisited(const ConfigSet& visited) const {
  std::vector<search_space::Config> left;
  for (const auto& config : configs_)
    if (!visited.count(config)) left.push_back(config);
  return left;
}

std::vector<search_space::Config> CandidatePool::random(std::size_t n, const ConfigSet& visited,
                                                        std::mt19937_64& rng) const {
  auto left = unvisited(visited);
  std::shuffle(left.begin(), left.end(), rng);
  left.resize(std::min(n, left.size()));
  return left;
}

std::optional<search_space::Config> CandidatePool::nearest(const search_space::Config& config,
                                                           const ConfigSet& visited) const {
  std::optional<search_space::Config> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : configs_) {
    if (visited.count(candidate)) continue;
    std::size_t distance = 0;
    for (std::size_t k = 0; k < candidate.options.size(); ++k) distance += candidate.options[k] != config.options[k];
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace optune::tuner
