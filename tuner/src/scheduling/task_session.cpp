#include "optune/tuner/scheduling/task_session.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include <unistd.h>

#include "optune/measure/machine_load.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/results/toolchain_change.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

// A batch as the builder and the runner take it.
std::vector<measure::MeasureInput> measure_inputs(const std::shared_ptr<const measure::MeasureTask>& task,
                                                  const std::vector<search_space::Config>& configs,
                                                  std::optional<double> best_seconds, bool may_cut) {
  std::vector<measure::MeasureInput> inputs;
  for (const auto& config : configs) inputs.push_back({task, config, best_seconds, may_cut});
  return inputs;
}

db::TuningRecord to_record(const measure::MeasureTask& task, const search_space::Config& config,
                           const measure::MeasureResult& result, const measure::Toolchain& toolchain) {
  db::TuningRecord record;
  record.workload_key = task.workload.key();
  record.template_name = task.kernel_template->name();
  record.target = task.target.str();
  record.device_id = task.device.fingerprint_id();
  record.device_fingerprint = task.device.fingerprint();
  record.config = task.space.to_json(config);
  record.costs = result.costs;
  record.median_seconds = result.median_seconds;
  record.gflops = result.gflops;
  record.error_kind = std::string(measure::error_kind_name(result.error));
  record.error_message = result.message;
  record.build_seconds = result.build_seconds;
  record.check_seconds = result.check_seconds;
  record.timing_seconds = result.timing_seconds;
  record.check_error = result.check_error;
  record.timestamp = result.timestamp;
  record.optune_version = OPTUNE_VERSION;
  record.toolchain = toolchain_json(toolchain);
  if (result.ok() || result.is_slow()) {
    const db::TuningRecord trust = trust_fields(result);
    record.spread = trust.spread;
    record.load = trust.load;
    record.device_load = trust.device_load;
  }
  return record;
}

// Rounds of the closing re-measurement (measure::Runner::run), and how many waves of it at most.
constexpr int kRemeasureRounds = 3;
constexpr int kMaxRemeasureWaves = 4;

// Noisy contenders joining the closing re-measurement (noisy_contenders): at most this many. Before
// it, a busy machine is waited for, probed every kQuietProbeSeconds, for at most a tenth of the
// run's time so far (and kMaxQuietWaitSeconds): a short test run hardly waits, an overnight one
// waits up to a minute for a build beside it to end.
constexpr std::size_t kMaxNoisyRemeasures = 8;
constexpr double kMaxQuietWaitSeconds = 60;
constexpr double kQuietWaitShare = 0.1;
constexpr double kQuietProbeSeconds = 0.5;

// How far noise may have slowed a record: the busy share of the CPU or GPU, or the spread of its timings.
double noise_slack(const db::TuningRecord& record) {
  return std::min(db::kMaxBusyShare, std::max(db::busy_share(record.load, record.device_load), record.spread.value_or(0)));
}

bool better(const db::TuningRecord& a, const std::optional<db::TuningRecord>& b) {
  return a.ok() && (!b || a.median_seconds < b->median_seconds);
}

}  // namespace

TimeSplit& TimeSplit::operator+=(const TimeSplit& other) {
  building += other.building;
  checking += other.checking;
  timing += other.timing;
  saved += other.saved;
  slow += other.slow;
  reused += other.reused;
  return *this;
}

TimeSplit TimeSplit::operator-(const TimeSplit& other) const {
  return {building - other.building, checking - other.checking, timing - other.timing, saved - other.saved,
          slow - other.slow, reused - other.reused};
}

double TuningSummary::waiting_seconds() const {
  return std::max(0.0, seconds - overhead_seconds - time.building - time.checking - time.timing);
}

std::optional<ComparedSpeedup> TuningSummary::compared_speedup() const {
  if (!comparison || !best) return std::nullopt;
  return comparison->speedup_of(best->config_text());
}

double TuningSummary::speedup() const {
  if (auto compared = compared_speedup()) return compared->ratio.value;
  if (!best || !default_config || !default_config->ok() || best->median_seconds <= 0) return 0;
  return default_config->median_seconds / best->median_seconds;
}

