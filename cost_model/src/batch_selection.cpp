// Diverse selection (greedy submodular pick) and the random share of a batch.
#include "optune/cost_model/batch_selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace optune::cost_model {

using search_space::Config;

std::vector<Config> select_diverse(std::span<const ScoredConfig> candidates, std::size_t n,
                                   double coverage_weight) {
  if (candidates.empty() || n == 0) return {};
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const ScoredConfig& candidate : candidates) {
    if (!std::isfinite(candidate.score)) continue;
    low = std::min(low, candidate.score);
    high = std::max(high, candidate.score);
  }
  const double range = high > low ? high - low : 1.0;
  const std::size_t knobs = candidates.front().config.options.size();

  // Options the picks so far cover, per knob.
  std::vector<std::unordered_set<std::uint32_t>> covered(knobs);
  std::vector<bool> taken(candidates.size(), false);
  std::vector<Config> picks;
  while (picks.size() < std::min(n, candidates.size())) {
    std::size_t best = candidates.size();
    double best_gain = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i]) continue;
      const Config& config = candidates[i].config;
      std::size_t new_options = 0;
      for (std::size_t k = 0; k < knobs && k < config.options.size(); ++k) {
        new_options += covered[k].contains(config.options[k]) ? 0 : 1;
      }
      const double score =
          std::isfinite(candidates[i].score) ? (candidates[i].score - low) / range : 0;
      const double gain = score + coverage_weight * static_cast<double>(new_options) /
                                      static_cast<double>(std::max<std::size_t>(knobs, 1));
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
      }
    }
    taken[best] = true;
    const Config& config = candidates[best].config;
    for (std::size_t k = 0; k < knobs && k < config.options.size(); ++k)
      covered[k].insert(config.options[k]);
    picks.push_back(config);
  }
  return picks;
}

std::vector<Config> mix_in_random(const search_space::ConfigSpace& space,
                                  std::span<const Config> ranked, std::size_t n, double epsilon,
                                  const ConfigSet& exclude, std::mt19937_64& rng) {
  const auto random_share =
      static_cast<std::size_t>(std::lround(std::clamp(epsilon, 0.0, 1.0) * static_cast<double>(n)));
  std::vector<Config> batch;
  ConfigSet chosen;
  for (const Config& config : ranked) {
    if (batch.size() + random_share >= n) break;
    if (exclude.contains(config) || !chosen.insert(config).second) continue;
    batch.push_back(config);
  }
  // Random configs must not duplicate any ranked one, even those not taken: the tuner may measure
  // them next round.
  ConfigSet avoid = chosen;
  avoid.insert(ranked.begin(), ranked.end());
  constexpr int kAttemptsPerConfig = 64;
  for (std::size_t attempt = 0; batch.size() < n && attempt < n * kAttemptsPerConfig; ++attempt) {
    Config config = space.sample_valid(rng);
    if (exclude.contains(config) || !avoid.insert(config).second) continue;
    batch.push_back(std::move(config));
  }
  return batch;
}

}  // namespace optune::cost_model
