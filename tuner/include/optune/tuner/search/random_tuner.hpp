// RandomTuner: uniform valid samples without repetition; the baseline every smarter tuner must beat.
#pragma once

#include <random>

#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

class RandomTuner final : public Tuner {
 public:
  RandomTuner(const search_space::ConfigSpace& space, std::uint64_t seed, ConfigSet already_measured,
              std::shared_ptr<const CandidatePool> pool = nullptr);
  std::string name() const override { return "random"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>&, const std::vector<measure::MeasureResult>&) override {}

 private:
  const search_space::ConfigSpace& space_;
  std::mt19937_64 rng_;
  ConfigSet visited_;
  bool exhausted_ = false;
  std::shared_ptr<const CandidatePool> pool_;
};

}  // namespace optune::tuner
