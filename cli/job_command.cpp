// optune job run <file>: an overnight tuning job (file format in optune/tuner/jobs/job.hpp). Takes the
// device's lock, tunes the job's workloads as a suite under its budget, counting what earlier runs
// of the job recorded, logs every batch, and ends with a summary read back from the database.
// SIGINT/SIGTERM stop it after the current batch (a second signal stops it at once, the log's end
// line written still); running the job again continues where it stopped.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>

#include "cli_support.hpp"
#include "measuring.hpp"
#include "optune/tuner/jobs/job.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "stop_signals.hpp"

namespace optune::cli {
namespace {


struct JobRunOptions {
  std::string file;
  bool wait_lock = false;
};

std::string now_text() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return text;
}

// The job's log file. Every line reaches the file at once (the job may be killed); a line that
// cannot be written (a full disk, /dev/full) stops the job with exit 1 once the batch before it is
// recorded, rather than the log being lost in silence.
class JobLog {
 public:
  explicit JobLog(const tuner::JobSpec& job) : path_(job.log), job_name_(job.name) {
    std::error_code ignored;  // a folder that cannot be made shows as the log's open failing
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ignored);
    file_.reset(std::fopen(path_.c_str(), "a"));
    if (!file_) throw UsageError("job " + job_name_ + ": cannot write the log file " + path_);
    setvbuf(file_.get(), nullptr, _IOLBF, 0);
  }
  std::FILE* file() const { return file_.get(); }
  void write(const std::string& line) const {
    errno = 0;
    std::fprintf(file(), "%s %s\n", now_text().c_str(), line.c_str());  // flushes: the buffer is by line
    check(errno);
  }
  // Throws when a line has not reached the file (Progress writes its lines to file() too);
  // `write_error`: errno after a write just made, the reason where the flush has none to give.
  void check(int write_error = 0) const {
    errno = 0;
    const bool flushed = std::fflush(file()) == 0;
    const int error = flushed ? write_error : errno;
    if (flushed && !std::ferror(file())) return;
    throw std::runtime_error("job " + job_name_ + ": cannot write the log file " + path_ +
                             (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()) +
                             "; the batches before this line are recorded");
  }

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::string path_;
  std::string job_name_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

// Writes the same line to standard output and the log.
void say(const JobLog& log, const std::string& line) {
  std::printf("%s\n", line.c_str());
  log.write(line);
}

std::string milliseconds(const std::optional<db::TuningRecord>& record) {
  if (!record) return "-";
  return record->ok() ? fmt::format("{:.4f}", record->median_seconds * 1e3) : record->error_kind;
}

// The end-of-job summary, read from the database so that it covers every run of the job.
void print_job_summary(const JobLog& log, const tuner::JobSpec& job, const std::vector<tuner::SuiteTask>& tasks,
                       const db::Database& database) {
  say(log, fmt::format("{:<24} {:>5} {:>7} {:>8} {:>12} {:>12} {:>9} {:>8}", "task", "count", "trials", "failed",
                       "default ms", "tuned ms", "GFLOP/s", "speed-up"));
  double default_total = 0, tuned_total = 0;
  std::size_t trials = 0;
  for (const auto& task : tasks) {
    std::size_t task_trials = 0, failures = 0;
    std::optional<db::TuningRecord> default_record;
    for (const auto& record : database.task_records(tuner::task_key(*task.task))) {
      if (record.run_id != job.run_id()) continue;
      if (record.is_default) {
        default_record = record;  // the latest
      } else if (!record.is_remeasurement()) {
        ++task_trials;
        if (!record.ok()) ++failures;
      }
    }
    // The default counts with its latest successful record, as best() counts every config.
    if (default_record)
      if (auto latest = database.latest_success(tuner::task_key(*task.task), default_record->config_text()))
        default_record = latest;
    auto best = database.best(tuner::task_key(*task.task));
    std::string speedup = "-";
    if (best && default_record && best->config_text() == default_record->config_text()) speedup = "default";
    else if (best && default_record && default_record->ok() && (best->is_noisy() || default_record->is_noisy()))
      speedup = "busy";  // either record measured on a busy machine or with a wide spread: no ratio to trust
    else if (best && default_record && default_record->ok())
      speedup = tuner::speedup_text(default_record->median_seconds, best->median_seconds);
    say(log, fmt::format("{:<24} {:>5} {:>7} {:>8} {:>12} {:>12} {:>9} {:>8}", task.entry.name, task.entry.count,
                         task_trials, failures, milliseconds(default_record), milliseconds(best),
                         best ? fmt::format("{:.1f}", best->gflops) : "-", speedup));
    trials += task_trials;
    default_total += default_record && default_record->ok() ? task.entry.count * default_record->median_seconds : NAN;
    tuned_total += best ? task.entry.count * best->median_seconds : NAN;
  }
  say(log,
      fmt::format("trials recorded for the job: {}; estimated latency (sum of count x latency): default {:.3f} ms, "
                  "tuned {:.3f} ms",
                  trials, default_total * 1e3, tuned_total * 1e3));
}

std::vector<tuner::SuiteTask> make_tasks(const tuner::JobSpec& job, const std::optional<Remote>& remote) {
  std::vector<tuner::SuiteTask> tasks;
  for (const auto& entry : job.suite.entries) {
    auto task = make_entry_task(entry, job.target, remote ? &remote->device : nullptr);
    tasks.push_back({entry, task, 0});
  }
  return tasks;
}

int run_job(const JobRunOptions& options) {
  tuner::JobSpec job;
  try {
    job = tuner::load_job(options.file);
  } catch (const tuner::JobError& error) {
    throw UsageError(error.what());
  }
  const MeasureSettings settings{job.target, job.timing, job.jobs,    job.compile_timeout,
                                 job.compiler, job.rpc,   job.token_file};
  auto remote = find_remote(settings);
  auto tasks = make_tasks(job, remote);

  // The locks come before anything is measured; the database's is named after the file's identity,
  // so the file is opened (made) first.
  auto database = open_database(job.database, db::Database::Mode::kReadWrite);
  auto locks = lock_for_measuring("job " + job.name, job.database, tasks.front().task->device, options.wait_lock, true);
  JobLog log(job);

  std::size_t done = 0;
  for (auto& task : tasks)
    done += task.trials_done = tuner::recorded_job_trials(database, tuner::task_key(*task.task), job.run_id());
  say(log, fmt::format("job {} ({}): {} on {} ({}), tuner {}, {} already recorded; database {}, log {}", job.name,
                       job.source, tuner::counted(tasks.size(), "workload"), job.target, tasks.front().task->device.name,
                       job.tuner, tuner::counted(done, "trial"), job.database, job.log));

  tuner::TuningOptions tuning;
  tuning.batch_size = job.batch_size;
  tuning.remeasure_top = job.remeasure;
  tuning.tuner.name = job.tuner;
  tuning.tuner.seed = job.seed;
  tuning.run_id = job.run_id();
  tuner::SchedulerOptions scheduler;
  scheduler.policy = job.scheduler;
  scheduler.seed = job.seed;
  tuner::SuiteBudget budget = job.budget;
  budget.stop = &StopOnSignals::stop_requested();

  Measuring measuring(settings, remote);
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
  tuner::Progress progress(log.file(), false);  // a plain line per batch in the log
  // Called before each batch's line: a line of the batch before that did not reach the file stops the job.
  progress.set_observer([&log](const tuner::ProgressState&) { log.check(); });
  StopOnSignals signals([&](int signal) {
    // The batch under way is given up; the batches before it are in the database.
    std::string recorded = "? trials";
    try {
      auto reader = db::Database::open(job.database, db::Database::Mode::kReadOnly);
      std::size_t count = 0;
      for (const auto& task : tasks) count += tuner::recorded_job_trials(reader, tuner::task_key(*task.task), job.run_id());
      recorded = tuner::counted(count, "trial");
    } catch (const std::exception&) {  // the end line matters more than its count
    }
    const std::string line = fmt::format("job {}: stopped at once by a second signal {} during a batch; {} "
                                         "recorded for the job; run it again to continue",
                                         job.name, signal, recorded);
    try {
      say(log, line);
    } catch (const std::runtime_error& error) {  // the log takes no line: stderr still does
      std::fprintf(stderr, "optune: %s\n", error.what());
    }
  });
  tuner::SuiteSummary summary;
  try {
    summary = tuner::tune_suite(tasks, measurer, tuning, budget, scheduler, progress);
  } catch (const tuner::EnvironmentFailure& error) {
    std::fprintf(log.file(), "%s job %s: failed: %s\n", now_text().c_str(), job.name.c_str(), error.what());
    throw;  // exit code 1, with the same line on stderr
  } catch (const db::StorageError& error) {  // a full disk: the log may still take the line
    std::fprintf(log.file(), "%s job %s: failed: %s\n", now_text().c_str(), job.name.c_str(), error.what());
    throw;
  }

  if (summary.stopped) {
    say(log, fmt::format("job {}: stopped by signal {} after {} in this run; run it again to continue", job.name,
                         StopOnSignals::first_signal(), tuner::counted(summary.trials, "trial")));
  } else {
    say(log, fmt::format("job {}: finished, {} in this run in {}", job.name, tuner::counted(summary.trials, "trial"),
                         tuner::format_duration(summary.seconds)));
  }
  print_job_summary(log, job, tasks, database);
  // 128 + signal, as a shell reports a process its signal ended: scripts see the job is unfinished.
  if (summary.stopped) return 128 + StopOnSignals::first_signal();
  for (const auto& task : tasks)
    if (!database.best(tuner::task_key(*task.task))) return 1;  // a workload without any working config
  return 0;
}

}  // namespace

void add_job_command(CLI::App& app, CommandAction& action) {
  CLI::App* job = app.add_subcommand("job", "Overnight tuning jobs described by a file (configs/jobs/*.toml)");
  job->require_subcommand(1);
  auto options = std::make_shared<JobRunOptions>();
  CLI::App* run = job->add_subcommand(
      "run", "Run or resume a job: trials already recorded count toward its budget; SIGINT/SIGTERM stop it cleanly");
  run->add_option("file", options->file, "Job file (format: tuner/include/optune/tuner/jobs/job.hpp)")->required();
  add_wait_lock_option(*run, options->wait_lock);
  run->callback([options, &action] { action = [options] { return run_job(*options); }; });
}

}  // namespace optune::cli