std::string TuningSummary::records_speedup_doubt() const {
  if (!best || !default_config) return "";
  if (!best->is_noisy() && !default_config->is_noisy()) return "";
  const auto busy = [](const db::TuningRecord& record) { return db::is_busy(record.load, record.device_load); };
  if (busy(*best) || busy(*default_config)) {
    const auto& measured = busy(*best) ? *best : *default_config;
    return fmt::format("the machine was busy ({} while the {} was measured)",
                       db::busy_text(measured.load, measured.device_load), busy(*best) ? "best" : "default");
  }
  return fmt::format("the {}'s timings spread too widely to give a ratio (+-{:.0f}%)",
                     best->is_noisy() ? "best" : "default",
                     (best->is_noisy() ? best->spread : default_config->spread).value_or(0) * 100);
}

bool TuningSummary::best_is_default() const {
  return best && default_config && best->config_text() == default_config->config_text();
}

std::string make_run_id() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::random_device entropy;
  return fmt::format("{:x}-{:04x}", std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                     entropy() & 0xffff);
}

std::vector<db::TuningRecord> RecordingMeasurer::measure(const std::shared_ptr<const measure::MeasureTask>& task,
                                                         const std::vector<search_space::Config>& configs,
                                                         const std::string& tuner, const std::string& run_id,
                                                         bool is_default, std::vector<measure::MeasureResult>* results,
                                                         int rounds) {
  auto records = run(task, configs, tuner, run_id, is_default, results, rounds);
  record(records);
  return records;
}

void RecordingMeasurer::record(const std::vector<db::TuningRecord>& records) {
  if (!records.empty()) database_.insert(records);
}

std::vector<db::TuningRecord> RecordingMeasurer::run(const std::shared_ptr<const measure::MeasureTask>& task,
                                                     const std::vector<search_space::Config>& configs,
                                                     const std::string& tuner, const std::string& run_id,
                                                     bool is_default, std::vector<measure::MeasureResult>* results,
                                                     int rounds, int max_rounds,
                                                     const measure::Runner::MoreRounds& more,
                                                     measure::Rounds rounds_kind,
                                                     std::optional<double> best_seconds, bool may_cut,
                                                     std::future<std::vector<measure::BuildResult>>* built_ahead,
                                                     const std::function<void()>& built) {
  const auto inputs = measure_inputs(task, configs, best_seconds, may_cut);
  // Build the whole batch first (or wait for its build ahead): no compile of this batch runs while
  // one of its candidates is timed.
  const auto build_started = std::chrono::steady_clock::now();
  std::vector<measure::BuildResult> builds;
  if (built_ahead && built_ahead->valid()) {
    builds = built_ahead->get();
  } else {
    const std::lock_guard<std::mutex> one_build(building_);
    builds = builder_.build(inputs);
  }
  spent_.building += std::chrono::duration<double>(std::chrono::steady_clock::now() - build_started).count();
  if (builds.size() != configs.size()) throw std::logic_error("a batch built ahead is not the batch measured");
  if (built) built();
  auto measured = runner_.run(inputs, builds, rounds, std::max(rounds, max_rounds), more, rounds_kind);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const measure::MeasureResult& result = measured[i];
    // A backend that compiles in the worker (OpenCL): its compile is building too.
    spent_.building += std::max(0.0, result.build_seconds - builds[i].build_seconds);
    spent_.checking += result.check_seconds.value_or(0);
    spent_.timing += result.timing_seconds.value_or(0);
    spent_.saved += result.saved_seconds;
    spent_.slow += result.is_slow();
    spent_.reused += builds[i].ok() && result.build_seconds == 0;
  }
  for (const auto& result : measured)
    if (result.error == measure::ErrorKind::kReferenceError)
      throw KernelCheckFailure(task->workload.key() + ": " + result.message +
                             "; no config can be checked (nothing of this batch recorded)");
  std::vector<db::TuningRecord> records;
  const measure::Toolchain toolchain = builder_.toolchain(task->device);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    records.push_back(to_record(*task, configs[i], measured[i], toolchain));
    records.back().tuner = tuner;
    records.back().run_id = run_id;
    records.back().is_default = is_default;
  }
  if (results) *results = std::move(measured);
  return records;
}

std::future<std::vector<measure::BuildResult>> RecordingMeasurer::build_ahead(
    const std::shared_ptr<const measure::MeasureTask>& task, const std::vector<search_space::Config>& configs) {
  return std::async(std::launch::async, [this, inputs = measure_inputs(task, configs, std::nullopt, true)] {
    const std::lock_guard<std::mutex> one_build(building_);
    return builder_.build(inputs);
  });
}

