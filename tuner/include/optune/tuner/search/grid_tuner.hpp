// GridTuner: walks the space in index order, skipping invalid and measured configs (AutoTVM's
// GridSearchTuner). Exhaustive on small spaces; on large ones it only sees the first corner.
#pragma once

#include "optune/tuner/search/search_domain.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

class GridTuner final : public Tuner {
 public:
  explicit GridTuner(SearchDomain domain);
  std::string name() const override { return "grid"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>&, const std::vector<measure::MeasureResult>&) override {}

 private:
  SearchDomain domain_;
  std::uint64_t next_index_ = 0;  // into the domain's configs (SearchDomain::at)
};

}  // namespace optune::tuner
