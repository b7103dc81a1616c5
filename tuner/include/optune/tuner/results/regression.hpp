// Regression check for CI (`optune regress`): per workload, the tuned config (best recorded) and
// the default config are measured again now and compared with each other and with the figure the
// database recorded for the tuned config. A tuned config that is now slower than the default, or
// slower than its recorded figure, beyond a tolerance, is a regression. The verdicts print as a
// table and as JUnit XML, which CI servers read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::tuner {

struct RegressionCase {
  std::string name;  // the suite's label of the workload
  std::string workload_key;
  std::optional<double> recorded_seconds;             // the tuned config's recorded median; none: never tuned here
  std::optional<measure::MeasureResult> tuned_now;    // the tuned config measured now
  std::optional<measure::MeasureResult> default_now;  // the default config measured now
  double seconds = 0;                                 // spent measuring this case
  int attempts = 1;  // times both configs were measured; tuned_now and default_now are the best of them
  std::string toolchain_change;  // the tuned record's toolchain against today's (toolchain_change.hpp); "" same or unknown
};

enum class Verdict { kPass, kRegression, kUntuned };

struct Judgement {
  Verdict verdict = Verdict::kPass;
  std::string reason;  // why it regressed, or a note ("default failed now: crash")
};

// tolerance: allowed relative slowdown, e.g. 0.05 for 5%. A regression measured on a busy machine
// or with a wide spread says so in its reason.
Judgement judge(const RegressionCase& c, double tolerance);

// The better of two measurements of one config: a successful one over a failure, the faster of
// two successful ones. Noise on a shared machine (other jobs, a CI runner's neighbours) only ever
// slows a run down, so regress measures a suspected regression again and keeps the best of each
// config: a regression is called only when it shows in every attempt.
measure::MeasureResult best_of(const std::optional<measure::MeasureResult>& kept, const measure::MeasureResult& now);

// The figure a tuned config is held to: the median over every successful measurement of that
// config in the task's records (one lucky minimum would make CI flaky), over its quiet ones
// alone where it has any (db::TuningRecord::is_noisy).
std::optional<double> recorded_figure(const db::Database& database, const db::TaskKey& task,
                                      const db::TuningRecord& best);

// JUnit XML: one <testcase> per workload, <failure> for regressions, <skipped> for untuned ones.
std::string junit_xml(const std::vector<RegressionCase>& cases, double tolerance, const std::string& suite_name);

}  // namespace optune::tuner
