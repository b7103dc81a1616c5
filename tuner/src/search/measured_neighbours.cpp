#include "optune/tuner/search/measured_neighbours.hpp"

#include <algorithm>

namespace optune::tuner {
namespace {

constexpr std::uint32_t kAnyOption = ~0u;  // never an option's index

search_space::Config wildcard(search_space::Config config, std::size_t knob) {
  config.options[knob] = kAnyOption;
  return config;
}

}  // namespace

MeasuredNeighbours::MeasuredNeighbours(const search_space::ConfigSpace& space) {
  for (std::size_t k = 0; k < space.knobs().size(); ++k)
    neighbours_ += static_cast<double>(space.option_count(k)) - 1;
}

void MeasuredNeighbours::add(const search_space::Config& measured) {
  for (std::size_t k = 0; k < measured.options.size(); ++k) ++around_[wildcard(measured, k)];
}

double MeasuredNeighbours::share(const search_space::Config& config) const {
  if (neighbours_ <= 0) return 0;
  double measured = 0;
  for (std::size_t k = 0; k < config.options.size(); ++k) {
    const auto found = around_.find(wildcard(config, k));
    if (found != around_.end()) measured += found->second;
  }
  return std::min(1.0, measured / neighbours_);
}

}  // namespace optune::tuner
