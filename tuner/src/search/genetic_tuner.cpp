#include "optune/tuner/search/genetic_tuner.hpp"

#include <algorithm>

#include "optune/tuner/search/candidate_pool.hpp"

namespace optune::tuner {
namespace {

// Tries per wanted child before the rest of a generation is filled at random: late in a run most
// children of good parents have been measured already.
constexpr int kAttemptsPerChild = 50;

}  // namespace

GeneticTuner::GeneticTuner(const search_space::ConfigSpace& space, std::uint64_t seed,
                           ConfigSet already_measured, GeneticOptions options,
                           std::shared_ptr<const CandidatePool> pool)
    : space_(space), rng_(seed), visited_(std::move(already_measured)), options_(options), pool_(std::move(pool)) {}

bool GeneticTuner::propose(const search_space::Config& proposed) {
  search_space::Config config = proposed;
  if (pool_) {  // the nearest config the pool still has
    auto nearest = pool_->nearest(proposed, visited_);
    if (!nearest) return false;
    config = *nearest;
  }
  if (visited_.count(config) || !space_.is_valid(config)) return false;
  visited_.insert(config);
  pending_.push_back(config);
  return true;
}

search_space::Config GeneticTuner::pick_parent(std::discrete_distribution<std::size_t>& roulette,
                                               const std::vector<Scored>& parents) {
  return parents[roulette(rng_)].config;
}

search_space::Config GeneticTuner::child_of(const search_space::Config& a, const search_space::Config& b) {
  search_space::Config child = a;
  std::bernoulli_distribution coin(0.5), mutate(options_.mutation_rate);
  for (std::size_t knob = 0; knob < child.options.size(); ++knob) {
    if (coin(rng_)) child.options[knob] = b.options[knob];
    if (mutate(rng_)) {
      std::uniform_int_distribution<std::uint64_t> option(0, space_.option_count(knob) - 1);
      child.options[knob] = static_cast<std::uint32_t>(option(rng_));
    }
  }
  return child;
}

void GeneticTuner::breed() {
  std::vector<Scored> parents = elites_;
  parents.insert(parents.end(), generation_.begin(), generation_.end());
  generation_.clear();
  std::size_t wanted = options_.population;
  std::vector<double> weights;
  for (const auto& p : parents) weights.push_back(p.fitness);
  bool any_fit = std::any_of(weights.begin(), weights.end(), [](double w) { return w > 0; });
  if (any_fit) {
    std::discrete_distribution<std::size_t> roulette(weights.begin(), weights.end());
    for (int attempt = 0; pending_.size() < wanted && attempt < kAttemptsPerChild * static_cast<int>(wanted); ++attempt)
      propose(child_of(pick_parent(roulette, parents), pick_parent(roulette, parents)));
  }
  // Random immigrants: the first generation, and whatever breeding could not fill.
  for (int attempt = 0; pending_.size() < wanted && attempt < kAttemptsPerChild * static_cast<int>(wanted); ++attempt) {
    if (pool_) {
      auto immigrants = pool_->random(1, visited_, rng_);
      if (immigrants.empty()) break;
      propose(immigrants.front());
      continue;
    }
    try {
      propose(space_.sample_valid(rng_, 1000));
    } catch (const std::runtime_error&) {
      break;  // no valid config found at all
    }
  }
  if (pending_.empty()) exhausted_ = true;
}

std::vector<search_space::Config> GeneticTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  while (batch.size() < n && !exhausted_) {
    if (pending_.empty()) breed();
    while (batch.size() < n && !pending_.empty()) {
      batch.push_back(pending_.front());
      pending_.pop_front();
    }
  }
  return batch;
}

void GeneticTuner::update(const std::vector<search_space::Config>& configs,
                          const std::vector<measure::MeasureResult>& results) {
  for (std::size_t i = 0; i < configs.size(); ++i) {
    Scored scored{configs[i], results[i].ok() ? results[i].gflops : 0.0};
    generation_.push_back(scored);
    elites_.push_back(scored);
  }
  std::sort(elites_.begin(), elites_.end(), [](const Scored& a, const Scored& b) { return a.fitness > b.fitness; });
  if (elites_.size() > options_.elites) elites_.resize(options_.elites);
}

}  // namespace optune::tuner
