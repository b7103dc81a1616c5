#include "optune/tuner/search/grid_tuner.hpp"

#include "optune/tuner/search/strategies.hpp"

namespace optune::tuner {

GridTuner::GridTuner(SearchDomain domain) : domain_(std::move(domain)) {}

std::vector<search_space::Config> GridTuner::next_batch(std::size_t n) {
  std::vector<search_space::Config> batch;
  while (batch.size() < n && next_index_ < domain_.size()) {
    auto config = domain_.at(next_index_++);
    if (domain_.claim(config)) batch.push_back(std::move(config));
  }
  return batch;
}

namespace strategies {

std::unique_ptr<Tuner> grid(const TunerRequest& request) { return std::make_unique<GridTuner>(request.domain()); }

}  // namespace strategies

}  // namespace optune::tuner
