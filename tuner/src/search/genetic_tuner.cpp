#include "optune/tuner/search/genetic_tuner.hpp"

#include <algorithm>

#include "optune/tuner/search/strategies.hpp"

namespace optune::tuner {
namespace {

// Tries per wanted child before the rest of a generation is filled at random: late in a run most
// children of good parents have been measured already.
constexpr int kAttemptsPerChild = 50;

}  // namespace

GeneticTuner::GeneticTuner(SearchDomain domain, std::uint64_t seed, GeneticOptions options)
    : domain_(std::move(domain)), rng_(seed), options_(options) {}

bool GeneticTuner::propose(const search_space::Config& proposed) {
  auto config = domain_.closest_candidate(proposed);  // in a pool, the nearest config it still has
  if (!config || !domain_.claim(*config)) return false;
  pending_.push_back(std::move(*config));
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
      std::uniform_int_distribution<std::uint64_t> option(0, domain_.space().option_count(knob) - 1);
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
    auto immigrant = domain_.random_candidate(rng_);
    if (!immigrant) break;  // the pool is used up, or no valid config was found at all
    propose(*immigrant);
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

namespace strategies {

std::unique_ptr<Tuner> genetic(const TunerRequest& request) {
  return std::make_unique<GeneticTuner>(request.domain(), request.options.seed);
}

}  // namespace strategies

}  // namespace optune::tuner
