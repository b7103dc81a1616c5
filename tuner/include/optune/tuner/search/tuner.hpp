// Tuner: proposes the configs to measure next and learns from their results (AutoTVM's Tuner:
// next_batch / update). The tuning loop owns measuring and recording; a tuner only chooses.
// Strategies are listed, and made by name, in strategies.hpp; each searches a SearchDomain
// (search_domain.hpp), which keeps what was measured or proposed already.
#pragma once

#include <string>
#include <vector>

#include "optune/measure/measure_result.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual std::string name() const = 0;
  // Up to n valid configs never measured before (neither in this run nor among the records its
  // SearchDomain started from). Fewer, or none, when the space is exhausted.
  virtual std::vector<search_space::Config> next_batch(std::size_t n) = 0;
  // Results of the configs of the last batch, in order.
  virtual void update(const std::vector<search_space::Config>& configs,
                      const std::vector<measure::MeasureResult>& results) = 0;
  // Seconds spent choosing (model fits, searches over the model), for the overhead budget.
  virtual double overhead_seconds() const { return 0; }
};

}  // namespace optune::tuner
