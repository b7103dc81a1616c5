// XGBTuner: model-based search (AutoTVM's XGBTuner). After every batch an XGBoost model is
// retrained on all measured configs of the task (failures as the slowest); the next batch is the
// most promising unmeasured configs that simulated annealing finds on the model, picked for
// diversity, plus an epsilon share of random ones. With records of the same template for other
// shapes (transfer) the model is trained before the first batch, so that batch is guided too.
#pragma once

#include <random>

#include "optune/cost_model/simulated_annealing.hpp"
#include "optune/cost_model/xgb_cost_model.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/task_history.hpp"
#include "optune/tuner/tuner.hpp"

namespace optune::tuner {

struct XGBTunerOptions {
  cost_model::XGBCostModelOptions model;
  cost_model::AnnealingOptions annealing;
  double epsilon = 0.05;             // share of random configs in each batch
  double diversity = 0.5;            // weight of knob coverage when picking a batch
  std::size_t candidates_per_config = 4;  // annealing returns this many per config wanted
  std::size_t seeds = 8;             // best measured configs that start annealing chains
};

class XGBTuner final : public Tuner {
 public:
  XGBTuner(const measure::MeasureTask& task, std::uint64_t seed, const TaskHistory& history,
           XGBTunerOptions options = {}, std::shared_ptr<const CandidatePool> pool = nullptr);
  std::string name() const override { return "xgb"; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>& configs,
              const std::vector<measure::MeasureResult>& results) override;
  double overhead_seconds() const override { return model_.fit_seconds() + search_seconds_; }
  std::size_t transfer_rows() const { return model_.transfer_row_count(); }

 private:
  void add_transfer(const std::vector<db::TuningRecord>& related);
  std::vector<search_space::Config> rank_by_annealing(std::size_t n);
  std::vector<search_space::Config> rank_pool(std::size_t n);
  void remember_best(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops);

  const measure::MeasureTask& task_;
  std::mt19937_64 rng_;
  XGBTunerOptions options_;
  ConfigSet visited_;
  cost_model::XGBCostModel model_;
  std::vector<cost_model::ScoredConfig> best_measured_;  // annealing seeds, best first
  double search_seconds_ = 0;
  std::shared_ptr<const CandidatePool> pool_;
};

}  // namespace optune::tuner
