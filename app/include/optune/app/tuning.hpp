// Tuning as a front end asks for it: one workload (op and shape) or a suite file, on a target,
// into a database. This is what `optune tune` and the Python module's optune.tune() both call;
// they only parse their arguments beforehand and print or return the summary afterwards.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/remote.hpp"
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
  // false: tuning.batch_size is the default, and a run spread over several devices takes that many
  // configs a batch per device.
  bool batch_size_given = true;
  tuner::SchedulerOptions scheduler;
  // Build each batch while the one before it is measured (tuner::TuningOptions::compile_ahead):
  // "auto" for a device apart from every host's cores (a GPU of a backend that measures devices at
  // once, here or over --rpc), "on", "off". One workload or a range; a suite builds as it goes.
  std::string compile_ahead = "auto";
};

// Configs a batch: the request's, or where it gave none (batch_size_given), its default size for
// each of the `devices` a run spreads over (0 or 1: one).
std::size_t batch_size_of(const TuneRequest& request, std::size_t devices);

// A request parsed once into what the run works on: the target, the remote (if any) and the device
// found once, every task made before anything is measured (so a shape or suite entry that no
// template runs stops nothing half done), and each task's budget. The command line prints it
// before running it; Python runs it.
enum class TuneKind {
  kWorkload,  // one shape
  kRange,     // a --shape with ranges (M=1..512,N=768,K=768): its representative shapes
  kSuite,     // every workload of a suite file
};

// One shape's task and its tuning options, its share of the budget applied.
struct ShapeTuning {
  std::string shape;  // as the request or the range names it
  std::shared_ptr<const measure::MeasureTask> task;
  tuner::TuningOptions tuning;
};

struct TunePlan {
  TuneKind kind = TuneKind::kWorkload;
  kernels::Target target;
  // Several GPUs of the target's model measured on at once (--target cuda:all or cuda:0,1); empty:
  // the target's device alone. The target is then the first device's: "cuda" for cuda:all (the
  // records of a tune on one GPU), the first listed for a list.
  std::vector<kernels::Target> spread;
  std::optional<Remote> remote;  // measuring on a remote server of an RPC key
  kernels::DeviceInfo device;    // the remote's, else this machine's: detected once
  // kWorkload: one shape; kRange: its representative shapes in order, each with an even share of
  // the trials or time (tuned one after the other, later shapes starting from the earlier ones'
  // records; every shape in the range is then covered by the nearest tuned shape's config).
  std::vector<ShapeTuning> shapes;
  std::string range;                 // kRange: the --shape as given
  std::size_t range_points = 0;      // kRange: shapes the range would have with trials to spare
  std::size_t range_trials = 0;      // kRange: the trials split among its shapes
  std::optional<tuner::Suite> suite;           // kSuite
  std::vector<tuner::SuiteTask> suite_tasks;   // kSuite: one per entry
  tuner::SuiteBudget suite_budget;             // kSuite
  tuner::TuningOptions tuning;                 // kSuite: each task's options
  tuner::SchedulerOptions scheduler;           // kSuite
  MeasureSettings measuring;
  std::string database;
  bool wait_lock = false;
};

// Checks and parses the whole request (trials, tuner name, shape xor suite, budget syntax, the
// target, the remote, every task); throws BadInput before anything is measured.
TunePlan plan_tune(const TuneRequest& request);

struct WorkloadOutcome {
  std::shared_ptr<const measure::MeasureTask> task;
  tuner::TuningSummary summary;
};

struct SuiteOutcome {
  tuner::Suite suite;
  tuner::SuiteSummary summary;
};

struct TuneOutcome {
  TuneKind kind = TuneKind::kWorkload;
  std::vector<WorkloadOutcome> shapes;  // kWorkload: one; kRange: those tuned (all unless stopped)
  std::optional<SuiteOutcome> suite;    // kSuite
  // A plan with several devices: each device's target and the candidates it measured.
  struct DeviceShare {
    std::string target;
    std::size_t candidates = 0;
  };
  std::vector<DeviceShare> devices;
  bool stopped() const;                 // by request.stop, after the batch in flight
  std::size_t trials() const;           // measured in this run
};

// Runs a plan: holds the device's lock and a shared hold on the database while it measures
// (run_locks.hpp); `log` takes the waiting line and the RPC runner's lines.
TuneOutcome run(const TunePlan& plan, const InstallPaths& paths, tuner::Progress& progress,
                std::function<void(const std::string&)> log = nullptr);

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
// A suite's object, a range's array of its shapes' objects, one shape's object.
nlohmann::json outcome_json(const TuneOutcome& outcome);

// The suite budget of a request (trials per task, total trials or a duration).
tuner::SuiteBudget suite_budget(const TuneRequest& request);

}  // namespace optune::app
