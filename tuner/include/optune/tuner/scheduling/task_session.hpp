// TaskSession: the tuning state of one task across batches. The single-task loop runs one session
// to its budget; the suite loop interleaves many sessions, one batch at a time, in the order a
// task scheduler chooses. Every measurement is committed to the database per batch.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/runner.hpp"
#include "optune/tuner/scheduling/final_comparison.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {

// Where a run's wall time went: the builder's wall time (its compiles run side by side) and the
// workers' compiles (OpenCL builds its programs there), and the workers' checking and timing. What a run spent besides these and the tuner's choosing
// (TuningSummary::overhead_seconds) is waiting: workers starting, operands being made, transfers,
// the database. `saved`: timed runs that the bail-out and adaptive timing spared (timing_policy.hpp),
// which the wall time does not contain; `slow`: candidates the bail-out cut.
struct TimeSplit {
  double building = 0;
  double checking = 0;
  double timing = 0;
  double saved = 0;
  std::size_t slow = 0;
  std::size_t reused = 0;  // candidates run from a binary built before: a run-time knob's variant, a cached program
  TimeSplit& operator+=(const TimeSplit& other);
  TimeSplit operator-(const TimeSplit& other) const;
};

// Builds a batch on all cores, then measures it, `rounds` times over in turn (measure::Runner::run),
// and records the results. A batch may instead have been built ahead (build_ahead(), on a thread
// of its own while the one before it was measured: compile-ahead); one build runs at a time.
class RecordingMeasurer {
 public:
  RecordingMeasurer(measure::Builder& builder, measure::Runner& runner, db::Database& database)
      : builder_(builder), runner_(runner), database_(database) {}
  // run() then record().
  std::vector<db::TuningRecord> measure(const std::shared_ptr<const measure::MeasureTask>& task,
                                        const std::vector<search_space::Config>& configs,
                                        const std::string& tuner, const std::string& run_id, bool is_default,
                                        std::vector<measure::MeasureResult>* results = nullptr, int rounds = 1);
  // Measures the batch into records without recording them; from the `rounds`-th round on, further
  // rounds while `more` says so, up to `max_rounds`, the rounds of `rounds_kind` (measure::Runner::run). With `best_seconds`,
  // the task's best so far, a candidate is timed only as long as its rank needs
  // (measure::TimingPolicy), and cut as slow only where `may_cut`.
  std::vector<db::TuningRecord> run(const std::shared_ptr<const measure::MeasureTask>& task,
                                    const std::vector<search_space::Config>& configs, const std::string& tuner,
                                    const std::string& run_id, bool is_default,
                                    std::vector<measure::MeasureResult>* results = nullptr, int rounds = 1,
                                    int max_rounds = 0, const measure::Runner::MoreRounds& more = {},
                                    measure::Rounds rounds_kind = measure::Rounds::kCompared,
                                    std::optional<double> best_seconds = std::nullopt, bool may_cut = true,
                                    std::future<std::vector<measure::BuildResult>>* built_ahead = nullptr,
                                    const std::function<void()>& built = {});
  // Starts building `configs` on a thread of its own; run() takes the future (built_ahead) and
  // counts as building only the time it waits for it. run()'s `built` is the moment to start the
  // next batch's: its own build is done, its measuring not begun.
  std::future<std::vector<measure::BuildResult>> build_ahead(const std::shared_ptr<const measure::MeasureTask>& task,
                                                             const std::vector<search_space::Config>& configs);
  // Commits the records in one transaction: an interrupted run keeps every batch it recorded.
  void record(const std::vector<db::TuningRecord>& records);
  db::Database& database() { return database_; }
  // What every run() so far spent, summed.
  const TimeSplit& spent() const { return spent_; }

 private:
  measure::Builder& builder_;
  measure::Runner& runner_;
  db::Database& database_;
  TimeSplit spent_;
  std::mutex building_;  // builder_ builds one batch at a time
};

// The measuring environment failed (measure::EnvironmentFailure); thrown here too when every
// config of a batch fails alike, the default config included.
using EnvironmentFailure = measure::EnvironmentFailure;

