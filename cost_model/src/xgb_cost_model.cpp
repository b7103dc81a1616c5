// XGBCostModel: training rows, labels per group, and the XGBoost booster trained on them.
#include "optune/cost_model/xgb_cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "optune/cost_model/xgboost_booster.hpp"

namespace optune::cost_model {
namespace {

constexpr const char* kFeatureNamesAttribute = "optune_feature_names";
constexpr const char* kObjectiveAttribute = "optune_objective";

double sanitised(double gflops) { return std::isfinite(gflops) && gflops > 0 ? gflops : 0.0; }

// The training set as XGBoost wants it: rows of one group contiguous, labels y = g / max(g) of
// the group, so that groups of different shapes share one scale.
struct TrainingMatrix {
  std::vector<float> values;
  std::vector<float> labels;
  std::vector<unsigned> group_sizes;
  std::vector<float> row_weights;
  std::vector<float> group_weights;
  bool has_positive_label = false;

  void add_group(const std::vector<const TrainingRow*>& rows, std::size_t cols) {
    if (rows.empty()) return;
    double best = 0, group_weight = 0;
    for (const TrainingRow* row : rows) best = std::max(best, sanitised(row->gflops));
    for (const TrainingRow* row : rows) {
      values.insert(values.end(), row->features.begin(), row->features.end());
      values.resize(values.size() + (cols - row->features.size()),
                    std::numeric_limits<float>::quiet_NaN());
      labels.push_back(best > 0 ? static_cast<float>(sanitised(row->gflops) / best) : 0.0f);
      row_weights.push_back(static_cast<float>(row->weight));
      group_weight += row->weight / static_cast<double>(rows.size());
    }
    group_weights.push_back(static_cast<float>(group_weight));
    group_sizes.push_back(static_cast<unsigned>(rows.size()));
    has_positive_label = has_positive_label || best > 0;
  }

