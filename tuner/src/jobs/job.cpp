#include "optune/tuner/jobs/job.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "optune/tuner/scheduling/task_scheduler.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "scheduling/suite_toml.hpp"

namespace optune::tuner {
namespace {

constexpr std::int64_t kMaxBudgetTrials = 100'000'000;  // as tune's --budget and trials_per_task

// Reads one job file, failing with "<file>:<line>: <problem>".
class JobReader {
 public:
  JobReader(const toml::table& root, std::string source) : root_(root), source_(std::move(source)) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& problem) const {
    throw JobError(one_line(source_ + ":" + std::to_string(where.begin.line) + ": " + problem));
  }
  [[noreturn]] void fail(const std::string& problem) const { throw JobError(one_line(source_ + ": " + problem)); }

  void check_keys(const toml::table& table, const std::set<std::string>& known, const std::string& where) const {
    for (const auto& [key, node] : table)
      if (!known.count(std::string(key.str())))
        fail(node.source(), "unknown key '" + std::string(key.str()) + "'" + where);
  }

  void read(const toml::table& table, const char* key, std::string& value) const {
    const toml::node* node = table.get(key);
    if (!node) return;
    auto text = node->value<std::string>();
    if (!text || text->empty()) fail(node->source(), std::string("'") + key + "' must be a non-empty string");
    value = *text;
  }

  // A whole number from `low` to `high`.
  template <typename Number>
  void read(const toml::table& table, const char* key, Number& value, std::int64_t low, std::int64_t high) const {
    const toml::node* node = table.get(key);
    if (!node) return;
    auto number = node->value_exact<std::int64_t>();
    if (!number || *number < low || *number > high)
      fail(node->source(), std::string("'") + key + "' must be a whole number from " + std::to_string(low) + " to " +
                               std::to_string(high));
    value = static_cast<Number>(*number);
  }

  void read_seconds(const toml::table& table, const char* key, double& value, double low, double high) const {
    const toml::node* node = table.get(key);
    if (!node) return;
    auto number = node->value<double>();  // integers are accepted as seconds too
    if (!number || !(*number >= low && *number <= high))
      fail(node->source(), std::string("'") + key + "' must be a number of seconds from " + std::to_string(low) +
                               " to " + std::to_string(high));
    value = *number;
  }

  // budget = 2000 (trials) or "8h" (time); "2000" as a string is trials too.
  void read_budget(JobSpec& job) const {
    read(root_, "trials_per_task", job.budget.trials_per_task, 1, kMaxBudgetTrials);
    const toml::node* node = root_.get("budget");
    if (!node) {
      if (!job.budget.trials_per_task)
        fail(root_.source(), "missing 'budget' (trials, e.g. 2000, or time, e.g. \"8h\")");
      return;
    }
    if (auto trials = node->value_exact<std::int64_t>()) {
      if (*trials < 1 || *trials > kMaxBudgetTrials)
        fail(node->source(), "'budget' in trials must be at least 1 and at most " + std::to_string(kMaxBudgetTrials));
      job.budget.total_trials = static_cast<std::size_t>(*trials);
      return;
    }
    auto text = node->value<std::string>();
    if (!text) fail(node->source(), "'budget' must be trials (2000) or a time (\"8h\", \"30m\", \"1h30m\")");
    if (!text->empty() && text->find_first_not_of("0123456789") == std::string::npos) {
      // Nine digits at most: the number is read exactly, whatever the length of the text.
      if (text->size() > 9 || std::stoll(*text) < 1 || std::stoll(*text) > kMaxBudgetTrials)
        fail(node->source(), "'budget' in trials must be at least 1 and at most " + std::to_string(kMaxBudgetTrials));
      job.budget.total_trials = std::stoul(*text);
      return;
    }
    try {
      job.budget.seconds = parse_duration(*text);
    } catch (const std::invalid_argument& error) {
      fail(node->source(), std::string("'budget': ") + error.what());
    }
    // Time alone bounds the run, unless a per-task cap ends it first.
    if (!job.budget.trials_per_task) job.budget.total_trials = std::numeric_limits<std::size_t>::max() / 2;
  }

