#include "optune/tuner/search/search_domain.hpp"

#include <stdexcept>

#include "optune/tuner/search/candidate_pool.hpp"

namespace optune::tuner {

// Draws before the space is taken to have no valid config left to sample.
constexpr int kSampleAttempts = 1000;
// Steps of a random walk through valid neighbours (walk_candidate): enough to leave the start's
// neighbourhood.
constexpr int kWalkSteps = 16;

SearchDomain::SearchDomain(const search_space::ConfigSpace& space, ConfigSet already_measured,
                           std::shared_ptr<const CandidatePool> pool)
    : space_(space), visited_(std::move(already_measured)), pool_(std::move(pool)) {}

bool SearchDomain::is_open(const search_space::Config& config) const {
  return !visited_.contains(config) && space_.is_valid(config);
}

bool SearchDomain::claim(const search_space::Config& config) {
  if (!is_open(config)) return false;
  visited_.insert(config);
  return true;
}

void SearchDomain::claim_all(const std::vector<search_space::Config>& configs) {
  visited_.insert(configs.begin(), configs.end());
}

std::uint64_t SearchDomain::size() const { return pool_ ? pool_->configs().size() : space_.size(); }

search_space::Config SearchDomain::at(std::uint64_t index) const {
  return pool_ ? pool_->configs()[index] : space_.from_index(index);
}

std::optional<search_space::Config> SearchDomain::closest_candidate(const search_space::Config& config) const {
  if (!pool_) return config;
  return pool_->nearest(config, visited_);
}

std::optional<search_space::Config> SearchDomain::random_candidate(std::mt19937_64& rng) const {
  if (pool_) {
    auto drawn = pool_->random(1, visited_, rng);
    if (drawn.empty()) return std::nullopt;
    return drawn.front();
  }
  try {
    return space_.sample_valid(rng, kSampleAttempts);
  } catch (const std::runtime_error&) {
    return walk_candidate(rng);  // valid configs too rare for rejection sampling
  }
}

std::optional<search_space::Config> SearchDomain::walk_candidate(std::mt19937_64& rng) const {
  if (pool_) return std::nullopt;
  std::vector<const search_space::Config*> starts;
  for (const auto& config : visited_)
    if (space_.is_valid(config)) starts.push_back(&config);
  if (starts.empty()) return std::nullopt;
  std::uniform_int_distribution<std::size_t> pick(0, starts.size() - 1);
  search_space::Config config = *starts[pick(rng)];
  for (int step = 0; step < kWalkSteps; ++step) config = space_.random_neighbour(config, rng);
  return config;
}

}  // namespace optune::tuner