TaskSession::TaskSession(std::shared_ptr<const measure::MeasureTask> task, const TunerOptions& tuner_options,
                         RecordingMeasurer& measurer, std::string run_id)
    : task_(std::move(task)), measurer_(measurer), start_(std::chrono::steady_clock::now()) {
  summary_.run_id = std::move(run_id);
  summary_.already_recorded = measurer_.database().measured_configs(task_key(*task_)).size();
  bool transfer = tuner_options.transfer && reads_transfer_records(tuner_options.name);
  auto history = load_history(measurer_.database(), *task_, transfer, tuner_options.unseen_workloads);
  // A resumed job (same run id) reuses the default config its earlier run measured.
  for (const auto& record : history.own)
    if (record.is_default && record.run_id == summary_.run_id) summary_.default_config = record;
  if (!summary_.default_config) {
    auto default_config = task_->kernel_template->default_config(task_->workload, task_->device, task_->space);
    summary_.default_config = run_batch(std::vector<search_space::Config>{default_config}, "default", summary_.run_id, true).front();
    if (summary_.default_config->ok()) measurer_.record({*summary_.default_config});
    else unrecorded_default_ = summary_.default_config;
    history.own.push_back(*summary_.default_config);
  }
  if (summary_.default_config->ok()) best_ = summary_.default_config;
  for (const auto& record : history.own)
    if (better(record, known_good_)) known_good_ = record;

  tuner_ = make_tuner(tuner_options, *task_, history);
  summary_.tuner = tuner_->name();
  summary_.transfer_records = history.related.size();
  summary_.other_device_records = history.other_devices.size();
}

double TaskSession::best_seconds() const {
  return best_ ? best_->median_seconds : std::numeric_limits<double>::infinity();
}

void TaskSession::measure_first(std::vector<search_space::Config> configs) {
  first_.assign(configs.rbegin(), configs.rend());
}

TaskSession::Batch TaskSession::choose(std::size_t max_trials) {
  Batch batch;
  batch.tuner = tuner_->name();
  if (!first_.empty()) {
    while (!first_.empty() && batch.configs.size() < max_trials) {
      batch.configs.push_back(std::move(first_.back()));
      first_.pop_back();
    }
    batch.tuner = "seeded";
  } else {
    batch.configs = tuner_->next_batch(max_trials);
  }
  return batch;
}

void TaskSession::drop_ahead() {
  if (ahead_ && ahead_->builds.valid()) ahead_->builds.wait();
  ahead_.reset();
}

std::size_t TaskSession::step(std::size_t max_trials, std::size_t ahead_trials) {
  Batch chosen = ahead_ ? std::move(*ahead_) : choose(max_trials);
  ahead_.reset();
  const std::vector<search_space::Config>& batch = chosen.configs;
  if (batch.empty()) {
    exhausted_ = summary_.exhausted = true;
    return 0;
  }
  // Compile-ahead: the next batch is chosen now and built once this one is.
  if (ahead_trials > 0) ahead_ = choose(ahead_trials);
  auto build_next = [this] {
    if (ahead_ && !ahead_->configs.empty()) ahead_->builds = measurer_.build_ahead(task_, ahead_->configs);
  };
  std::vector<measure::MeasureResult> results;
  // A run's first batch is never cut as slow: its best so far is the default alone, which a first
  // look at the space may be far from. Its timing still ends early where a candidate is clearly
  // slower than that default (adaptive timing: an ok record of fewer repeats).
  std::optional<double> rank_against;
  if (best_) rank_against = best_->median_seconds;
  const bool may_cut = summary_.trials > 0;
  auto records = run_batch(batch, chosen.tuner, summary_.run_id, false, &results, 1, 0,
                           measure::Runner::MoreRounds{}, measure::Rounds::kCompared, rank_against, may_cut,
                           &chosen.builds, build_next);
  check_environment(records);
  record(records);
  tuner_->update(batch, results);
  note_noise(records);
  for (auto& record : records) {
    ++summary_.trials;
    if (!record.ok() && !record.is_slow()) ++summary_.failures;
    if (record.ok()) successes_.push_back(record);
    if (better(record, known_good_)) known_good_ = record;
    if (better(record, best_)) {
      best_ = record;
      last_improvement_ = summary_.trials;
    }
  }
  summary_.overhead_seconds = tuner_->overhead_seconds();
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return batch.size();
}