  // Weights say how rows count against each other; their scale would also meet XGBoost's
  // absolute thresholds (min_child_weight on a node's summed weighted hessian), so that groups
  // of tiny weights alone (another device's rows before the task has its own) could not split
  // at all. Scaled so a row weighs 1 on average, the relative weights stay and the scale goes.
  void scale_weights_to_mean_one() {
    double total = 0;
    for (float weight : row_weights) total += weight;
    if (total <= 0) return;
    const auto scale = static_cast<float>(static_cast<double>(row_weights.size()) / total);
    for (float& weight : row_weights) weight *= scale;
    for (float& weight : group_weights) weight *= scale;
  }
};

}  // namespace

std::string_view objective_name(Objective objective) {
  return objective == Objective::kRankPairwise ? "rank:pairwise" : "reg:squarederror";
}

Objective parse_objective(std::string_view name) {
  if (name == "rank:pairwise" || name == "rank") return Objective::kRankPairwise;
  if (name == "reg:squarederror" || name == "reg") return Objective::kRegression;
  throw std::invalid_argument(fmt::format(
      "unknown cost model objective '{}' (expected rank:pairwise or reg:squarederror)", name));
}

std::vector<TrainingRow> make_training_rows(const FeatureExtractor& features,
                                            std::span<const search_space::Config> configs,
                                            std::span<const double> gflops, int group) {
  if (configs.size() != gflops.size()) {
    throw std::invalid_argument("make_training_rows: configs and gflops differ in length");
  }
  std::vector<TrainingRow> rows;
  rows.reserve(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    rows.push_back({features.extract(configs[i]), sanitised(gflops[i]), group});
  }
  return rows;
}

XGBCostModel::XGBCostModel(FeatureExtractor features, XGBCostModelOptions options)
    : features_(std::move(features)), options_(options) {
  if (options_.rounds < 1) throw std::invalid_argument("cost model: rounds must be at least 1");
  if (options_.nthread < 1) throw std::invalid_argument("cost model: nthread must be at least 1");
}

XGBCostModel::~XGBCostModel() = default;
XGBCostModel::XGBCostModel(XGBCostModel&&) noexcept = default;
XGBCostModel& XGBCostModel::operator=(XGBCostModel&&) noexcept = default;

void XGBCostModel::update(const std::vector<search_space::Config>& configs, const std::vector<double>& gflops,
                          const std::vector<bool>& noisy) {
  if (configs.size() != gflops.size()) {
    throw std::invalid_argument("cost model update: configs and gflops differ in length");
  }
  if (!noisy.empty() && noisy.size() != configs.size()) {
    throw std::invalid_argument("cost model update: configs and noisy flags differ in length");
  }
  for (std::size_t i = 0; i < configs.size(); ++i) {
    // A failure is no timing: it stays with the quiet rows whatever the machine did.
    const bool is_noisy = !noisy.empty() && noisy[i] && sanitised(gflops[i]) > 0;
    task_rows_.push_back({features_.extract(configs[i]), sanitised(gflops[i]), 0, is_noisy ? kNoisyRowWeight : 1.0});
  }
  fit();
}

void XGBCostModel::add_transfer_rows(std::span<const std::string> feature_names,
                                     std::span<const TrainingRow> rows) {
  std::unordered_map<std::string, std::size_t> column_of;
  for (std::size_t c = 0; c < features_.size(); ++c) column_of.emplace(features_.names()[c], c);
  // source column -> this model's column (or none)
  std::vector<std::ptrdiff_t> target(feature_names.size(), -1);
  for (std::size_t c = 0; c < feature_names.size(); ++c) {
    if (auto found = column_of.find(feature_names[c]); found != column_of.end()) {
      target[c] = static_cast<std::ptrdiff_t>(found->second);
    }
  }
  for (const TrainingRow& row : rows) {
    if (row.features.size() != feature_names.size()) {
      throw std::invalid_argument(fmt::format("transfer row has {} features for {} names",
                                              row.features.size(), feature_names.size()));
    }
    TrainingRow aligned{
        std::vector<float>(features_.size(), std::numeric_limits<float>::quiet_NaN()),
        sanitised(row.gflops), row.group, row.weight};
    for (std::size_t c = 0; c < target.size(); ++c) {
      if (target[c] >= 0) aligned.features[static_cast<std::size_t>(target[c])] = row.features[c];
    }
    transfer_rows_.push_back(std::move(aligned));
  }
}

void XGBCostModel::add_transfer(const FeatureExtractor& features, std::span<const search_space::Config> configs,
                                std::span<const double> gflops, int group, double weight) {
  auto rows = make_training_rows(features, configs, gflops, group);
  for (auto& row : rows) row.weight = weight;
  add_transfer_rows(features.names(), rows);
}

void XGBCostModel::set_transfer_weight(int group, double weight) {
  for (TrainingRow& row : transfer_rows_)
    if (row.group == group) row.weight = weight;
}

void XGBCostModel::fit() {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t cols = features_.size();
  TrainingMatrix matrix;
  std::vector<const TrainingRow*> task;
  for (const TrainingRow& row : task_rows_) task.push_back(&row);
  matrix.add_group(task, cols);
  std::map<int, std::vector<const TrainingRow*>> transfer_groups;
  for (const TrainingRow& row : transfer_rows_)
    if (row.weight > 0) transfer_groups[row.group].push_back(&row);  // weight 0: a source set aside
  for (const auto& [group, rows] : transfer_groups) matrix.add_group(rows, cols);

  // Nothing to learn from: no rows, or every candidate failed.
  if (matrix.labels.size() < 2 || !matrix.has_positive_label || cols == 0) {
    booster_.reset();
    return;
  }
  DMatrix train(matrix.values, matrix.labels.size(), cols);
  train.set_labels(matrix.labels);
  if (options_.objective == Objective::kRankPairwise) train.set_group_sizes(matrix.group_sizes);
  const bool weighted = std::any_of(matrix.row_weights.begin(), matrix.row_weights.end(),
                                    [](float weight) { return weight != 1.0f; });
  if (weighted) {
    matrix.scale_weights_to_mean_one();
    train.set_weights(options_.objective == Objective::kRankPairwise ? matrix.group_weights : matrix.row_weights);
  }

  auto booster = std::make_unique<Booster>(train, options_.nthread);
  booster->set_param("objective", std::string(objective_name(options_.objective)));
  booster->set_param("max_depth", std::to_string(options_.max_depth));
  booster->set_param("eta", fmt::format("{}", options_.eta));
  booster->set_param("min_child_weight", fmt::format("{}", options_.min_child_weight));
  booster->set_param("gamma", "0.0001");  // AutoTVM's value: a split must gain something
  booster->set_param("seed", std::to_string(options_.seed));
  booster->set_param("tree_method", "hist");
  for (int round = 0; round < options_.rounds; ++round) booster->update_one_iter(round, train);
  booster->set_attribute(kFeatureNamesAttribute, nlohmann::json(features_.names()).dump());
  booster->set_attribute(kObjectiveAttribute, std::string(objective_name(options_.objective)));
  booster_ = std::move(booster);
  fit_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool XGBCostModel::is_trained() const { return booster_ != nullptr; }

std::vector<double> XGBCostModel::predict(std::span<const search_space::Config> configs) const {
  if (!is_trained()) return std::vector<double>(configs.size(), 0.0);
  return predict_features(features_.extract_batch(configs));
}

std::vector<double> XGBCostModel::predict_features(const FeatureMatrix& features) const {
  if (features.cols != features_.size()) {
    throw std::invalid_argument(fmt::format("predict: {} feature columns, the model has {}",
                                            features.cols, features_.size()));
  }
  if (!is_trained()) return std::vector<double>(features.rows, 0.0);
  const std::vector<float> scores =
      booster_->predict_dense(features.values, features.rows, features.cols);
  return std::vector<double>(scores.begin(), scores.end());
}

void XGBCostModel::save(const std::filesystem::path& path) const {
  if (!is_trained()) throw std::logic_error("cost model: nothing to save before training");
  booster_->save(path);
}

void XGBCostModel::load(const std::filesystem::path& path) {
  auto booster = std::make_unique<Booster>(Booster::load(path, options_.nthread));
  const std::string names = booster->attribute(kFeatureNamesAttribute);
  if (names.empty() || nlohmann::json::parse(names) != nlohmann::json(features_.names())) {
    throw std::invalid_argument("cost model " + path.string() +
                                " was trained on other features than this task's");
  }
  booster_ = std::move(booster);
}

}  // namespace optune::cost_model