// A kernel file's check cannot pass: its reference crashed, hung or failed, or the default and a
// whole batch of configs disagree with it. The file or the arguments and answer it was given are
// at fault (bad input, exit 2), not the configs nor the environment.
class KernelCheckFailure : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TuningSummary {
  std::string run_id;
  std::size_t trials = 0;    // measured in this run, failures included
  std::size_t failures = 0;
  // Trials of this run measured on a busy machine or with a wide spread (TuningRecord::is_noisy).
  std::size_t noisy = 0;
  // Of those, the configs that joined the closing re-measurement because they might be the best on
  // a quiet machine (TaskSession::noisy_contenders), and how many of them came out quiet there.
  std::size_t noisy_remeasured = 0;
  std::size_t noisy_now_quiet = 0;
  // The most any batch's mean load reached (other processes' share of the CPU); nullopt: unknown.
  std::optional<double> peak_load;
  // The same of the device load (other processes' share of the GPU's time).
  std::optional<double> peak_device_load;
  std::optional<db::TuningRecord> best;            // best successful config, after re-measuring
  // The closing comparison of the default, the best, the runner-up and the stored winner, which
  // the best and the speed-up come from; nullopt where it did not run (--remeasure 0, a stop, or
  // fewer than two configs to compare).
  std::optional<FinalComparison> comparison;
  std::size_t already_recorded = 0;  // configs of the task that earlier runs measured (not measured again)
  bool stopped = false;              // a stop request ended the run before its budget
  // The default config, measured in this run; after finish() its latest successful record (the
  // closing re-measurement's), the record the database ranks it by, as it ranks `best`.
  std::optional<db::TuningRecord> default_config;
  double seconds = 0;
  double overhead_seconds = 0;       // spent by the tuner choosing configs (model fits, searches)
  TimeSplit time;                    // where the rest of `seconds` went
  // What `seconds` spent neither building, checking, timing nor choosing: waiting.
  double waiting_seconds() const;
  std::string tuner;
  std::size_t transfer_records = 0;  // records of other shapes the model started from
  std::size_t other_device_records = 0;  // records of this workload on other devices, likewise
  bool exhausted = false;  // the tuner had no config left to propose (fewer trials than asked)
  // The best's speed-up over the default from the final comparison's rounds, where both were among
  // its finalists (FinalComparison::speedup_of).
  std::optional<ComparedSpeedup> compared_speedup() const;
  // The speed-up over the default: compared_speedup()'s (median of the per-round ratios) where
  // there is one, else default median / best median from the records; 0 when either is missing.
  double speedup() const;
  // Where the speed-up comes from the records (no final comparison gave one): why that number is
  // not to be trusted, "" where it is. A record of the two taken on a busy machine or with a wide
  // spread (db::TuningRecord::is_noisy) says nothing of their ratio on a quiet one.
  std::string records_speedup_doubt() const;
  bool best_is_default() const;      // the default config is the best: no tuned config beat it
};

class TaskSession {
 public:
  // Measures the default config, reads the task's history and makes the tuner.
  TaskSession(std::shared_ptr<const measure::MeasureTask> task, const TunerOptions& tuner_options,
              RecordingMeasurer& measurer, std::string run_id);
  // Measures up to max_trials new configs (one batch); returns how many, 0 when the space is used up.
  // Throws EnvironmentFailure, with nothing of the batch recorded, when every config of the batch
  // failed the same way and the default config fails that way too (and so does the fastest config
  // that has worked for the task, where one has).
  // With `ahead_trials` > 0 (compile-ahead), the next step's batch of up to that many is chosen now,
  // before this batch's results are in (the tuner's model one batch behind), and built while this
  // one is measured.
  std::size_t step(std::size_t max_trials, std::size_t ahead_trials = 0);
  // Configs the next steps measure before the tuner's own picks (TuningOptions::first_configs),
  // recorded under tuner "seeded"; the tuner learns from them as from its own.
  void measure_first(std::vector<search_space::Config> configs);
  // Measures the best `top` configs and the default again, in interleaved rounds, and then any
  // config whose one record would still beat them; then (top > 0) the final comparison
  // (final_comparison.hpp), whose winner is marked in the database unless the machine was busy
  // meanwhile. The summary's best is then the
  // database's. `note` gets a line per round of the comparison; `stop` ends it after its first
  // kMinFinalRounds rounds.
  void finish(std::size_t top, const std::function<void(const std::string&)>& note = {},
              const std::atomic<bool>* stop = nullptr);

