#include "optune/tuner/grid_tuner.hpp"

namespace optune::tuner {

GridTuner::GridTuner(const search_space::ConfigSpace& space, ConfigSet already_measured)
    : space_(space), visited_(std::move(already_measured)) {}

std::vector<search_space::Config> GridTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  const std::uint64_t size = space_.size();
  while (batch.size() < n && next_index_ < size) {
    auto config = space_.from_index(next_index_++);
    if (visited_.count(config) || !space_.is_valid(config)) continue;
    visited_.insert(config);
    batch.push_back(std::move(config));
  }
  return batch;
}

}  // namespace optune::tuner