void TaskSession::finish(std::size_t top, const std::function<void(const std::string&)>& note,
                         const std::atomic<bool>* stop) {
  drop_ahead();
  record({});  // a default held back while no batch followed
  if (top > 0) {
    const auto contenders = noisy_contenders();
    if (!contenders.empty()) wait_for_quiet(contenders.size(), note, stop);
    remeasure_finalists(top, contenders);
    compare_finalists(note, stop);
  }
  // The default counts with its latest successful record, as the best does: both from the same
  // closing re-measurement, not a first measurement taken in a busier or quieter spell.
  db::Database& database = measurer_.database();
  const db::TaskKey key = task_key(*task_);
  summary_.best = best_;
  // The database's ranking (its declared winner first), less configs this space cannot read
  // (records of an earlier version of a kernel file whose knobs have changed since), as apply-best
  // and regress read it.
  if (top > 0)
    if (auto usable = best_usable(database, key, task_->space)) summary_.best = std::move(usable->record);
  if (auto latest = database.latest_success(key, summary_.default_config->config_text())) summary_.default_config = latest;
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

namespace {

// "speed-up 3.92x (3.85x to 4.01x)", or what keeps it from being given.
std::string verdict_text(const FinalVerdict& verdict) {
  std::string text;
  if (verdict.speedup)
    text = "speed-up " + speedup_interval_text(verdict.speedup->value, verdict.speedup->low, verdict.speedup->high);
  else
    text = "no speed-up to measure";
  if (verdict.tied) text += "; the best two are tied within noise";
  if (db::is_busy(verdict.load, verdict.device_load))
    text += "; machine busy (" + db::busy_text(verdict.load, verdict.device_load) + ")";
  return text;
}

}  // namespace

void TaskSession::compare_finalists(const std::function<void(const std::string&)>& note,
                                    const std::atomic<bool>* stop) {
  db::Database& database = measurer_.database();
  const db::TaskKey key = task_key(*task_);
  FinalComparison comparison;
  std::vector<search_space::Config> configs;
  std::map<std::string, std::size_t> index_of;  // config_text() -> finalist
  auto add = [&](const db::TuningRecord& record, const std::string& role) -> std::optional<std::size_t> {
    if (!record.ok()) return std::nullopt;
    if (auto known = index_of.find(record.config_text()); known != index_of.end()) return known->second;
    auto config = readable_config(task_->space, record);
    if (!config) return std::nullopt;
    configs.push_back(std::move(*config));
    comparison.finalists.push_back({role, record, {}});
    return index_of[record.config_text()] = configs.size() - 1;
  };
  std::optional<std::size_t> default_index;
  if (auto latest_default = database.latest_success(key, summary_.default_config->config_text()))
    default_index = add(*latest_default, "default");
  // The best two others by their records' medians, and the winner an earlier run declared.
  std::vector<std::string> passed_over;
  auto ranked = checked_top_k(database, task_filter(key), 8, passed_over);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.median_seconds < b.median_seconds; });
  std::size_t others = 0;
  for (const auto& record : ranked)
    if (others < 2 && !index_of.count(record.config_text()) && add(record, others == 0 ? "best" : "runner-up")) ++others;
  std::optional<std::size_t> stored_index;
  if (auto mark = database.winner(key))
    if (auto latest = database.latest_success(key, mark->config_text())) stored_index = add(*latest, "stored winner");
  if (configs.size() < 2) return;  // nothing to compare with

  if (note)
    note(fmt::format("re-measuring {} finalists in interleaved rounds ({} to {}) for the speed-up and the winner",
                     configs.size(), kMinFinalRounds, kMaxFinalRounds));
  auto more = [&](const std::vector<measure::MeasureResult>& merged) {
    const FinalVerdict verdict = judge_finalists(merged, default_index, stored_index);
    std::size_t rounds = 0;
    for (const auto& result : merged) rounds = std::max(rounds, result.round_medians.size());
    if (note) note(fmt::format("  round {}: {}", rounds, verdict_text(verdict)));
    return verdict.is_unsettled() && !(stop && stop->load());
  };
  std::vector<measure::MeasureResult> results;
  auto records = run_batch(configs, "final", summary_.run_id, false, &results, kMinFinalRounds,
                               kMaxFinalRounds, more);
  check_environment(records);
  comparison.verdict = judge_finalists(results, default_index, stored_index);
  for (const auto& result : results)
    comparison.rounds = std::max(comparison.rounds, static_cast<int>(result.round_medians.size()));
  // The winner is marked in the database: later runs and readers stand by it until a config is
  // measured faster beyond noise (db::displaces_winner). Not a winner found on a busy machine: a
  // hog beside it ranks single-threaded configs above the parallel ones they lose to when quiet,
  // and a mark would keep such a config first against the later quiet run that measures better.
  const auto& verdict = comparison.verdict;
  const bool busy = db::is_busy(verdict.load, verdict.device_load);
  if (verdict.winner && !busy) records[*verdict.winner].winner = true;
  record(records);
  for (std::size_t i = 0; i < records.size(); ++i) {
    comparison.finalists[i].record = records[i];
    comparison.finalists[i].result = results[i];
  }
  if (note) note(fmt::format("  after {} rounds: {}", comparison.rounds, verdict_text(comparison.verdict)));
  summary_.comparison = std::move(comparison);
}

