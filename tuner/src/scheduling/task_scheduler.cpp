#include "optune/tuner/scheduling/task_scheduler.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace optune::tuner {

std::string_view scheduler_policy_name(SchedulerPolicy policy) {
  return policy == SchedulerPolicy::kRoundRobin ? "round_robin" : "gradient";
}

SchedulerPolicy parse_scheduler_policy(std::string_view name) {
  for (SchedulerPolicy policy : {SchedulerPolicy::kGradient, SchedulerPolicy::kRoundRobin})
    if (name == scheduler_policy_name(policy)) return policy;
  throw std::invalid_argument("unknown task scheduler '" + std::string(name) + "' (expected gradient or round_robin)");
}

TaskScheduler::TaskScheduler(SchedulerOptions options) : options_(std::move(options)), rng_(options_.seed) {}

double TaskScheduler::expected_gain(const TaskStatus& task) const {
  if (!std::isfinite(task.best_seconds)) return std::numeric_limits<double>::infinity();  // nothing works yet
  const auto& history = task.best_history;
  double backward = 0;
  if (history.size() > 1) {
    std::size_t back = std::min(options_.window, history.size() - 1);
    double earlier = history[history.size() - 1 - back];
    double trials_per_batch = static_cast<double>(task.trials) / history.size();
    backward = (earlier - history.back()) / (back * trials_per_batch);
  }
  double forward = task.trials ? task.best_seconds / task.trials : task.best_seconds;
  return task.weight * (options_.backward_share * backward + (1 - options_.backward_share) * forward);
}

std::size_t TaskScheduler::next(const std::vector<TaskStatus>& tasks) {
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].exhausted) open.push_back(i);
  if (open.empty()) return tasks.size();
  for (std::size_t i : open)
    if (tasks[i].best_history.empty()) return i;  // a first batch for everyone
  if (options_.policy == SchedulerPolicy::kRoundRobin) {
    for (std::size_t step = 0; step < tasks.size(); ++step) {
      std::size_t i = turn_++ % tasks.size();
      if (!tasks[i].exhausted) return i;
    }
  }
  if (std::bernoulli_distribution(options_.epsilon)(rng_))
    return open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng_)];
  std::size_t best = open.front();
  for (std::size_t i : open)
    if (expected_gain(tasks[i]) > expected_gain(tasks[best])) best = i;
  return best;
}

}  // namespace optune::tuner
