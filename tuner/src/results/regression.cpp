#include "optune/tuner/results/regression.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "optune/tuner/results/junit.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

// Why a measurement taken now is not to be trusted as it stands; "" when it is.
std::string noise_of(const std::optional<measure::MeasureResult>& result) {
  if (!result || !result->ok()) return "";
  return db::noise_text(trust_fields(*result));
}

// The verdict of the measurements as they are.
Judgement judge_once(const RegressionCase& c, double tolerance) {
  if (!c.recorded_seconds) return {Verdict::kUntuned, "no tuned config recorded for this device; runs the default"};
  if (!c.tuned_now || !c.tuned_now->ok())
    return {Verdict::kRegression,
            "the tuned config fails now: " +
                (c.tuned_now ? std::string(measure::error_kind_name(c.tuned_now->error)) + " " + c.tuned_now->message
                             : std::string("not measured"))};
  const double now = c.tuned_now->median_seconds;
  const double limit = 1 + tolerance;
  if (now > *c.recorded_seconds * limit)
    return {Verdict::kRegression,
            fmt::format("tuned config {:.4f} ms now against its recorded {:.4f} ms: speed-up {} (tolerance {:.0f}%)",
                        now * 1e3, *c.recorded_seconds * 1e3, speedup_text(*c.recorded_seconds, now), tolerance * 100)};
  if (c.default_now && c.default_now->ok() && now > c.default_now->median_seconds * limit)
    return {Verdict::kRegression,
            fmt::format("tuned config {:.4f} ms is slower than the default's {:.4f} ms (tolerance {:.0f}%)", now * 1e3,
                        c.default_now->median_seconds * 1e3, tolerance * 100)};
  if (c.default_now && !c.default_now->ok())
    return {Verdict::kPass,
            "the default config fails now: " + std::string(measure::error_kind_name(c.default_now->error))};
  return {Verdict::kPass, ""};
}

}  // namespace

Judgement judge(const RegressionCase& c, double tolerance) {
  Judgement judgement = judge_once(c, tolerance);
  if (judgement.verdict != Verdict::kRegression) return judgement;
  if (c.attempts > 1) judgement.reason += fmt::format(" (best of {} measurements)", c.attempts);
  // A verdict from a busy machine is said to be one: the CI log shows why it may not hold.
  for (const auto& [what, result] : {std::pair{"tuned", &c.tuned_now}, std::pair{"default", &c.default_now}})
    if (const std::string noise = noise_of(*result); !noise.empty())
      judgement.reason += fmt::format("; noisy: the {} config {}", what, noise);
  return judgement;
}

measure::MeasureResult best_of(const std::optional<measure::MeasureResult>& kept, const measure::MeasureResult& now) {
  if (!kept) return now;
  if (kept->ok() != now.ok()) return kept->ok() ? *kept : now;
  if (!now.ok()) return *kept;  // both failed: the first failure's message
  return now.median_seconds < kept->median_seconds ? now : *kept;
}

std::optional<double> recorded_figure(const db::Database& database, const db::TaskKey& task,
                                      const db::TuningRecord& best) {
  std::vector<double> medians, quiet_medians;
  const std::string config = best.config_text();
  for (const auto& record : database.task_records(task)) {
    if (!record.ok() || record.config_text() != config) continue;
    medians.push_back(record.median_seconds);
    if (!record.is_noisy()) quiet_medians.push_back(record.median_seconds);
  }
  // Measurements of a busy machine count only where there is nothing else to go by.
  if (!quiet_medians.empty()) medians = std::move(quiet_medians);
  if (medians.empty()) return std::nullopt;
  std::sort(medians.begin(), medians.end());
  const std::size_t middle = medians.size() / 2;
  return medians.size() % 2 ? medians[middle] : (medians[middle - 1] + medians[middle]) / 2;
}

std::string junit_xml(const std::vector<RegressionCase>& cases, double tolerance, const std::string& suite_name) {
  std::vector<JUnitCase> junit;
  for (const auto& c : cases) {
    const Judgement judgement = judge(c, tolerance);
    const auto outcome = judgement.verdict == Verdict::kPass         ? JUnitCase::Outcome::kPassed
                         : judgement.verdict == Verdict::kRegression ? JUnitCase::Outcome::kFailed
                                                                     : JUnitCase::Outcome::kSkipped;
    junit.push_back({c.workload_key, c.seconds, outcome, "regression", judgement.reason});
  }
  return tuner::junit_xml("regress", suite_name, junit);
}

}  // namespace optune::tuner
