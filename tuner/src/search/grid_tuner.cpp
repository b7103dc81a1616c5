#include "optune/tuner/search/grid_tuner.hpp"

#include "optune/tuner/search/candidate_pool.hpp"

namespace optune::tuner {

GridTuner::GridTuner(const search_space::ConfigSpace& space, ConfigSet already_measured,
                     std::shared_ptr<const CandidatePool> pool)
    : space_(space), visited_(std::move(already_measured)), pool_(std::move(pool)) {}

std::vector<search_space::Config> GridTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  const std::uint64_t size = pool_ ? pool_->configs().size() : space_.size();
  while (batch.size() < n && next_index_ < size) {
    auto config = pool_ ? pool_->configs()[next_index_++] : space_.from_index(next_index_++);
    if (visited_.count(config) || !space_.is_valid(config)) continue;
    visited_.insert(config);
    batch.push_back(std::move(config));
  }
  return batch;
}

}  // namespace optune::tuner
