#include "optune/tuner/scheduling/task_scheduler.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace optune::tuner {
namespace {

// A task whose best latency falls from `start` towards `floor` as trials are spent on it.
struct SyntheticTask {
  double weight, start, floor, scale;  // scale: trials for two thirds of the possible gain
  double best_after(std::size_t trials) const { return floor + (start - floor) * std::exp(-trials / scale); }
};

std::vector<std::size_t> simulate(const std::vector<SyntheticTask>& tasks, const std::string& policy, int batches) {
  TaskScheduler scheduler({.policy = parse_scheduler_policy(policy), .backward_share = 0.5, .window = 3, .epsilon = 0.0, .seed = 1});
  std::vector<TaskStatus> status(tasks.size());
  std::vector<std::size_t> picks(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    status[i].weight = tasks[i].weight;
    status[i].best_seconds = tasks[i].start;
  }
  for (int b = 0; b < batches; ++b) {
    std::size_t i = scheduler.next(status);
    ++picks[i];
    status[i].trials += 8;
    status[i].best_seconds = tasks[i].best_after(status[i].trials);
    status[i].best_history.push_back(status[i].best_seconds);
  }
  return picks;
}

TEST(TaskScheduler, GradientGivesMoreTrialsToTheTaskWithTheLargerPossibleGain) {
  // Task 0: run 6 times per network, 10 ms -> 2 ms. Task 1: once, 1 ms -> 0.9 ms.
  std::vector<SyntheticTask> tasks = {{6, 10e-3, 2e-3, 60}, {1, 1e-3, 0.9e-3, 60}};
  auto picks = simulate(tasks, "gradient", 40);
  EXPECT_GT(picks[0], 3 * picks[1]) << picks[0] << " vs " << picks[1];
  EXPECT_GE(picks[1], 1u);  // every task gets its first batch
}

TEST(TaskScheduler, RoundRobinSharesEvenly) {
  std::vector<SyntheticTask> tasks = {{6, 10e-3, 2e-3, 60}, {1, 1e-3, 0.9e-3, 60}, {1, 5e-3, 1e-3, 60}};
  auto picks = simulate(tasks, "round_robin", 30);
  for (auto p : picks) EXPECT_EQ(p, 10u);
}

TEST(TaskScheduler, SkipsExhaustedTasksAndReportsWhenAllAre) {
  TaskScheduler scheduler({});
  std::vector<TaskStatus> status(2);
  status[0].exhausted = true;
  status[1].best_history = {1.0};
  status[1].best_seconds = 1.0;
  status[1].trials = 8;
  EXPECT_EQ(scheduler.next(status), 1u);
  status[1].exhausted = true;
  EXPECT_EQ(scheduler.next(status), 2u);
}

TEST(TaskScheduler, PoliciesAreReadByNameAndAnUnknownOneIsRefused) {
  EXPECT_EQ(parse_scheduler_policy("round_robin"), SchedulerPolicy::kRoundRobin);
  EXPECT_EQ(parse_scheduler_policy("gradient"), SchedulerPolicy::kGradient);
  EXPECT_EQ(scheduler_policy_name(parse_scheduler_policy("round_robin")), "round_robin");
  EXPECT_THROW(parse_scheduler_policy("fifo"), std::invalid_argument);
}

}  // namespace
}  // namespace optune::tuner