std::vector<db::TuningRecord> TaskSession::noisy_contenders() const {
  db::Database& database = measurer_.database();
  const db::TaskKey key = task_key(*task_);
  const auto best = database.best(key);
  // With one working config there is no order for the noise to have upset.
  if (!best || database.top_k(task_filter(key), 2).size() < 2) return {};
  // Configs whose latest record is one of this run's, noisy, and would be the best with its noise
  // taken off. The fastest first.
  std::vector<db::TuningRecord> contenders;
  std::set<std::string> seen;
  for (const auto& record : database.task_records(key)) {
    if (record.run_id != summary_.run_id || !record.ok() || !seen.insert(record.config_text()).second) continue;
    const auto latest = database.latest_success(key, record.config_text());
    if (!latest || !latest->is_noisy() || latest->run_id != summary_.run_id) continue;
    if (latest->median_seconds * (1 - noise_slack(*latest)) <= best->median_seconds) contenders.push_back(*latest);
  }
  std::sort(contenders.begin(), contenders.end(),
            [](const auto& a, const auto& b) { return a.median_seconds < b.median_seconds; });
  if (contenders.size() > kMaxNoisyRemeasures) contenders.resize(kMaxNoisyRemeasures);
  return contenders;
}

void TaskSession::wait_for_quiet(std::size_t contenders, const std::function<void(const std::string&)>& note,
                                 const std::atomic<bool>* stop) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double budget = std::min(kMaxQuietWaitSeconds, kQuietWaitShare * elapsed);
  bool said = false;
  for (double waited = 0; budget - waited >= kQuietProbeSeconds && !(stop && stop->load());
       waited += kQuietProbeSeconds) {
    // This machine's load, with nothing of ours running: the device's where it is measured here.
    const auto window = measure::LoadWindow::open(::getpid());
    std::this_thread::sleep_for(std::chrono::duration<double>(kQuietProbeSeconds));
    const auto load = window.close();
    if (!load || *load <= db::kBusyLoad) return;
    if (!said && note)
      note(fmt::format("machine busy ({:.0f}% of the CPU taken by others): waiting up to {:.0f} s before measuring "
                       "{} noisy configs again",
                       *load * 100, budget, contenders));
    said = true;
  }
}

void TaskSession::remeasure_finalists(std::size_t top, const std::vector<db::TuningRecord>& noisy) {
  // The database ranks each config by its latest record (Database::best). The first wave re-measures
  // the default and the best `top` other configs in interleaved rounds, so they are compared at one
  // time on a machine whose speed drifts. Re-measured finalists tend to come out slower than the
  // single lucky run that made them finalists, which can leave a config timed once ahead of all of
  // them: each later wave re-measures up to `top` such configs together with the fastest of the last
  // wave, until none is left. Each config is re-measured in one wave only (that fastest aside), so
  // the waves end.
  db::Database& database = measurer_.database();
  const db::TaskKey key = task_key(*task_);
  std::set<std::string> remeasured;  // config_text()
  std::optional<db::TuningRecord> fastest;  // of the last wave
  for (int wave = 0; wave < kMaxRemeasureWaves; ++wave) {
    std::vector<search_space::Config> configs;
    auto take = [&](const db::TuningRecord& record) {
      if (!remeasured.insert(record.config_text()).second) return false;
      auto config = readable_config(task_->space, record);
      if (config) configs.push_back(std::move(*config));
      return config.has_value();
    };
    if (wave == 0 && summary_.default_config->ok()) take(*summary_.default_config);
    std::size_t contenders = 0;
    if (wave == 0)
      for (const auto& record : noisy) contenders += take(record);
    if (fastest) configs.push_back(task_->space.from_json(fastest->config));
    std::size_t fresh = 0;
    for (const auto& record : database.top_k(task_filter(key), remeasured.size() + top))
      if (fresh < top && (!fastest || record.median_seconds < fastest->median_seconds) && take(record)) ++fresh;
    if (fresh + contenders == 0) break;
    if (configs.size() < 2) break;  // a lone config has nothing to be compared with
    fastest.reset();
    // Each config's rounds firm up its own time: on several GPUs, each takes configs of its own.
    auto records = run_batch(configs, "remeasure", summary_.run_id, false, nullptr, kRemeasureRounds,
                             kRemeasureRounds, measure::Runner::MoreRounds{}, measure::Rounds::kEachItsOwn);
    check_environment(records);
    record(records);
    if (wave == 0) {
      summary_.noisy_remeasured = contenders;
      for (const auto& remeasured : records)
        for (const auto& contender : noisy)
          if (remeasured.config_text() == contender.config_text() && remeasured.ok() && !remeasured.is_noisy())
            ++summary_.noisy_now_quiet;
    }
    for (auto& record : records)
      if (better(record, fastest)) fastest = std::move(record);
    if (!fastest) break;  // every one failed this time: nothing to compare the next wave with
  }
}

