// CostModel: predicts how fast configs of a task will run, from the task's measured records, so a
// tuner measures the promising ones first (MetaSchedule's CostModel: update / predict). The
// XGBoost implementation is xgb_cost_model.hpp; simulated_annealing.hpp searches a space with it
// and batch_selection.hpp turns its candidates into the next batch to measure.
#pragma once

#include <string>
#include <vector>

#include "optune/search_space/config_space.hpp"

namespace optune::cost_model {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Learns from configs and their measured throughput (GFLOP/s; 0 for failed candidates).
  virtual void update(const std::vector<search_space::Config>& configs,
                      const std::vector<double>& gflops) = 0;
  // A score per config; higher means predicted faster. Only the order is meaningful.
  virtual std::vector<double> predict(const std::vector<search_space::Config>& configs) const = 0;
};

// The linked XGBoost library's version, "major.minor.patch".
std::string xgboost_version();

}  // namespace optune::cost_model
