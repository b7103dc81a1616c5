#include "optune/tuner/search/source_agreement.hpp"

namespace optune::tuner {

std::optional<double> rank_agreement(const Throughputs& source, const std::vector<search_space::Config>& own_configs,
                                     const std::vector<double>& own_gflops) {
  std::vector<std::pair<double, double>> shared;  // (own, source)
  for (std::size_t i = 0; i < own_configs.size(); ++i)
    if (auto found = source.find(own_configs[i]); found != source.end())
      shared.emplace_back(own_gflops[i], found->second);
  if (shared.size() < kMinSharedConfigs) return std::nullopt;
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < shared.size(); ++i) {
    for (std::size_t j = i + 1; j < shared.size(); ++j) {
      const double sign = (shared[i].first - shared[j].first) * (shared[i].second - shared[j].second);
      concordant += sign > 0;
      discordant += sign < 0;
    }
  }
  if (concordant + discordant == 0) return std::nullopt;
  return (concordant - discordant) / (concordant + discordant);
}

}  // namespace optune::tuner
