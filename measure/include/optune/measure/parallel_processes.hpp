// Child processes run a few at a time, each under a deadline: how the builders run their
// compilers (c++ for CPU candidates, optune-nvrtc for CUDA ones) on all cores without letting a
// hung compiler hold up the batch.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "optune/measure/subprocess.hpp"

namespace optune::measure {

struct ParallelProcesses {
  int jobs = 1;                  // at most this many at once
  double timeout_seconds = 120;  // each; past it the process is killed
  // Starts the process of task `index`, or gives nullopt when the task needs none (its result is
  // known already). May throw, which ends the run (running processes are killed).
  std::function<std::optional<Subprocess>(std::size_t index)> start;
  // Task `index` has ended: its exit status, or nullopt when it ran out of time (it is killed);
  // `seconds` since it started. May throw, as start may.
  std::function<void(std::size_t index, std::optional<ExitStatus> status, double seconds)> finish;

  // Runs tasks 0 .. count-1 in order of index, `jobs` at a time, and returns when all have ended.
  void run(std::size_t count) const;
};

}  // namespace optune::measure
