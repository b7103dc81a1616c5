// An overnight tuning job (`optune job run FILE`; file format in optune/tuner/jobs/job.hpp): takes
// the device's lock, tunes the job's workloads as a suite under its budget, counting what earlier
// runs of the job recorded, logs every batch to the job's log file, and ends with a summary read
// back from the database (every run of the job). Running the job again continues where it stopped.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optune/app/install_paths.hpp"
#include "optune/app/remote.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/db/database.hpp"
#include "optune/tuner/jobs/job.hpp"
#include "optune/tuner/scheduling/suite_tuning.hpp"

namespace optune::app {

struct JobRunRequest {
  std::string file;
  bool wait_lock = false;  // another run measuring on the device: wait for it (else fail at once)
  // Set (a front end's signal handler) to stop after the batch in flight; null: never.
  const std::atomic<bool>* stop = nullptr;
  // What stopped it, for the log's end line ("signal 15"); called once it has stopped.
  std::function<std::string()> stop_cause = [] { return std::string("a stop request"); };
};

struct JobOutcome {
  bool stopped = false;            // by request.stop: run it again to continue
  bool every_task_tuned = false;   // each workload has a working config recorded
  std::size_t trials = 0;          // measured in this run
};

class JobLog;

class JobRun {
 public:
  // Loads the job (BadInput for a malformed file), makes its tasks, opens its database and log
  // (BadInput where the log cannot be written) and takes the device's lock. `say` takes every line
  // the log takes but the per-batch ones (a front end prints them).
  JobRun(const JobRunRequest& request, const InstallPaths& paths, std::function<void(const std::string&)> say,
         std::function<void(const std::string&)> log = nullptr);
  ~JobRun();

  // Tunes the job's workloads; throws what the run failed on (a full disk, a broken environment),
  // with the same line in the log.
  JobOutcome run();

  // The log's end line when the run is stopped at once (a second signal) in the middle of a batch:
  // the trials the database holds for the job. Never throws (a log that takes no line: stderr).
  void stopped_at_once(const std::string& cause) noexcept;

 private:
  void say(const std::string& line) const;
  void print_summary() const;

  JobRunRequest request_;
  InstallPaths paths_;
  std::function<void(const std::string&)> say_;
  std::function<void(const std::string&)> log_;
  tuner::JobSpec job_;
  std::vector<tuner::SuiteTask> tasks_;
  std::unique_ptr<db::Database> database_;
  std::unique_ptr<JobLog> job_log_;
  std::optional<Remote> remote_;
  std::optional<RunLocks> locks_;
};

}  // namespace optune::app
