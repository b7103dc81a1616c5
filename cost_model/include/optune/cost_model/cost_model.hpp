// CostModel: predicts how fast configs of a task will run, from the task's measured records, so a
// tuner measures the promising ones first (MetaSchedule's CostModel: update / predict). A model
// reads configs through the task's features (features.hpp) and may start from records of other
// workloads or devices (transfer). The model-based tuner (tuner/search/model_based_tuner.hpp)
// takes any implementation; the XGBoost one is xgb_cost_model.hpp. simulated_annealing.hpp
// searches a space with a model and batch_selection.hpp turns its candidates into the next batch.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "optune/cost_model/features.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::cost_model {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Learns from configs and their measured throughput (GFLOP/s; 0 for failed candidates).
  // `noisy` is empty or flags each config measured on a busy machine or with a wide spread
  // (db::TuningRecord::is_noisy): such a throughput is slowed by the others beside it, and not
  // alike for every config (a hog on the cores slows a config by the threads it uses), so it is
  // weighed less (xgb_cost_model.hpp). Callers pass such a throughput as its quiet estimate
  // (db::quiet_gflops_estimate), the load taken off.
  virtual void update(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops,
                      const std::vector<bool>& noisy) = 0;
  void update(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops) {
    update(configs, gflops, {});
  }
  // A score per config; higher means predicted faster. Only the order is meaningful. All zeros
  // while untrained.
  virtual std::vector<double> predict(std::span<const search_space::Config> configs) const = 0;
  // The same for configs already read through features() (a pool scored again and again).
  virtual std::vector<double> predict_features(const FeatureMatrix& features) const = 0;
  // How this model reads a config of its task.
  virtual const FeatureExtractor& features() const = 0;

  // Measurements of another workload, read through that workload's own `features`, or of another
  // device: one `group` per workload or device (any int but 0, the task's own), each row counting
  // `weight` against a row of the task's own (1). Used from the next update() or fit() on.
  virtual void add_transfer(const FeatureExtractor& features, std::span<const search_space::Config> configs,
                            std::span<const double> gflops, int group, double weight) = 0;
  virtual std::size_t transfer_row_count() const = 0;
  // Changes what every row of one transfer group counts (0: left out of the fits), as the task's
  // own records show how far that group's device agrees with this one. Used from the next fit on.
  virtual void set_transfer_weight(int group, double weight) = 0;
  // Trains on the transfer rows alone, before the task has any measurement.
  virtual void fit() = 0;
  virtual bool is_trained() const = 0;
  virtual double fit_seconds() const = 0;  // wall seconds of all fits so far
};

// The linked XGBoost library's version, "major.minor.patch".
std::string xgboost_version();

}  // namespace optune::cost_model
