// optune job run <file>: an overnight tuning job (file format in optune/tuner/jobs/job.hpp). Takes the
// device's lock, tunes the job's workloads as a suite under its budget, counting what earlier runs
// of the job recorded, logs every batch, and ends with a summary read back from the database.
// SIGINT/SIGTERM stop it after the current batch (a second signal stops it at once, the log's end
// line written still); running the job again continues where it stopped.
#include <cstdio>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "measure_options.hpp"
#include "optune/app/job_run.hpp"
#include "stop_signals.hpp"

namespace optune::cli {
namespace {

int run_job(const app::JobRunRequest& given) {
  app::JobRunRequest request = given;
  request.stop = &StopOnSignals::stop_requested();
  request.stop_cause = [] { return "signal " + std::to_string(StopOnSignals::first_signal()); };
  app::JobRun job(request, install_paths(), [](const std::string& line) { std::printf("%s\n", line.c_str()); },
                  stderr_log());
  StopOnSignals signals([&job](int signal) { job.stopped_at_once("signal " + std::to_string(signal)); });
  const app::JobOutcome outcome = job.run();
  // 128 + signal, as a shell reports a process its signal ended: scripts see the job is unfinished.
  if (outcome.stopped) return 128 + StopOnSignals::first_signal();
  return outcome.every_task_tuned ? 0 : 1;  // else a workload without any working config
}

}  // namespace

void add_job_command(CLI::App& app, CommandAction& action) {
  CLI::App* job = app.add_subcommand("job", "Overnight tuning jobs described by a file (configs/jobs/*.toml)");
  job->require_subcommand(1);
  auto options = std::make_shared<app::JobRunRequest>();
  CLI::App* run = job->add_subcommand(
      "run", "Run or resume a job: trials already recorded count toward its budget; SIGINT/SIGTERM stop it cleanly");
  run->add_option("file", options->file, "Job file (format: tuner/include/optune/tuner/jobs/job.hpp)")->required();
  add_wait_lock_option(*run, options->wait_lock);
  run->callback([options, &action] { action = [options] { return run_job(*options); }; });
}

}  // namespace optune::cli
