// Tuning as a front end asks for it: one workload (op and shape) or a suite file, on a target,
// into a database. This is what `optune tune` and the Python module's optune.tune() both call;
// they only parse their arguments beforehand and print or return the summary afterwards.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/tuner/scheduling/suite_tuning.hpp"
#include "optune/tuner/scheduling/tuning_loop.hpp"

namespace optune::app {

inline constexpr const char* kDefaultDatabase = "optune.db";
// The most trials a run takes (--trials, --early-stopping, --trials-per-task, a budget, a job).
inline constexpr std::int64_t kMaxTrials = 100'000'000;

struct TuneRequest {
  std::string op = "gemm";  // one workload: op and shape ...
  std::string shape;
  // One workload: the template to tune ("": the workload's default, the applicable template of
  // highest priority, e.g. conv2d_gemm.cpu on a 1x1 layer; "conv2d.cpu" tunes the direct kernel there).
  std::string template_name;
  std::string suite;        // ... or every workload of a suite file ...
  std::string kernel_file;  // ... or a user's kernel file at `shape` (its extents; "" the file's own)
  std::string layout;       // suite: replaces the file's kept layout ("" keeps it)
  std::string dtype;        // suite: replaces the file's dtype for workloads that name none ("" keeps it)
  std::string database = kDefaultDatabase;
  bool wait_lock = false;   // another run measuring on the device: wait for it (else fail at once)
  // Set (a front end's signal handler) to stop after the batch in flight; null: never.
  const std::atomic<bool>* stop = nullptr;
  tuner::TuningOptions tuning;
  MeasureSettings measuring;
  // Suite budgets: trials per task (0: tuning.trials), total trials ("2000") or time ("8h", "30m").
  // One workload's: trials (replacing tuning.trials) or time, which alone bounds the run unless
  // trials_given (the command line's --trials) says the trials bound it too.
  std::size_t trials_per_task = 0;
  std::string budget;
  bool trials_given = true;
  tuner::SchedulerOptions scheduler;
};

struct WorkloadOutcome {
  std::shared_ptr<const measure::MeasureTask> task;
  tuner::TuningSummary summary;
};

struct SuiteOutcome {
  tuner::Suite suite;
  tuner::SuiteSummary summary;
};

// Checks what can be checked before anything is measured (trials, tuner name, shape xor suite,
// budget syntax); throws BadInput.
void check_tune_request(const TuneRequest& request);

// Both hold the device's lock and a shared hold on the database while they measure (run_locks.hpp);
// `log` takes the waiting line and the RPC runner's lines.
WorkloadOutcome tune_workload(const TuneRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                              std::function<void(const std::string&)> log = nullptr);
SuiteOutcome tune_suite(const TuneRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                        std::function<void(const std::string&)> log = nullptr);

// A `--shape` with ranges (M=1..512,N=768,K=768; tuner/scheduling/shape_range.hpp): its
// representative shapes, tuned one after the other, each with its share of tuning.trials (an even
// split), so that the range costs the budget of one shape. Later shapes start from the records of
// the earlier ones (the xgb tuner's transfer), and every shape in the range is then covered by
// the nearest tuned shape's config (`optune pick`, apply-best).
struct RangeOutcome {
  std::string range;                    // the --shape as given
  std::vector<WorkloadOutcome> shapes;  // one per representative shape, in order
};
// Throws BadInput for a malformed or empty range, or a representative shape that the operator
// rejects, before anything is measured.
RangeOutcome tune_range(const TuneRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                        std::function<void(const std::string&)> log = nullptr);
// The representative shapes of a request's range (BadInput as tune_range).
std::vector<std::string> range_shapes(const TuneRequest& request);

// Outcomes as JSON, the same fields for every front end: workload, template, target, device,
// trials, failures, noisy (trials measured on a busy machine or with a wide spread),
// already_recorded (configs earlier runs measured), stopped, seconds, default and best (records as
// query gives them, or null), speedup, speedup_interval ([low, high]), speedup_source ("final
// comparison" or "records"), unreliable (why the final comparison's speed-up is not given: null
// when it is), comparison (rounds, load, tied, kept_stored_winner, finalists with role, config,
// median_seconds, spread, load, winner; null where it did not run), run_id; a suite's per task,
// with the network's estimated latency. speedup is null when the best is the default itself,
// either is missing, or the final comparison found it unreliable.
nlohmann::json outcome_json(const WorkloadOutcome& outcome);
nlohmann::json outcome_json(const SuiteOutcome& outcome);

// The suite budget of a request (trials per task, total trials or a duration).
tuner::SuiteBudget suite_budget(const TuneRequest& request);

}  // namespace optune::app