  const measure::MeasureTask& task() const { return *task_; }
  const TuningSummary& summary() const { return summary_; }
  bool exhausted() const { return exhausted_; }
  // Best median seconds so far (the default included); +infinity when nothing succeeded.
  double best_seconds() const;
  std::size_t trials_since_improvement() const { return summary_.trials - last_improvement_; }
  // The mean load of the last batch's successful measurements; nullopt where unknown.
  std::optional<double> last_batch_load() const { return last_batch_load_; }
  std::optional<double> last_batch_device_load() const { return last_batch_device_load_; }

 private:
  std::shared_ptr<const measure::MeasureTask> task_;
  RecordingMeasurer& measurer_;
  std::unique_ptr<Tuner> tuner_;
  std::vector<search_space::Config> first_;  // measure_first's configs not yet measured, next last
  TuningSummary summary_;
  std::optional<db::TuningRecord> best_;
  std::vector<db::TuningRecord> successes_;
  // The default config's failed record, held back until a batch shows whether the failure is the
  // default's own or the environment's.
  std::optional<db::TuningRecord> unrecorded_default_;
  // The fastest config that has succeeded for the task, in this run or an earlier one: proof that
  // the environment worked, where the default itself fails (a kernel file's default is only its
  // knobs' first values).
  std::optional<db::TuningRecord> known_good_;
  std::size_t last_improvement_ = 0;
  std::optional<double> last_batch_load_;
  std::optional<double> last_batch_device_load_;
  bool exhausted_ = false;
  std::chrono::steady_clock::time_point start_;
  // A batch chosen and being built ahead of its step (compile-ahead).
  struct Batch {
    std::vector<search_space::Config> configs;
    std::string tuner;  // who chose it: the tuner's name, or "seeded"
    std::future<std::vector<measure::BuildResult>> builds;  // invalid: not built ahead
  };
  std::optional<Batch> ahead_;

  // The next configs to measure: measure_first's, else the tuner's.
  Batch choose(std::size_t max_trials);
  // Waits for a batch built ahead and drops it unmeasured (a run that ends before its step).
  void drop_ahead();

  // Throws EnvironmentFailure when `records` (one batch) failed alike and the default config
  // fails the same way (measured in this session, part of the batch, or measured again now), and
  // so does known_good_ measured again, where there is one.
  void check_environment(const std::vector<db::TuningRecord>& records);
  // This run's configs whose latest record is noisy and which might be the best once the noise is
  // taken off (at most kMaxNoisyRemeasures, the fastest first): they join the closing waves' first.
  std::vector<db::TuningRecord> noisy_contenders() const;
  // Before those waves, while this machine is busy, waits within a bound (task_session.cpp).
  void wait_for_quiet(std::size_t contenders, const std::function<void(const std::string&)>& note,
                      const std::atomic<bool>* stop) const;
  // The closing waves of re-measurement (finish()), the first taking in the `noisy` contenders.
  void remeasure_finalists(std::size_t top, const std::vector<db::TuningRecord>& noisy);
  // The closing comparison (finish()): records each finalist's rounds (tuner "final"), the winner marked.
  void compare_finalists(const std::function<void(const std::string&)>& note, const std::atomic<bool>* stop);
  // Records a batch that passed check_environment(), with the default's held-back record.
  void record(const std::vector<db::TuningRecord>& records);
  // measurer_.run(), its time added to summary_.time.
  template <typename... Args>
  std::vector<db::TuningRecord> run_batch(Args&&... args) {
    const TimeSplit before = measurer_.spent();
    auto records = measurer_.run(task_, std::forward<Args>(args)...);
    summary_.time += measurer_.spent() - before;
    return records;
  }
  // Counts a batch's noisy records and keeps its mean load.
  void note_noise(const std::vector<db::TuningRecord>& records);
};

std::string make_run_id();

}  // namespace optune::tuner
