#include "optune/tuner/results/revalidation.hpp"

#include <fmt/format.h>

namespace optune::tuner {

std::string_view revalidation_name(Revalidation status) {
  switch (status) {
    case Revalidation::kCurrent:
      return "current";
    case Revalidation::kHolds:
      return "holds";
    case Revalidation::kRegressed:
      return "regressed";
    case Revalidation::kBroken:
      return "broken";
    case Revalidation::kUntuned:
      return "untuned";
  }
  return "unknown";
}

RevalidationJudgement judge_revalidation(const RegressionCase& c, double tolerance) {
  if (!c.recorded_seconds) return {Revalidation::kUntuned, "no tuned config recorded for this device"};
  if (!c.tuned_now || !c.tuned_now->ok()) {
    if (!c.tuned_now) return {Revalidation::kBroken, "the tuned config was not measured"};
    // The compiler's output runs to many lines: its first says enough in a table or a JUnit message.
    const std::string& message = c.tuned_now->message;
    const std::string first_line = message.substr(0, message.find('\n'));
    return {Revalidation::kBroken, std::string(measure::error_kind_name(c.tuned_now->error)) +
                                       (first_line.empty() ? "" : ": " + first_line)};
  }
  const Judgement judgement = judge(c, tolerance);
  if (judgement.verdict == Verdict::kRegression) return {Revalidation::kRegressed, judgement.reason};
  return {Revalidation::kHolds, judgement.reason};
}

RevalidationJudgement judge_retuned(const std::optional<measure::MeasureResult>& new_best,
                                    const std::optional<measure::MeasureResult>& default_now, double tolerance) {
  if (!new_best || !new_best->ok()) return {Revalidation::kBroken, "no config builds and passes its check now"};
  if (default_now && default_now->ok() && new_best->median_seconds > default_now->median_seconds * (1 + tolerance))
    return {Revalidation::kRegressed,
            fmt::format("the new best {:.4f} ms is slower than the default's {:.4f} ms (tolerance {:.0f}%)",
                        new_best->median_seconds * 1e3, default_now->median_seconds * 1e3, tolerance * 100)};
  return {Revalidation::kHolds, ""};
}

}  // namespace optune::tuner
