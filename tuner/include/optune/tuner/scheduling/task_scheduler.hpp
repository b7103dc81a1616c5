// TaskScheduler: decides which task of a suite gets the next batch of trials.
//   round_robin: each task in turn.
//   gradient:    Ansor's task scheduler. The network's estimated latency is sum(weight_i x best_i);
//                the next batch goes to the task whose latency is expected to fall fastest per
//                trial, weighted by how often the network runs it. The expected fall blends the
//                task's recent improvement per trial (backward) with an optimistic forward estimate
//                (best_i / trials_i: as if the task kept improving at its average rate).
// Every task first gets one batch, and tasks whose space is used up are skipped.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace optune::tuner {

struct TaskStatus {
  double weight = 1;          // times the network runs the workload
  double best_seconds = 0;    // best latency so far; +infinity when nothing succeeded
  std::size_t trials = 0;     // trials spent on the task
  std::vector<double> best_history;  // best latency after each of the task's batches
  bool exhausted = false;
};

// How a suite's next batch is given to a task: by expected gain (Ansor's gradient) or in turn.
enum class SchedulerPolicy { kGradient, kRoundRobin };
std::string_view scheduler_policy_name(SchedulerPolicy policy);  // "gradient", "round_robin"
// Throws std::invalid_argument naming the policies for any other name.
SchedulerPolicy parse_scheduler_policy(std::string_view name);

struct SchedulerOptions {
  SchedulerPolicy policy = SchedulerPolicy::kGradient;
  double backward_share = 0.5;      // alpha: weight of the backward estimate
  std::size_t window = 3;           // batches over which the backward estimate is taken
  double epsilon = 0.05;            // share of random choices
  std::uint64_t seed = 1;
};

class TaskScheduler {
 public:
  explicit TaskScheduler(SchedulerOptions options);
  // Index of the task for the next batch; tasks.size() when every task is exhausted.
  std::size_t next(const std::vector<TaskStatus>& tasks);
  // Expected fall of the weighted network latency per trial if the task is tuned further.
  double expected_gain(const TaskStatus& task) const;

 private:
  SchedulerOptions options_;
  std::mt19937_64 rng_;
  std::size_t turn_ = 0;
};


}  // namespace optune::tuner
