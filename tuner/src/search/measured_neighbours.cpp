#include "optune/tuner/search/measured_neighbours.hpp"

#include <algorithm>

namespace optune::tuner {
namespace {

constexpr std::uint32_t kAnyOption = ~0u;  // never an option's index

// Calls `visit` with `config`'s key for each knob (that knob's option wildcarded), on one copy
// changed in place: share() runs for every config the annealing scores.
template <class Visit>
void for_each_key(search_space::Config config, Visit visit) {
  for (auto& option : config.options) {
    const std::uint32_t kept = option;
    option = kAnyOption;
    visit(config);
    option = kept;
  }
}

}  // namespace

MeasuredNeighbours::MeasuredNeighbours(const search_space::ConfigSpace& space) {
  for (std::size_t k = 0; k < space.knobs().size(); ++k)
    neighbours_ += static_cast<double>(space.option_count(k)) - 1;
}

void MeasuredNeighbours::add(const search_space::Config& measured) {
  for_each_key(measured, [this](const search_space::Config& key) { ++around_[key]; });
}

double MeasuredNeighbours::share(const search_space::Config& config) const {
  if (neighbours_ <= 0 || around_.empty()) return 0;
  double measured = 0;
  for_each_key(config, [&](const search_space::Config& key) {
    const auto found = around_.find(key);
    if (found != around_.end()) measured += found->second;
  });
  return std::min(1.0, measured / neighbours_);
}

}  // namespace optune::tuner
