// The tuning loop of one task (DESIGN.md's data flow): ask the tuner for a batch, build it on all
// cores, run it one candidate at a time, commit every result to the database, let the tuner learn,
// until the trial budget is spent, the space is exhausted or early stopping triggers. The default
// config is measured in the same run, and the best few are measured again before reporting, so a
// lucky noisy measurement does not become "the best".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "optune/db/database.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/runner.hpp"
#include "optune/tuner/progress.hpp"
#include "optune/tuner/tuner.hpp"

namespace optune::tuner {

struct TuningOptions {
  std::size_t trials = 64;
  std::size_t batch_size = 8;
  std::size_t early_stopping = 0;  // stop after this many trials without improvement; 0 = never
  std::size_t remeasure_top = 3;   // best configs measured again at the end
  TunerOptions tuner;
  std::string run_id;              // "" = generated
};

struct TuningSummary {
  std::string run_id;
  std::size_t trials = 0;    // measured in this run, failures included
  std::size_t failures = 0;
  std::optional<db::TuningRecord> best;       // best successful config, after re-measuring
  std::optional<db::TuningRecord> default_config;  // the default config, measured in this run
  double seconds = 0;
  double overhead_seconds = 0;      // spent by the tuner choosing configs (model fits, searches)
  std::string tuner;
  std::size_t transfer_records = 0;  // records of other shapes the model started from
  double speedup() const;  // default median / best median; 0 when either is missing
};

class TuningLoop {
 public:
  TuningLoop(measure::Builder& builder, measure::Runner& runner, db::Database& database,
             Progress& progress);
  TuningSummary run(const std::shared_ptr<const measure::MeasureTask>& task,
                    const TuningOptions& options);

 private:
  std::vector<db::TuningRecord> measure_and_record(
      const std::shared_ptr<const measure::MeasureTask>& task,
      const std::vector<search_space::Config>& configs, const std::string& tuner,
      const std::string& run_id, bool is_default, std::vector<measure::MeasureResult>* results);

  measure::Builder& builder_;
  measure::Runner& runner_;
  db::Database& database_;
  Progress& progress_;
};

db::TaskKey task_key(const measure::MeasureTask& task);
std::string make_run_id();

}  // namespace optune::tuner
