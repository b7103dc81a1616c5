// Simulated annealing with batched scoring, and the running top-n of unmeasured configs.
#include "optune/cost_model/simulated_annealing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace optune::cost_model {
namespace {

using search_space::Config;

// The n best distinct configs offered so far, excluding the measured ones. A min-heap by score,
// so the config to evict is at the front.
class TopConfigs {
 public:
  TopConfigs(std::size_t n, const ConfigSet& exclude) : n_(n), exclude_(exclude) {}

  // True when the set changed.
  bool offer(const Config& config, double score) {
    if (n_ == 0 || !std::isfinite(score)) return false;
    if (heap_.size() == n_ && score <= heap_.front().score) return false;
    if (members_.contains(config) || exclude_.contains(config)) return false;
    if (heap_.size() == n_) {
      std::pop_heap(heap_.begin(), heap_.end(), worse_on_top);
      members_.erase(heap_.back().config);
      heap_.pop_back();
    }
    members_.insert(config);
    heap_.push_back({config, score});
    std::push_heap(heap_.begin(), heap_.end(), worse_on_top);
    return true;
  }

  std::vector<ScoredConfig> best_first() const {
    std::vector<ScoredConfig> sorted = heap_;
    std::sort(sorted.begin(), sorted.end(),
              [](const ScoredConfig& a, const ScoredConfig& b) { return a.score > b.score; });
    return sorted;
  }

 private:
  static bool worse_on_top(const ScoredConfig& a, const ScoredConfig& b) {
    return a.score > b.score;
  }

  std::size_t n_;
  const ConfigSet& exclude_;
  std::vector<ScoredConfig> heap_;
  ConfigSet members_;
};

std::vector<Config> starting_points(const search_space::ConfigSpace& space, std::size_t chains,
                                    std::span<const Config> seeds, std::mt19937_64& rng) {
  std::vector<Config> points;
  for (const Config& seed : seeds) {
    if (points.size() == chains) break;
    if (seed.options.size() == space.knobs().size() && space.is_valid(seed)) points.push_back(seed);
  }
  while (points.size() < chains) points.push_back(space.sample_valid(rng));
  return points;
}

// Standard deviation of the finite scores; 1 when they do not spread (e.g. an untrained model).
double score_scale(const std::vector<double>& scores) {
  double sum = 0, sum_squares = 0;
  std::size_t count = 0;
  for (double score : scores) {
    if (!std::isfinite(score)) continue;
    sum += score;
    sum_squares += score * score;
    ++count;
  }
  if (count < 2) return 1.0;
  const double mean = sum / static_cast<double>(count);
  const double variance = sum_squares / static_cast<double>(count) - mean * mean;
  return variance > 1e-12 ? std::sqrt(variance) : 1.0;
}

std::vector<double> score_batch(const BatchScorer& score, std::span<const Config> configs) {
  std::vector<double> scores = score(configs);
  if (scores.size() != configs.size()) {
    throw std::logic_error("annealing: the scorer returned a different number of scores");
  }
  return scores;
}

}  // namespace

AnnealingResult find_best_predicted(const search_space::ConfigSpace& space,
                                    const BatchScorer& score, std::size_t n,
                                    const ConfigSet& exclude, std::mt19937_64& rng,
                                    const AnnealingOptions& options,
                                    std::span<const Config> seeds) {
  if (options.chains < 1) throw std::invalid_argument("annealing: chains must be at least 1");
  const auto start = std::chrono::steady_clock::now();
  AnnealingResult result;
  TopConfigs top(n, exclude);

  std::vector<Config> points =
      starting_points(space, static_cast<std::size_t>(options.chains), seeds, rng);
  std::vector<double> scores = score_batch(score, points);
  result.scored += points.size();
  for (std::size_t i = 0; i < points.size(); ++i) top.offer(points[i], scores[i]);
  const double scale = score_scale(scores);

  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<Config> proposals(points.size());
  int last_change = 0;
  for (int step = 0; step < options.max_steps; ++step) {
    const double progress = static_cast<double>(step) / options.max_steps;
    const double temperature =
        scale * (options.start_temperature +
                 (options.end_temperature - options.start_temperature) * progress);
    for (std::size_t i = 0; i < points.size(); ++i)
      proposals[i] = space.random_neighbour(points[i], rng);
    const std::vector<double> proposal_scores = score_batch(score, proposals);
    result.scored += proposals.size();
    result.steps = step + 1;

    bool changed = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double gain = proposal_scores[i] - scores[i];
      changed = top.offer(proposals[i], proposal_scores[i]) || changed;
      const bool accept =
          gain >= 0 || (temperature > 0 && uniform(rng) < std::exp(gain / temperature));
      if (!accept || !std::isfinite(proposal_scores[i])) continue;
      points[i] = std::move(proposals[i]);
      scores[i] = proposal_scores[i];
    }
    if (changed) last_change = step;
    if (options.early_stop_steps > 0 && step - last_change >= options.early_stop_steps) break;
  }
  result.best = top.best_first();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace optune::cost_model
