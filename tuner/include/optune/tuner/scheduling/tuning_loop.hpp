// The tuning loop of one task (DESIGN.md's data flow): the default config is measured first, then
// the tuner's batches are built on all cores (with compile-ahead, while the batch before is
// measured), run one candidate at a time and committed to the database, until the trial budget is
// spent, the space is exhausted or early stopping triggers.
// At the end the best few are measured again, so a lucky noisy measurement does not become
// "the best", and the default, the best and the runner-up are compared in interleaved rounds for
// the summary's speed-up (final_comparison.hpp).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "optune/tuner/scheduling/progress.hpp"
#include "optune/tuner/scheduling/task_session.hpp"

namespace optune::tuner {

struct TuningOptions {
  std::size_t trials = 64;
  std::size_t batch_size = 8;
  std::size_t early_stopping = 0;  // stop after this many trials without improvement; 0 = never
  std::size_t remeasure_top = 3;   // best configs measured again at the end
  // A time budget: no batch starts once this many seconds have passed (0: trials alone bound it).
  double seconds = 0;
  TunerOptions tuner;
  std::string run_id;              // "" = generated
  // Measured first, before the tuner's own picks and counted as trials, even where the task has
  // records of them: revalidate's re-tune measures the old toolchain's fastest configs first under
  // today's (a compiler change reorders a ranking less than it reshuffles it).
  std::vector<search_space::Config> first_configs;
  // Compile-ahead: each batch is chosen while the one before it is measured (the model one batch
  // behind) and built meanwhile, so a device measured apart from the host's cores (a GPU, a remote
  // server) does not wait for the compiler. Off where compiles would share the cores a candidate is
  // timed on (a CPU target measured here).
  bool compile_ahead = false;
  // Set (e.g. by a signal handler) to stop after the batch in flight, which is recorded; the
  // final comparison is then skipped (or, under way, ends after its first rounds). Null: never.
  const std::atomic<bool>* stop = nullptr;
};

class TuningLoop {
 public:
  TuningLoop(measure::Builder& builder, measure::Runner& runner, db::Database& database, Progress& progress);
  TuningSummary run(const std::shared_ptr<const measure::MeasureTask>& task, const TuningOptions& options);

 private:
  RecordingMeasurer measurer_;
  Progress& progress_;
};

}  // namespace optune::tuner
