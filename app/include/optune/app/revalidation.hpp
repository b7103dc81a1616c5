// Revalidating tuned tables after a toolchain change (`optune revalidate`, issue 38). Per workload
// with a stored best on the target's device, that best's record is held to today's toolchain
// (tuner/results/toolchain_change.hpp). Where it was built by another one, or by one it does not
// name (records of schema 5 or older), the stored best and the template's default are measured
// again as `regress` measures them, and the verdict (tuner/results/revalidation.hpp) decides:
// a best that holds keeps its place, now recorded under today's toolchain; a regressed or broken
// one is tuned again on a budget through the tuning loop `tune` runs (the old toolchain's fastest
// configs first), then its run's fastest, the old config and the default are measured together,
// and the fastest is recorded as the workload's best. Every
// measurement is a record (tuner "revalidate"), so a second run finds these entries current.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tuning.hpp"
#include "optune/db/tuning_record.hpp"
#include "optune/tuner/results/regression.hpp"
#include "optune/tuner/results/revalidation.hpp"
#include "optune/tuner/scheduling/progress.hpp"
#include "optune/tuner/scheduling/tuning_loop.hpp"

namespace optune::app {

// Trials of each regressed or broken entry's tuning again, at most: half a first tuning's default
// (64). The first measure the old toolchain's fastest configs again under today's; the model, which
// learns from all of the task's records, picks the rest among configs never measured, until
// kRetuneEarlyStop of its trials in a row find nothing faster. A change that leaves the old
// ranking standing costs a dozen trials; one that reorders it (another compiler) more.
inline constexpr std::size_t kRetuneTrials = 32;
inline constexpr std::size_t kRetuneEarlyStop = 8;

struct RevalidateRequest {
  std::string suite;                // the workloads: a suite file's ...
  std::string layout;               // (--layout: replaces the suite's)
  std::string op = "gemm";          // ... and/or one --op --shape ...
  std::string shape;
  std::vector<std::string> workloads;  // ... and/or workload keys ("gemm.f32.M64.N64.K64")
  std::string target = "cpu";
  std::string database = kDefaultDatabase;
  double tolerance = 0.05;  // allowed slowdown, as a share
  int attempts = 3;         // measurements of an entry before a regression is called
  bool all = false;         // measure entries of today's toolchain too
  bool wait_lock = false;
  tuner::TuningOptions retune = [] {
    tuner::TuningOptions options;
    options.trials = kRetuneTrials;
    return options;
  }();
  MeasureSettings measuring;  // its target is `target`
};

// A regressed or broken entry tuned again.
struct Retune {
  std::string run_id;     // the tuning run's
  std::size_t trials = 0;
  // The closing measurement's records (tuner "revalidate"): the new best (marked the winner), the
  // old config where it still builds (nullopt: broken), the default; nullopt where it failed.
  std::optional<db::TuningRecord> best;
  std::optional<db::TuningRecord> old_config;
  std::optional<db::TuningRecord> default_config;
  std::optional<double> speedup_over_old;  // old config's time / new best's, round by round
  tuner::RevalidationJudgement after;      // the entry's verdict after tuning again
};

struct RevalidationEntry {
  std::string name;  // the suite's label, or the workload key
  std::string workload_key;
  std::string template_name;
  tuner::RevalidationJudgement verdict;
  // The stored best's recorded figure and, where measured, it and the default now (best of
  // attempts); seconds spent on the entry, re-tuning included.
  tuner::RegressionCase measured;
  nlohmann::json config;            // the stored best's config; null: untuned
  nlohmann::json toolchain_before;  // its record's toolchain; null: unknown
  std::string toolchain_change;     // tuner::toolchain_difference; "" the same
  std::optional<Retune> retune;
  // Still regressed or broken: after its re-tune, or without one.
  bool is_failing() const;
};

struct RevalidateOutcome {
  std::string suite_name;  // the suite's name, or "workloads"
  std::string target;
  std::string device;
  measure::Toolchain toolchain;  // today's
  double tolerance = 0.05;
  std::vector<RevalidationEntry> entries;
  double seconds = 0;
  std::size_t count(tuner::Revalidation status) const;
  std::size_t retuned() const;
  std::size_t failing() const;
};

// Throws BadInput for what can be checked before anything is measured: no workloads, a malformed
// shape or key, a kernel file's key outside a suite, a tolerance or attempts out of range.
void check_revalidate_request(const RevalidateRequest& request);

// Holds the device's lock and the database for its whole length (run_locks.hpp); `log` takes the
// waiting line; `on_entry` sees each entry as it is done (a table printed as it goes).
RevalidateOutcome revalidate(const RevalidateRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                             const std::function<void(const std::string&)>& log = nullptr,
                             const std::function<void(const RevalidationEntry&)>& on_entry = nullptr);

// One object: suite, target, device, tolerance, toolchain_now, seconds, counts (current, holds,
// regressed, broken, untuned, retuned, failing) and entries, each with name, workload, template,
// status, reason, config, recorded_seconds, now_seconds, default_seconds, attempts,
// toolchain_before, toolchain_change, retuned, retune (null, or run_id, trials, best, old_config
// and default as records, speedup_over_old, status_after, reason_after), failing, seconds.
nlohmann::json outcome_json(const RevalidateOutcome& outcome);

// JUnit XML: a test case per workload, failed where still regressed or broken, skipped where untuned.
std::string junit_xml(const RevalidateOutcome& outcome);

}  // namespace optune::app
