// The xgb strategy (`--tuner xgb`, AutoTVM's XGBTuner): the model-based search of
// model_based_tuner.hpp over an XGBoost cost model of the task's features
// (cost_model/xgb_cost_model.hpp), seeded as the tuner is.
#pragma once

#include <memory>

#include "optune/cost_model/xgb_cost_model.hpp"
#include "optune/tuner/search/model_based_tuner.hpp"

namespace optune::tuner {

std::unique_ptr<ModelBasedTuner> make_xgb_tuner(const measure::MeasureTask& task, std::uint64_t seed,
                                                const TaskHistory& history, ModelBasedTunerOptions options = {},
                                                cost_model::XGBCostModelOptions model = {},
                                                std::shared_ptr<const CandidatePool> pool = nullptr);

}  // namespace optune::tuner
