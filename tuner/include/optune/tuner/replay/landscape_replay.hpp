// LandscapeReplay: runs a tuner against a landscape of configs measured earlier (a database of
// records) instead of the device. Every tuner searches the same pool of measured configs and is
// answered with the recorded GFLOP/s, so comparing tuners over many seeds costs seconds and every
// tuner faces identical numbers. Results of a replay are replayed numbers, never measurements.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {

struct Landscape {
  std::shared_ptr<measure::MeasureTask> task;
  std::vector<search_space::Config> configs;
  std::vector<double> gflops;  // 0 for failed candidates
  std::vector<db::TuningRecord> records;
  double best = 0;
  double live_seconds = 0;  // wall time the live measurement of the landscape took
};

// One landscape per workload of the database, from the records of `tuner_name` (the sampling
// run; defaults, re-measurements and other tuners' records are left out).
std::vector<Landscape> load_landscapes(const db::Database& database, const std::string& tuner_name = "random");

struct ReplayResult {
  std::vector<double> evaluated;     // the recorded GFLOP/s of each trial, in order (0: failed)
  std::vector<double> best_so_far;   // best GFLOP/s after each trial
  std::size_t trials_to_target = 0;  // first trial at or above target; 0 when never reached
  double overhead_seconds = 0;       // the tuner's own time (model fits, searches)
};

// `history`: what the tuner is told the database holds (e.g. other devices' records for transfer).
ReplayResult replay(const Landscape& landscape, const std::string& tuner_name, std::uint64_t seed,
                    std::size_t budget, std::size_t batch_size, double target_gflops,
                    const TaskHistory& history = {});

}  // namespace optune::tuner
