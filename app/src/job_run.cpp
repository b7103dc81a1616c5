#include "optune/app/job_run.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "optune/app/bad_input.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/scheduling/task_session.hpp"

namespace optune::app {
namespace {

std::string now_text() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return text;
}

std::string milliseconds(const std::optional<db::TuningRecord>& record) {
  if (!record) return "-";
  return record->ok() ? fmt::format("{:.4f}", record->median_seconds * 1e3) : record->error_kind;
}

}  // namespace

// The job's log file. Every line reaches the file at once (the job may be killed); a line that
// cannot be written (a full disk, /dev/full) stops the job with exit 1 once the batch before it is
// recorded, rather than the log being lost in silence.
class JobLog {
 public:
  explicit JobLog(const tuner::JobSpec& job) : path_(job.log), job_name_(job.name) {
    std::error_code ignored;  // a folder that cannot be made shows as the log's open failing
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ignored);
    file_.reset(std::fopen(path_.c_str(), "a"));
    if (!file_) throw BadInput("job " + job_name_ + ": cannot write the log file " + path_);
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

JobRun::JobRun(const JobRunRequest& request, const InstallPaths& paths, std::function<void(const std::string&)> say,
               std::function<void(const std::string&)> log)
    : request_(request), paths_(paths), say_(std::move(say)), log_(std::move(log)) {
  try {
    job_ = tuner::load_job(request.file);
  } catch (const tuner::JobError& error) {
    throw BadInput(error.what());
  }
  const kernels::Target target = parse_target_option(job_.target);
  remote_ = find_remote(job_.rpc, job_.token_file, MeasureSettings().rpc_wait, target);
  const kernels::DeviceInfo device = remote_ ? remote_->device : find_device_option(target);
  for (const auto& entry : job_.suite.entries) tasks_.push_back({entry, make_entry_task(entry, target, device), 0});
  // The locks come before anything is measured; the database's is named after the file's identity,
  // so the file is opened (made) first.
  database_ = std::make_unique<db::Database>(open_database(job_.database, db::Database::Mode::kReadWrite));
  locks_.emplace(lock_for_measuring("job " + job_.name, paths.lock_dir, job_.database, device, request.wait_lock, true,
                                    log_));
  job_log_ = std::make_unique<JobLog>(job_);
}

JobRun::~JobRun() = default;

void JobRun::say(const std::string& line) const {
  if (say_) say_(line);
  job_log_->write(line);
}

JobOutcome JobRun::run() {
  std::size_t done = 0;
  for (auto& task : tasks_)
    done += task.trials_done = tuner::recorded_job_trials(*database_, tuner::task_key(*task.task), job_.run_id());
  say(fmt::format("job {} ({}): {} on {} ({}), tuner {}, {} already recorded; database {}, log {}", job_.name,
                  job_.source, tuner::counted(tasks_.size(), "workload"), job_.target, tasks_.front().task->device.name,
                  job_.tuner, tuner::counted(done, "trial"), job_.database, job_.log));

  tuner::TuningOptions tuning;
  tuning.batch_size = job_.batch_size;
  tuning.remeasure_top = job_.remeasure;
  tuning.tuner.name = job_.tuner;
  tuning.tuner.seed = job_.seed;
  tuning.run_id = job_.run_id();
  tuner::SchedulerOptions scheduler;
  scheduler.policy = job_.scheduler;
  scheduler.seed = job_.seed;
  tuner::SuiteBudget budget = job_.budget;
  budget.stop = request_.stop;

  MeasureSettings settings;
  settings.target = job_.target;
  settings.timing = job_.timing;
  settings.min_repeat_ms = job_.min_repeat_ms;
  settings.build = job_.build;
  Measuring measuring(settings, paths_, remote_, log_);
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, *database_);
  tuner::Progress progress(job_log_->file(), false);  // a plain line per batch in the log
  // Called before each batch's line: a line of the batch before that did not reach the file stops the job.
  progress.set_observer([this](const tuner::ProgressState&) { job_log_->check(); });
  tuner::SuiteSummary summary;
  try {
    summary = tuner::tune_suite(tasks_, measurer, tuning, budget, scheduler, progress);
  } catch (const std::exception& error) {  // a broken environment, a full disk: the log may still take the line
    std::fprintf(job_log_->file(), "%s job %s: failed: %s\n", now_text().c_str(), job_.name.c_str(), error.what());
    throw;
  }
  if (summary.stopped)
    say(fmt::format("job {}: stopped by {} after {} in this run; run it again to continue", job_.name,
                    request_.stop_cause(), tuner::counted(summary.trials, "trial")));
  else
    say(fmt::format("job {}: finished, {} in this run in {}", job_.name, tuner::counted(summary.trials, "trial"),
                    tuner::format_duration(summary.seconds)));
  print_summary();
  JobOutcome outcome{summary.stopped, true, summary.trials};
  for (const auto& task : tasks_)
    if (!database_->best(tuner::task_key(*task.task))) outcome.every_task_tuned = false;
  return outcome;
}

