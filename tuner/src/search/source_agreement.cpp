#include "optune/tuner/search/source_agreement.hpp"

#include <limits>
#include <stdexcept>

namespace optune::tuner {

SourceDevice::SourceDevice(std::vector<search_space::Config> configs, std::vector<double> gflops)
    : configs_(std::move(configs)), gflops_(std::move(gflops)) {
  if (configs_.size() != gflops_.size()) throw std::invalid_argument("SourceDevice: configs and gflops differ in length");
  for (std::size_t i = 0; i < configs_.size(); ++i) measured_[configs_[i]] = gflops_[i];
}

double SourceDevice::estimate(const search_space::Config& config) const {
  if (auto found = measured_.find(config); found != measured_.end()) return found->second;
  std::size_t nearest = std::numeric_limits<std::size_t>::max();
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    std::size_t distance = 0;
    for (std::size_t k = 0; k < config.options.size() && k < configs_[i].options.size() && distance <= nearest; ++k)
      distance += config.options[k] != configs_[i].options[k];
    if (distance > nearest) continue;
    if (distance < nearest) {
      nearest = distance;
      sum = 0;
      count = 0;
    }
    sum += gflops_[i];
    ++count;
  }
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

std::optional<double> rank_agreement(std::span<const double> own, std::span<const double> source) {
  if (own.size() != source.size() || own.size() < kMinSharedConfigs) return std::nullopt;
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < own.size(); ++i) {
    for (std::size_t j = i + 1; j < own.size(); ++j) {
      const double sign = (own[i] - own[j]) * (source[i] - source[j]);
      concordant += sign > 0;
      discordant += sign < 0;
    }
  }
  if (concordant + discordant == 0) return std::nullopt;
  return (concordant - discordant) / (concordant + discordant);
}

}  // namespace optune::tuner
