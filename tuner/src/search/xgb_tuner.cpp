#include "optune/tuner/search/xgb_tuner.hpp"

#include "optune/tuner/search/strategies.hpp"

namespace optune::tuner {

std::unique_ptr<ModelBasedTuner> make_xgb_tuner(const measure::MeasureTask& task, std::uint64_t seed,
                                                const TaskHistory& history, ModelBasedTunerOptions options,
                                                cost_model::XGBCostModelOptions model,
                                                std::shared_ptr<const CandidatePool> pool) {
  model.seed = seed;
  auto xgboost = std::make_unique<cost_model::XGBCostModel>(task_features(task), model);
  return std::make_unique<ModelBasedTuner>("xgb", task, seed, history, std::move(xgboost), options, std::move(pool));
}

namespace strategies {

std::unique_ptr<Tuner> xgb(const TunerRequest& request) {
  cost_model::XGBCostModelOptions model;
  model.objective = request.options.objective;
  ModelBasedTunerOptions options;
  options.cheap_share = request.options.cheap_share;
  return make_xgb_tuner(request.task, request.options.seed, request.history, options, model, request.options.pool);
}

}  // namespace strategies
}  // namespace optune::tuner
