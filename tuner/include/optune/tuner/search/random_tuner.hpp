// RandomTuner: uniform valid samples without repetition; the baseline every smarter tuner must beat.
#pragma once

#include <random>

#include "optune/tuner/search/search_domain.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

class RandomTuner final : public Tuner {
 public:
  RandomTuner(SearchDomain domain, std::uint64_t seed);
  std::string name() const override { return "random"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>&, const std::vector<measure::MeasureResult>&) override {}

 private:
  SearchDomain domain_;
  std::mt19937_64 rng_;
  bool exhausted_ = false;
};

}  // namespace optune::tuner