// The end-of-job summary, read from the database so that it covers every run of the job.
void JobRun::print_summary() const {
  say(fmt::format("{:<24} {:>5} {:>7} {:>8} {:>12} {:>12} {:>9} {:>8}", "task", "count", "trials", "failed",
                  "default ms", "tuned ms", "GFLOP/s", "speed-up"));
  double default_total = 0, tuned_total = 0;
  std::size_t trials = 0;
  for (const auto& task : tasks_) {
    const db::TaskKey key = tuner::task_key(*task.task);
    std::size_t task_trials = 0, failures = 0;
    std::optional<db::TuningRecord> default_record;
    for (const auto& record : database_->task_records(key)) {
      if (record.run_id != job_.run_id()) continue;
      if (record.is_default) {
        default_record = record;  // the latest
      } else if (!record.is_remeasurement()) {
        ++task_trials;
        if (!record.ok()) ++failures;
      }
    }
    // The default counts with its latest successful record, as best() counts every config.
    if (default_record)
      if (auto latest = database_->latest_success(key, default_record->config_text())) default_record = latest;
    auto best = database_->best(key);
    std::string speedup = "-";
    if (best && default_record && best->config_text() == default_record->config_text()) speedup = "default";
    else if (best && default_record && default_record->ok() && (best->is_noisy() || default_record->is_noisy()))
      speedup = "busy";  // either record measured on a busy machine or with a wide spread: no ratio to trust
    else if (best && default_record && default_record->ok())
      speedup = tuner::speedup_text(default_record->median_seconds, best->median_seconds);
    say(fmt::format("{:<24} {:>5} {:>7} {:>8} {:>12} {:>12} {:>9} {:>8}", task.entry.name, task.entry.count,
                    task_trials, failures, milliseconds(default_record), milliseconds(best),
                    best ? fmt::format("{:.1f}", best->gflops) : "-", speedup));
    trials += task_trials;
    default_total += default_record && default_record->ok() ? task.entry.count * default_record->median_seconds : NAN;
    tuned_total += best ? task.entry.count * best->median_seconds : NAN;
  }
  say(fmt::format("trials recorded for the job: {}; estimated latency (sum of count x latency): default {:.3f} ms, "
                  "tuned {:.3f} ms",
                  trials, default_total * 1e3, tuned_total * 1e3));
}

void JobRun::stopped_at_once(const std::string& cause) noexcept {
  // The batch under way is given up; the batches before it are in the database.
  std::string recorded = "? trials";
  try {
    auto reader = db::Database::open(job_.database, db::Database::Mode::kReadOnly);
    std::size_t count = 0;
    for (const auto& task : tasks_) count += tuner::recorded_job_trials(reader, tuner::task_key(*task.task), job_.run_id());
    recorded = tuner::counted(count, "trial");
  } catch (const std::exception&) {  // the end line matters more than its count
  }
  const std::string line = fmt::format("job {}: stopped at once by a second {} during a batch; {} recorded for the "
                                       "job; run it again to continue",
                                       job_.name, cause, recorded);
  try {
    say(line);
  } catch (const std::exception& error) {  // the log takes no line: stderr still does
    std::fprintf(stderr, "optune: %s\n", error.what());
  }
}

}  // namespace optune::app
