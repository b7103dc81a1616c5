// ModelBasedTuner: search led by a cost model (AutoTVM's XGBTuner, over any cost_model::CostModel;
// the xgb strategy gives it XGBoost's, xgb_tuner.hpp). The first configs are random (the model's
// first training set); after every batch the model is retrained on all measured configs of
// the task (failures as the slowest). The next batch is, for a share of its picks, the best-scored
// unmeasured neighbours of the best measured config (one knob changed), and for the rest the most
// promising unmeasured configs that simulated annealing finds on the model (or that scoring a
// finite pool finds), picked for diversity, plus an epsilon share of random ones. With records of
// the same template for other shapes, or of the same workload on other devices, the model is
// trained before the first batch, so that batch is guided too. Another device counts as a share of
// the task's own records, scaled by how well it ranks them (source_agreement.hpp), so a device that
// disagrees with this one fades out instead of holding the search where it was fast.
#pragma once

#include <random>

#include <memory>
#include <span>
#include <string>

#include "optune/cost_model/cost_model.hpp"
#include "optune/cost_model/simulated_annealing.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/search/measured_neighbours.hpp"
#include "optune/tuner/search/search_domain.hpp"
#include "optune/tuner/search/source_agreement.hpp"
#include "optune/tuner/search/task_history.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

struct ModelBasedTunerOptions {
  cost_model::AnnealingOptions annealing;
  // Share of random configs in each batch, rounded to a whole number of them: none in a batch of
  // fewer than 10 (tune's default of 8, replay's of 1). Random picks added to batches of 8 cost the
  // field's convolution landscapes 20-30 evaluations to 95% in replay (time-to-result.md).
  double epsilon = 0.05;
  double diversity = 0.5;            // weight of knob coverage when picking a batch
  std::size_t candidates_per_config = 4;  // annealing returns this many per config wanted
  std::size_t seeds = 8;             // best measured configs that start annealing chains
  // How much another device's records count, as a share of this device's own records (at least
  // initial_random of them while there are fewer), times the device's agreement with the own
  // records (source_agreement.hpp: Kendall's tau, negatives as 0; 1 until enough configs are shared).
  double other_device_weight = 0.5;
  std::size_t other_device_rows = 1000;  // records kept per other device (each fit reads them all)
  // Own measurements drawn at random before the model leads (without transfer rows): the model's
  // first training set. Chosen with local_share on held-out landscapes (README, Tuners).
  std::size_t initial_random = 20;
  double local_share = 0.3;  // share of picks among the best measured config's one-knob neighbours
  // Where the template takes knobs at run time (KernelTemplate::run_time_knobs): share of picks
  // among the best measured configs' run-time variants, which run on objects already built and so
  // cost a measurement without a compile (a CPU GEMM candidate: about 0.3 s against 2 s).
  double cheap_share = 0.5;
  // The global picks' scores less saturation_weight x the spread of the model's predictions over
  // the measured configs x the share of a config's one-knob neighbours measured already
  // (MeasuredNeighbours): a plateau the search has walked ranks below its predictions. Chosen in
  // replay (time-to-result.md): 1 cut a PoCL convolution's evaluations to 95% at the 90th
  // percentile of seeds from 107 to 49 and held or gained on the six published landscapes.
  double saturation_weight = 1.0;
};

// What a cost model of this task reads: knob values, the workload's extents and the template's
// derived features; for a task without a template (a landscape file, a declared kernel), its
// knobs' values alone.
cost_model::FeatureExtractor task_features(const measure::MeasureTask& task);

class ModelBasedTuner final : public Tuner {
 public:
  // `name`: the strategy's, as records carry it. `model`: untrained, reading task_features(task);
  // the tuner trains it on history.own (never proposed again) and the transfer records.
  ModelBasedTuner(std::string name, const measure::MeasureTask& task, std::uint64_t seed, const TaskHistory& history,
                  std::unique_ptr<cost_model::CostModel> model, ModelBasedTunerOptions options = {},
                  std::shared_ptr<const CandidatePool> pool = nullptr);
  std::string name() const override { return name_; }
  std::vector<search_space::Config> next_batch(std::size_t n) override;
  void update(const std::vector<search_space::Config>& configs,
              const std::vector<measure::MeasureResult>& results) override;
  double overhead_seconds() const override { return model_->fit_seconds() + search_seconds_; }
  std::size_t transfer_rows() const { return model_->transfer_row_count(); }
  std::size_t other_device_rows() const { return other_device_rows_; }

 private:
  void add_transfer(const std::vector<db::TuningRecord>& related);
  void add_other_devices(const std::vector<db::TuningRecord>& records);
  void weigh_sources();
  bool transfer_leads() const;
  ParsedRecords keep_rows(ParsedRecords parsed, std::size_t limit);
  std::vector<search_space::Config> rank_by_annealing(std::size_t n, std::size_t local);
  std::vector<search_space::Config> rank_neighbours(std::size_t n);
  std::vector<search_space::Config> rank_pool(std::size_t n, std::size_t local);
  std::size_t local_picks(std::size_t n);
  std::vector<search_space::Config> rank_cheap(std::size_t n);
  // The n of `configs` the model scores best, best first.
  std::vector<search_space::Config> best_predicted(const std::vector<search_space::Config>& configs,
                                                   std::size_t n) const;
  void remember_best(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops);
  // What a config's measured-neighbour share costs its score in this decision: saturation_weight x
  // the spread of the model's predictions over the measured configs (ModelBasedTunerOptions).
  double saturation_cost() const;

  std::string name_;
  const measure::MeasureTask& task_;
  std::mt19937_64 rng_;
  ModelBasedTunerOptions options_;
  SearchDomain domain_;  // the task's space or the pool, less history.own
  std::unique_ptr<cost_model::CostModel> model_;
  std::vector<cost_model::ScoredConfig> best_measured_;  // annealing seeds, best first
  double search_seconds_ = 0;
  std::size_t other_device_rows_ = 0;
  std::vector<std::size_t> run_time_knobs_;  // indices in the space of the template's run-time knobs
  // Another device's records of this workload: all of them, to measure its agreement with this
  // device's own, its estimate of each own config (in own_'s order, extended as records come),
  // and how many of its records the model holds (keep_rows).
  struct Source {
    int group = 0;
    SourceDevice device;
    std::vector<double> at_own;
    std::size_t rows = 0;
    double weight = 0;  // per row, as the model has it now
  };
  std::vector<Source> sources_;
  ParsedRecords own_;                      // own measurements, earlier runs' included
  MeasuredNeighbours measured_neighbours_;  // of own_
  cost_model::FeatureMatrix pool_features_;  // of the pool's configs, extracted once
};

}  // namespace optune::tuner
