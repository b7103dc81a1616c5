// The list of search strategies, in the order tuner_names() gives them (`optune replay --tuner
// all` runs them so). Each strategy's own file defines its factory; adding one is that file, its
// factory's declaration below and one entry in kStrategies.
#include "optune/tuner/search/strategies.hpp"

#include <stdexcept>
#include <string_view>

#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {

namespace strategies {
std::unique_ptr<Tuner> xgb(const TunerRequest& request);      // xgb_tuner.cpp
std::unique_ptr<Tuner> genetic(const TunerRequest& request);  // genetic_tuner.cpp
std::unique_ptr<Tuner> random(const TunerRequest& request);   // random_tuner.cpp
std::unique_ptr<Tuner> grid(const TunerRequest& request);     // grid_tuner.cpp
}  // namespace strategies

namespace {

struct Strategy {
  std::string_view name;  // as --tuner takes it and records carry it
  TunerFactory make;
  bool reads_transfer_records = false;
};

constexpr Strategy kStrategies[] = {
    {"xgb", strategies::xgb, true},
    {"ga", strategies::genetic},
    {"random", strategies::random},
    {"grid", strategies::grid},
};

const Strategy& find_strategy(const std::string& name) {
  for (const auto& strategy : kStrategies)
    if (strategy.name == name) return strategy;
  check_tuner_name(name);  // throws, naming the known ones
  throw std::logic_error("unreachable");
}

}  // namespace

SearchDomain TunerRequest::domain() const {
  return SearchDomain(task.space, measured_set(task.space, history.own), options.pool);
}

std::vector<std::string> tuner_names() {
  std::vector<std::string> names;
  for (const auto& strategy : kStrategies) names.emplace_back(strategy.name);
  return names;
}

void check_tuner_name(const std::string& name) {
  std::string known;
  for (const auto& n : tuner_names()) {
    if (n == name) return;
    known += (known.empty() ? "" : ", ") + n;
  }
  throw std::invalid_argument("unknown tuner '" + name + "' (expected " + known + ")");
}

bool reads_transfer_records(const std::string& name) { return find_strategy(name).reads_transfer_records; }

std::unique_ptr<Tuner> make_tuner(const TunerOptions& options, const measure::MeasureTask& task,
                                  const TaskHistory& history) {
  return find_strategy(options.name).make({options, task, history});
}

}  // namespace optune::tuner