  void read_measure(JobSpec& job) const {
    const toml::node* node = root_.get("measure");
    if (!node) return;
    const toml::table* table = node->as_table();
    if (!table) fail(node->source(), "'measure' must be a [measure] table");
    check_keys(*table,
               {"repeat", "number", "min_repeat_ms", "timeout", "compile_timeout", "jobs", "compiler", "bail_out",
                "timing"},
               " in [measure]");
    read(*table, "repeat", job.timing.repeat, 1, 1000);
    read(*table, "number", job.timing.number, 0, 1'000'000);
    if (table->contains("min_repeat_ms")) {
      double min_repeat_ms = 0;
      read_seconds(*table, "min_repeat_ms", min_repeat_ms, 0, 60'000);
      job.min_repeat_ms = min_repeat_ms;
    }
    read_seconds(*table, "timeout", job.timing.timeout_seconds, 0.1, 86'400);
    read_seconds(*table, "compile_timeout", job.build.compile_timeout, 1, 86'400);
    read(*table, "jobs", job.build.jobs, 0, 4096);
    read(*table, "compiler", job.build.compiler);
    read_bail_out(*table, job.timing.bail_out);
    if (const toml::node* timing = table->get("timing")) {
      const auto text = timing->value<std::string>();
      if (!text || (*text != "adaptive" && *text != "full"))
        fail(timing->source(), "'timing' must be \"adaptive\" or \"full\"");
      job.timing.adaptive = *text == "adaptive";
    }
  }

  // bail_out = 2 (a factor) or "off".
  void read_bail_out(const toml::table& table, double& factor) const {
    const toml::node* node = table.get("bail_out");
    if (!node) return;
    if (node->value<std::string>() == "off") {
      factor = 0;
      return;
    }
    const auto number = node->value<double>();
    if (!number || !(*number >= measure::kMinBailOut && *number <= measure::kMaxBailOut))
      fail(node->source(), fmt::format("'bail_out' must be \"off\" or a factor from {:g} to {:g}", measure::kMinBailOut,
                                       measure::kMaxBailOut));
    factor = *number;
  }

  void read_workloads(JobSpec& job) const {
    read(root_, "suite", job.suite_path);
    const bool inline_workloads = root_.contains("workload");
    if (!job.suite_path.empty() && inline_workloads)
      fail(root_.get("workload")->source(), "give either 'suite' or [[workload]] tables, not both");
    try {
      if (!job.suite_path.empty()) {
        job.suite = load_suite(job.suite_path);
      } else if (inline_workloads) {
        job.suite.name = job.name;
        job.suite.entries = parse_workload_tables(root_, source_);
      } else {
        fail(root_.source(), "no workloads: give 'suite' (a suite file) or [[workload]] tables");
      }
    } catch (const SuiteError& error) {
      // Inline tables: the message names this file and line already; a suite file: name both.
      throw JobError(job.suite_path.empty() ? std::string(error.what()) : one_line(source_ + ": suite " + error.what()));
    }
  }

  const toml::table& root() const { return root_; }

 private:
  const toml::table& root_;
  std::string source_;
};

// Whether `path` names the file `other` or one of SQLite's files beside it (a database's -wal,
// -shm and -journal), by name or, where both exist, by identity (a link).
bool is_file_or_companion(const std::string& path, const std::string& other) {
  namespace fs = std::filesystem;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const fs::path file = other + suffix;
    std::error_code error;
    if (fs::equivalent(path, file, error)) return true;
    if (fs::absolute(path, error).lexically_normal() == fs::absolute(file, error).lexically_normal()) return true;
  }
  return false;
}

}  // namespace

JobSpec parse_job(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    throw JobError(one_line(source + ":" + std::to_string(error.source().begin.line) + ": " +
                            std::string(error.description())));
  }
  JobReader reader(root, source);
  reader.check_keys(root,
                    {"name", "target", "rpc", "token_file", "suite", "workload", "budget", "trials_per_task", "tuner", "seed",
                     "scheduler", "batch_size", "remeasure", "database", "log", "measure"},
                    "");
  JobSpec job;
  job.source = source;
  if (!root.contains("name")) reader.fail(root.source(), "missing 'name'");
  reader.read(root, "name", job.name);
  static const std::regex kName("^[A-Za-z0-9_.-]+$");
  if (!std::regex_match(job.name, kName))
    reader.fail(root.get("name")->source(), "'name' may hold only letters, digits, '-', '_' and '.'");
  reader.read(root, "target", job.target);
  reader.read(root, "rpc", job.rpc);
  reader.read(root, "token_file", job.token_file);
  reader.read(root, "tuner", job.tuner);
  const auto& tuners = tuner_names();
  if (std::find(tuners.begin(), tuners.end(), job.tuner) == tuners.end())
    reader.fail(root.get("tuner")->source(), "unknown tuner '" + job.tuner + "'");
  reader.read(root, "seed", job.seed, 0, std::numeric_limits<std::int64_t>::max());
  std::string scheduler(scheduler_policy_name(job.scheduler));
  reader.read(root, "scheduler", scheduler);
  try {
    job.scheduler = parse_scheduler_policy(scheduler);
  } catch (const std::invalid_argument&) {
    reader.fail(root.get("scheduler")->source(), "unknown scheduler '" + scheduler + "' (gradient or round_robin)");
  }
  reader.read(root, "batch_size", job.batch_size, 1, 4096);
  reader.read(root, "remeasure", job.remeasure, 0, 1000);
  reader.read(root, "database", job.database);
  reader.read(root, "log", job.log);
  if (job.log.empty()) {
    // Beside the database file; a database on a server has no folder here: beside the job file.
    const std::string beside = db::is_server_uri(job.database) ? source : job.database;
    job.log = (std::filesystem::path(beside).parent_path() / (job.name + ".log")).string();
  }
  // Lines appended to the database (or the job file) would damage it, and the log be lost.
  if (is_file_or_companion(job.log, job.database) || is_file_or_companion(job.log, source))
    reader.fail(root.get("log") ? root.get("log")->source() : root.source(),
                "'log' " + job.log + " is the job's database or the job file itself; give the log a file of its own");
  reader.read_budget(job);
  reader.read_measure(job);
  reader.read_workloads(job);
  return job;
}

JobSpec load_job(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw JobError(path + ": cannot read the job file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_job(text.str(), path);
}

std::size_t recorded_job_trials(const db::Database& database, const db::TaskKey& task, const std::string& run_id) {
  std::size_t trials = 0;
  for (const auto& record : database.task_records(task))
    if (record.run_id == run_id && !record.is_default && !record.is_remeasurement()) ++trials;
  return trials;
}

}  // namespace optune::tuner
