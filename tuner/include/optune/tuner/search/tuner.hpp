// Tuner: proposes the configs to measure next and learns from their results (AutoTVM's Tuner:
// next_batch / update). The tuning loop owns measuring and recording; a tuner only chooses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

using ConfigSet = std::unordered_set<search_space::Config, search_space::ConfigHash>;

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual std::string name() const = 0;
  // Up to n valid configs never measured before (neither in this run nor in `already_measured`
  // given at construction). Fewer, or none, when the space is exhausted.
  virtual std::vector<search_space::Config> next_batch(std::size_t n) = 0;
  // Results of the configs of the last batch, in order.
  virtual void update(const std::vector<search_space::Config>& configs,
                      const std::vector<measure::MeasureResult>& results) = 0;
  // Seconds spent choosing (model fits, searches over the model), for the overhead budget.
  virtual double overhead_seconds() const { return 0; }
};

class CandidatePool;
struct TaskHistory;

struct TunerOptions {
  std::string name = "xgb";  // xgb, ga, random, grid
  std::uint64_t seed = 1;
  bool transfer = true;      // xgb: start from records of the same template for other shapes
  std::string objective = "rank:pairwise";  // xgb: or "reg:squarederror"
  // Restricts every tuner to these configs (replaying a measured landscape); null: the space.
  std::shared_ptr<const CandidatePool> pool;
};

// The tuner for a task, told what the database already holds. Throws std::invalid_argument for
// an unknown tuner name.
std::unique_ptr<Tuner> make_tuner(const TunerOptions& options, const measure::MeasureTask& task,
                                  const TaskHistory& history);
std::vector<std::string> tuner_names();
// Throws std::invalid_argument naming the known tuners when `name` is not one of them.
void check_tuner_name(const std::string& name);

}  // namespace optune::tuner
