// The search strategies that `--tuner` names, and make_tuner, which makes one for a task. A
// strategy is a file under tuner/src/search/ that defines its factory (a TunerFactory, in
// namespace strategies) and one line in the list of tuner/src/search/strategies.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "optune/cost_model/xgb_cost_model.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/search/search_domain.hpp"
#include "optune/tuner/search/tuner.hpp"

namespace optune::tuner {

class CandidatePool;
struct TaskHistory;

struct TunerOptions {
  std::string name = "xgb";  // xgb, ga, random, grid
  std::uint64_t seed = 1;
  bool transfer = true;      // xgb: start from records of the same template for other shapes
  // Workload keys transfer never reads: dispatch's held-out shapes, which the rule is checked on
  // and so must not have learned from (a shape tuned before would hand the rule its own best).
  std::set<std::string> unseen_workloads;
  cost_model::Objective objective = cost_model::Objective::kRankPairwise;  // xgb's
  double cheap_share = 0.5;  // xgb: ModelBasedTunerOptions::cheap_share
  // Restricts every tuner to these configs (replaying a measured landscape); null: the space.
  std::shared_ptr<const CandidatePool> pool;
};

// What make_tuner hands a strategy's factory.
struct TunerRequest {
  const TunerOptions& options;
  const measure::MeasureTask& task;
  const TaskHistory& history;  // what the database holds; history.own is never proposed again
  // The task's space, or options.pool, less the configs of history.own.
  SearchDomain domain() const;
};
using TunerFactory = std::unique_ptr<Tuner> (*)(const TunerRequest& request);

// The tuner for a task, told what the database already holds. Throws std::invalid_argument for
// an unknown tuner name.
std::unique_ptr<Tuner> make_tuner(const TunerOptions& options, const measure::MeasureTask& task,
                                  const TaskHistory& history);
std::vector<std::string> tuner_names();
// Throws std::invalid_argument naming the known tuners when `name` is not one of them.
void check_tuner_name(const std::string& name);
// Whether the strategy learns from records of other shapes and devices (TaskHistory::related and
// other_devices): only then are they read, and only when TunerOptions::transfer allows it.
bool reads_transfer_records(const std::string& name);

}  // namespace optune::tuner
