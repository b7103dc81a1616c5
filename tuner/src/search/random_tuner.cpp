#include "optune/tuner/search/random_tuner.hpp"

#include <algorithm>

#include "optune/tuner/search/candidate_pool.hpp"
#include "optune/tuner/search/strategies.hpp"

namespace optune::tuner {

// Draws per wanted config before the space is taken as exhausted: with most of a small space
// measured, rejection sampling stops finding new points.
constexpr int kDrawsPerConfig = 2000;
// Random walks per wanted config before a space whose valid configs are rare is taken as exhausted.
constexpr int kWalksPerConfig = 200;

RandomTuner::RandomTuner(SearchDomain domain, std::uint64_t seed) : domain_(std::move(domain)), rng_(seed) {}

std::vector<search_space::Config> RandomTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  if (exhausted_) return batch;
  if (domain_.pool()) {
    batch = domain_.pool()->random(n, domain_.visited(), rng_);
    domain_.claim_all(batch);
    return batch;
  }
  const auto& space = domain_.space();
  // Small spaces are walked exactly, so that "exhausted" is true and not a sampling accident.
  if (space.size() <= static_cast<std::uint64_t>(kDrawsPerConfig)) {
    std::vector<search_space::Config> left;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      auto config = space.from_index(i);
      if (domain_.is_open(config)) left.push_back(config);
    }
    std::shuffle(left.begin(), left.end(), rng_);
    if (left.size() <= n) exhausted_ = true;
    left.resize(std::min(left.size(), n));
    domain_.claim_all(left);
    return left;
  }
  std::uniform_int_distribution<std::uint64_t> index(0, space.size() - 1);
  for (int draws = 0; batch.size() < n && draws < kDrawsPerConfig * static_cast<int>(n); ++draws) {
    auto config = space.from_index(index(rng_));
    if (domain_.claim(config)) batch.push_back(std::move(config));
  }
  // Valid configs too rare for uniform draws (or most of them measured): walks through valid
  // neighbours of those measured find the rest of their connected region.
  for (int walks = 0; batch.size() < n && walks < kWalksPerConfig * static_cast<int>(n); ++walks) {
    auto config = domain_.walk_candidate(rng_);
    if (!config) break;
    if (domain_.claim(*config)) batch.push_back(std::move(*config));
  }
  if (batch.size() < n) exhausted_ = true;
  return batch;
}

namespace strategies {

std::unique_ptr<Tuner> random(const TunerRequest& request) {
  return std::make_unique<RandomTuner>(request.domain(), request.options.seed);
}

}  // namespace strategies
}  // namespace optune::tuner
