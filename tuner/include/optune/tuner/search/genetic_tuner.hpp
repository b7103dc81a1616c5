// GeneticTuner: a generational genetic search (AutoTVM's GATuner). Parents are drawn with
// probability proportional to measured throughput, children take each knob from either parent
// (uniform crossover) and mutate a knob with a small probability; only valid, never measured
// children are proposed. The first generation is random.
#pragma once

#include <deque>
#include <random>

#include "optune/tuner/search/search_domain.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

struct GeneticOptions {
  std::size_t population = 32;
  std::size_t elites = 4;       // best configs ever measured, always among the parents
  double mutation_rate = 0.1;   // per knob
};

class GeneticTuner final : public Tuner {
 public:
  GeneticTuner(SearchDomain domain, std::uint64_t seed, GeneticOptions options = {});
  std::string name() const override { return "ga"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>& configs,
              const std::vector<measure::MeasureResult>& results) override;

 private:
  struct Scored {
    search_space::Config config;
    double fitness;  // GFLOP/s; 0 for a failed candidate
  };
  void breed();
  search_space::Config pick_parent(std::discrete_distribution<std::size_t>& roulette,
                                   const std::vector<Scored>& parents);
  search_space::Config child_of(const search_space::Config& a, const search_space::Config& b);
  bool propose(const search_space::Config& config);

  SearchDomain domain_;
  std::mt19937_64 rng_;
  GeneticOptions options_;
  std::deque<search_space::Config> pending_;  // this generation, not yet handed out
  std::vector<Scored> generation_;            // this generation's results so far
  std::vector<Scored> elites_;
  bool exhausted_ = false;
};

}  // namespace optune::tuner
