// Job: an overnight tuning run described by a file (`optune job run configs/jobs/<name>.toml`).
// A job tunes a suite's workloads on one target under one budget, like `optune tune --suite`, and
// is resumable: its records carry the run id "job:<name>", so running it again counts the trials
// already recorded toward the budget, skips measured configs (the database knows them), warm-starts
// the model from the records and reuses the default measured before. Every batch is committed.
//
// File format (TOML). Relative paths are relative to the current directory, as on the command line.
//   name = "resnet18-cpu"      # required; letters, digits, '-', '_', '.'; names the job's records
//   target = "cpu"             # cpu, cpu:<triple>, opencl[:<platform>:<device>]; default cpu
//   rpc = "rpi4@host:9190"     # optional: measure on a remote device through an RPC tracker
//   token_file = "~/.optune-token"   # the RPC token, when the tracker and servers require one
//   suite = "configs/workloads/resnet18.toml"   # the workloads: a suite file, or instead
//   [[workload]]               # inline workloads, as in suite files (op, shape, name, count)
//   op = "gemm"
//   shape = "512,512,512"
//   budget = 2000              # total trials (a whole number), or wall-clock time per run: "8h"
//   trials_per_task = 200      # optional cap per workload; alone it sets the budget too
//   tuner = "xgb"              # xgb, ga, random, grid; default xgb
//   seed = 1
//   scheduler = "gradient"     # gradient or round_robin
//   batch_size = 8             # configs built and measured per batch (a stop waits for one batch)
//   remeasure = 3              # best configs measured again when the budget is spent
//   database = "optune.db"     # default optune.db; or a PostgreSQL URI ("postgresql://db.lab/optune")
//   log = "jobs/resnet18-cpu.log"   # default: <name>.log next to the database (a server's: next to the job file)
//   [measure]                  # optional; defaults as `optune tune`
//   repeat = 3
//   number = 0                 # runs per repeat; 0: from min_repeat_ms
//   min_repeat_ms = 40         # default: 40, 5 for CUDA (its finalists' comparison 40); given: every repeat's
//   timeout = 30               # seconds a candidate may run
//   compile_timeout = 120      # seconds a compile may take
//   jobs = 0                   # parallel compiles; 0: all cores
//   compiler = "c++"
//   bail_out = 2               # stop timing a candidate over 2x the best so far (a slow record); "off"
//   timing = "adaptive"        # adaptive: fewer repeats the further behind the best (timing_policy.hpp); "full"
// Trial budgets count across runs of the job; a time budget bounds each run.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/backend.hpp"
#include "optune/measure/timing_policy.hpp"
#include "optune/tuner/scheduling/suite.hpp"
#include "optune/tuner/scheduling/suite_tuning.hpp"
#include "optune/tuner/scheduling/task_scheduler.hpp"

namespace optune::tuner {

// A malformed job file: the message names the file, the line and the problem.
class JobError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct JobSpec {
  std::string name;
  std::string source;  // the job file
  std::string target = "cpu";
  std::string rpc;         // "" = measured on this machine
  std::string token_file;  // RPC token; "" = none
  std::string suite_path;  // "" when the workloads are inline
  Suite suite;
  std::string tuner = "xgb";
  std::uint64_t seed = 1;
  SchedulerPolicy scheduler = SchedulerPolicy::kGradient;
  SuiteBudget budget;
  std::size_t batch_size = 8;
  std::size_t remeasure = 3;
  std::string database = "optune.db";
  std::string log;
  measure::TimingPolicy timing;
  std::optional<double> min_repeat_ms;  // [measure]'s; none: the backend's default
  measure::BuildSettings build;  // [measure] compiler, jobs, compile_timeout

  std::string run_id() const { return "job:" + name; }
};

JobSpec load_job(const std::string& path);                                   // throws JobError
JobSpec parse_job(const std::string& text, const std::string& source_name);  // throws JobError

// Trials a job's earlier runs spent on one task: its records under the job's run id, neither the
// default config nor re-measurements.
std::size_t recorded_job_trials(const db::Database& database, const db::TaskKey& task, const std::string& run_id);

}  // namespace optune::tuner
