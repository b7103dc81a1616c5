// GridTuner: walks the space in index order, skipping invalid and measured configs (AutoTVM's
// GridSearchTuner). Exhaustive on small spaces; on large ones it only sees the first corner.
#pragma once

#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

class GridTuner final : public Tuner {
 public:
  GridTuner(const search_space::ConfigSpace& space, ConfigSet already_measured,
            std::shared_ptr<const CandidatePool> pool = nullptr);
  std::string name() const override { return "grid"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>&, const std::vector<measure::MeasureResult>&) override {}

 private:
  const search_space::ConfigSpace& space_;
  ConfigSet visited_;
  std::uint64_t next_index_ = 0;
  std::shared_ptr<const CandidatePool> pool_;
};

}  // namespace optune::tuner
