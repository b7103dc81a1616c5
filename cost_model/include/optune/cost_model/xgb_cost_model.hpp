// XGBCostModel: AutoTVM's XGBoost cost model for optune. It keeps every measured row of its task,
// retrains from scratch on each update (a ~1000-row model trains in tens of milliseconds), and
// ranks candidate configs by predicted throughput. Rows measured on other workloads of the same
// template can be added for transfer: their features come from an extractor built for their own
// workload, and their columns are matched to this model's by feature name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optune/cost_model/cost_model.hpp"
#include "optune/cost_model/features.hpp"

namespace optune::cost_model {

class Booster;

enum class Objective {
  kRankPairwise,  // "rank:pairwise": learns the order within each group (AutoTVM's default)
  kRegression,    // "reg:squarederror": learns the normalised throughput itself
};
std::string_view objective_name(Objective objective);
Objective parse_objective(std::string_view name);  // throws std::invalid_argument

struct XGBCostModelOptions {
  Objective objective = Objective::kRankPairwise;
  int rounds = 80;  // boosting rounds per fit
  int max_depth = 6;
  double eta = 0.3;  // learning rate
  double min_child_weight = 1.0;
  int nthread = 1;  // XGBoost threads; the tuner compiles and measures on the others
  std::uint64_t seed = 0;
};

// What a row measured on a busy machine or with a wide spread counts against a quiet one: enough
// to steer the search while every row is noisy (weights are scaled to a mean of one), little
// against quiet rows, whose order it would bend towards configs that the load happened to spare.
// Rows stay in their task's group: ranked apart, noisy rows would never be compared with quiet
// ones, and a hog that arrives midway through a run slows the later, better configs (measured in
// tests/cost_model: apart, held-out Spearman fell from 0.91 to 0.77). XGBoost weighs a ranking
// objective's groups, not its rows, so the weight tells only with reg:squarederror.
inline constexpr double kNoisyRowWeight = 0.25;

// One measured row, already turned into features. `group` names the workload it was measured
// on: labels are normalised and ranked within a group (throughputs of different shapes are not
// comparable).
struct TrainingRow {
  std::vector<float> features;
  double gflops = 0;  // 0 for a failed candidate
  int group = 0;
  // How much the row counts against the task's own rows (1): transfer rows from another device
  // count less. Per group under the ranking objective (a group's mean), per row under regression.
  double weight = 1.0;
};

// Rows for add_transfer_rows from one workload's records: features from that workload's own
// extractor (build its space through the template, read configs with space.from_json).
std::vector<TrainingRow> make_training_rows(const FeatureExtractor& features,
                                            std::span<const search_space::Config> configs,
                                            std::span<const double> gflops, int group);

class XGBCostModel final : public CostModel {
 public:
  explicit XGBCostModel(FeatureExtractor features, XGBCostModelOptions options = {});
  ~XGBCostModel() override;
  XGBCostModel(XGBCostModel&&) noexcept;
  XGBCostModel& operator=(XGBCostModel&&) noexcept;

  // Appends the task's measured configs (failed ones with gflops 0; NaN and negatives count as 0)
  // and retrains on every row, the task's and the transfer rows. Noisy rows weigh kNoisyRowWeight
  // of a quiet row.
  using CostModel::update;
  void update(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops,
              const std::vector<bool>& noisy) override;
  // Higher is predicted faster; only the order is meaningful for the ranking objective. All
  // zeros while untrained (no rows yet, or no row with positive throughput).
  std::vector<double> predict(std::span<const search_space::Config> configs) const override;
  std::vector<double> predict_features(const FeatureMatrix& features) const override;

  // Rows measured on other workloads of this template. Columns are matched by name: names this
  // model lacks are dropped, names the rows lack become missing (NaN). Give each workload its own
  // group number (any int). Used from the next update() or fit() on; fit() alone trains a model
  // from transfer rows before the task has any measurement.
  void add_transfer_rows(std::span<const std::string> feature_names,
                         std::span<const TrainingRow> rows);
  // CostModel's form: make_training_rows, each row weighted, then add_transfer_rows.
  void add_transfer(const FeatureExtractor& features, std::span<const search_space::Config> configs,
                    std::span<const double> gflops, int group, double weight) override;
  void set_transfer_weight(int group, double weight) override;
  void fit() override;

  bool is_trained() const override;
  std::size_t task_row_count() const { return task_rows_.size(); }
  std::size_t transfer_row_count() const override { return transfer_rows_.size(); }
  double fit_seconds() const override { return fit_seconds_; }  // wall seconds of all fits so far
  const FeatureExtractor& features() const override { return features_; }
  const XGBCostModelOptions& options() const { return options_; }

  // The trained booster as XGBoost JSON, with the feature names; load() checks them against this
  // model's extractor (std::invalid_argument when they differ) and throws XGBoostError for an
  // unreadable file. Training rows are not saved: the next update() retrains on this model's rows.
  void save(const std::filesystem::path& path) const;
  void load(const std::filesystem::path& path);

 private:
  FeatureExtractor features_;
  XGBCostModelOptions options_;
  std::vector<TrainingRow> task_rows_;
  std::vector<TrainingRow> transfer_rows_;
  std::unique_ptr<Booster> booster_;
  double fit_seconds_ = 0;
};

}  // namespace optune::cost_model
