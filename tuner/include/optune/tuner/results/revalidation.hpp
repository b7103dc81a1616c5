// Verdicts of `optune revalidate`: whether a stored best, tuned under another (or an unknown)
// toolchain, still serves under today's. Its stored best and the template's default are measured
// again as `regress` measures them (regression.hpp: the best of --attempts, each config's recorded
// figure the median of its records); the verdict decides whether the workload is tuned again.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "optune/measure/measure_result.hpp"
#include "optune/tuner/results/regression.hpp"

namespace optune::tuner {

enum class Revalidation {
  kCurrent,    // the stored best was built by today's toolchain: not measured
  kHolds,      // measured now, not slower than its recorded figure nor the default beyond the tolerance
  kRegressed,  // slower beyond the tolerance than its recorded figure or than the default, in every attempt
  kBroken,     // fails now: no longer builds, fails its check, crashes or times out (the error kind says which)
  kUntuned,    // no stored best on this device: nothing to revalidate (revalidate is not tune)
};

// "current", "holds", "regressed", "broken", "untuned".
std::string_view revalidation_name(Revalidation status);

struct RevalidationJudgement {
  Revalidation status = Revalidation::kHolds;
  std::string reason;  // why it regressed or broke, or a note; "" for a plain hold
};

// The verdict on a stored best measured again (c.recorded_seconds set): broken where the tuned
// config fails now, else regress's judgement with `tolerance` (0.05: 5%).
RevalidationJudgement judge_revalidation(const RegressionCase& c, double tolerance);

// The verdict after a regressed or broken entry was tuned again, from the closing measurement of
// its new best and the default: broken where no config works, regressed where the new best is
// slower than the default beyond `tolerance`, else holds.
RevalidationJudgement judge_retuned(const std::optional<measure::MeasureResult>& new_best,
                                    const std::optional<measure::MeasureResult>& default_now, double tolerance);

}  // namespace optune::tuner
