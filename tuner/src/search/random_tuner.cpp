#include "optune/tuner/search/random_tuner.hpp"

#include <algorithm>

#include "optune/tuner/search/candidate_pool.hpp"

namespace optune::tuner {

// Draws per wanted config before the space is taken as exhausted: with most of a small space
// measured, rejection sampling stops finding new points.
constexpr int kDrawsPerConfig = 2000;

RandomTuner::RandomTuner(const search_space::ConfigSpace& space, std::uint64_t seed,
                         ConfigSet already_measured, std::shared_ptr<const CandidatePool> pool)
    : space_(space), rng_(seed), visited_(std::move(already_measured)), pool_(std::move(pool)) {}

std::vector<search_space::Config> RandomTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  if (exhausted_) return batch;
  if (pool_) {
    batch = pool_->random(n, visited_, rng_);
    visited_.insert(batch.begin(), batch.end());
    return batch;
  }
  // Small spaces are walked exactly, so that "exhausted" is true and not a sampling accident.
  if (space_.size() <= static_cast<std::uint64_t>(kDrawsPerConfig)) {
    std::vector<search_space::Config> left;
    for (std::uint64_t i = 0; i < space_.size(); ++i) {
      auto config = space_.from_index(i);
      if (!visited_.count(config) && space_.is_valid(config)) left.push_back(config);
    }
    std::shuffle(left.begin(), left.end(), rng_);
    if (left.size() <= n) exhausted_ = true;
    left.resize(std::min(left.size(), n));
    for (const auto& config : left) visited_.insert(config);
    return left;
  }
  std::uniform_int_distribution<std::uint64_t> index(0, space_.size() - 1);
  for (int draws = 0; batch.size() < n; ++draws) {
    if (draws > kDrawsPerConfig * static_cast<int>(n)) {
      exhausted_ = true;
      break;
    }
    auto config = space_.from_index(index(rng_));
    if (visited_.count(config) || !space_.is_valid(config)) continue;
    visited_.insert(config);
    batch.push_back(std::move(config));
  }
  return batch;
}

}  // namespace optune::tuner
