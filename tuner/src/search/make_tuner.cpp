#include <stdexcept>

#include "optune/tuner/search/genetic_tuner.hpp"
#include "optune/tuner/search/grid_tuner.hpp"
#include "optune/tuner/search/random_tuner.hpp"
#include "optune/tuner/search/task_history.hpp"
#include "optune/tuner/search/xgb_tuner.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

std::vector<std::string> tuner_names() { return {"xgb", "ga", "random", "grid"}; }

void check_tuner_name(const std::string& name) {
  std::string known;
  for (const auto& n : tuner_names()) {
    if (n == name) return;
    known += (known.empty() ? "" : ", ") + n;
  }
  throw std::invalid_argument("unknown tuner '" + name + "' (expected " + known + ")");
}

std::unique_ptr<Tuner> make_tuner(const TunerOptions& options, const measure::MeasureTask& task,
                                  const TaskHistory& history) {
  check_tuner_name(options.name);
  const auto& pool = options.pool;
  if (options.name == "xgb") {
    XGBTunerOptions xgb;
    xgb.model.objective = cost_model::parse_objective(options.objective);
    return std::make_unique<XGBTuner>(task, options.seed, history, xgb, pool);
  }
  auto measured = measured_set(task.space, history.own);
  if (options.name == "random")
    return std::make_unique<RandomTuner>(task.space, options.seed, std::move(measured), pool);
  if (options.name == "grid") return std::make_unique<GridTuner>(task.space, std::move(measured), pool);
  if (options.name == "ga")
    return std::make_unique<GeneticTuner>(task.space, options.seed, std::move(measured), GeneticOptions{}, pool);
  throw std::logic_error("tuner '" + options.name + "' is listed but not constructed");
}

}  // namespace optune::tuner