void TaskSession::note_noise(const std::vector<db::TuningRecord>& records) {
  for (const auto& record : records)
    if (record.ok() && record.is_noisy()) ++summary_.noisy;
  // The successful records' mean of one share where some know it, and the run's peak of it.
  auto note_mean = [&](std::optional<double> db::TuningRecord::*share, std::optional<double>& last,
                       std::optional<double>& peak) {
    double sum = 0;
    std::size_t known = 0;
    for (const auto& record : records)
      if (record.ok() && record.*share) {
        sum += *(record.*share);
        ++known;
      }
    last.reset();
    if (known == 0) return;
    last = sum / static_cast<double>(known);
    peak = std::max(peak.value_or(0), *last);
  };
  note_mean(&db::TuningRecord::load, last_batch_load_, summary_.peak_load);
  note_mean(&db::TuningRecord::device_load, last_batch_device_load_, summary_.peak_device_load);
}

void TaskSession::check_environment(const std::vector<db::TuningRecord>& records) {
  // A slow record passed its check: the environment worked.
  if (records.empty() || records.front().ok() || records.front().is_slow()) return;
  const std::string& kind = records.front().error_kind;
  for (const auto& record : records)
    if (record.error_kind != kind) return;
  // Every config of the batch failed alike. The default config, which works wherever the
  // environment does, tells whether the batch or the environment is to blame.
  std::optional<db::TuningRecord> probe = unrecorded_default_;
  for (const auto& record : records)
    if (!probe && record.config_text() == summary_.default_config->config_text()) probe = record;
  if (!probe) {
    auto config = task_->kernel_template->default_config(task_->workload, task_->device, task_->space);
    probe = run_batch(std::vector<search_space::Config>{config}, "default", summary_.run_id, true).front();  // not recorded
  }
  if (probe->error_kind != kind) return;
  // The default fails alike, as a kernel file's may on its own. A config that has worked for the
  // task tells whether the environment still works.
  if (known_good_ && known_good_->config_text() != probe->config_text()) {
    auto good = readable_config(task_->space, *known_good_);
    if (good && run_batch(std::vector<search_space::Config>{*good}, "probe", summary_.run_id, false).front().error_kind != kind) return;
  }
  std::string cause = probe->error_message.empty() ? records.front().error_message : probe->error_message;
  std::replace(cause.begin(), cause.end(), '\n', ' ');
  if (cause.size() > 300) cause = cause.substr(0, 297) + "...";
  if (kind == "wrong_answer" && task_->workload.op == kernels::Op::kKernel)
    throw KernelCheckFailure(fmt::format(
        "{}: the default config and all {} configs of the batch disagree with the check: {} (nothing of the batch "
        "recorded; check the kernel, its arguments and its reference or expected values)",
        task_->workload.key(), records.size(), cause));
  throw EnvironmentFailure(fmt::format(
      "{}: the default config and all {} configs of the batch failed with {}: {} (nothing of the batch recorded; "
      "fix the environment and run again)",
      task_->workload.key(), records.size(), kind, cause.empty() ? "no message" : cause));
}

void TaskSession::record(const std::vector<db::TuningRecord>& records) {
  std::vector<db::TuningRecord> batch;
  if (unrecorded_default_) batch.push_back(std::move(*unrecorded_default_));
  unrecorded_default_.reset();
  batch.insert(batch.end(), records.begin(), records.end());
  measurer_.record(batch);
}

}  // namespace optune::tuner
