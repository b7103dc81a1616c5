#include "optune/db/tuning_record.hpp"

#include <cstdio>

namespace optune::db {

bool is_faster_beyond_noise(const TuningRecord& challenger, const TuningRecord& incumbent) {
  return challenger.median_seconds * (1 + challenger.spread.value_or(0)) <
         incumbent.median_seconds * (1 - incumbent.spread.value_or(0));
}

bool are_tied(const TuningRecord& a, const TuningRecord& b) {
  return !is_faster_beyond_noise(a, b) && !is_faster_beyond_noise(b, a);
}

bool displaces_winner(const TuningRecord& fastest, const TuningRecord& mark, const TuningRecord& latest) {
  // The comparison that declared the winner already weighed its own finalists, round by round.
  const bool of_that_comparison = fastest.run_id == mark.run_id && fastest.tuner == mark.tuner;
  const bool measured_after = fastest.timestamp > mark.timestamp;
  return measured_after && !of_that_comparison && !fastest.is_noisy() && is_faster_beyond_noise(fastest, latest);
}

std::string noise_text(const TuningRecord& record) {
  if (!record.is_noisy()) return "";
  char text[128];
  if (record.load && *record.load > kBusyLoad)
    std::snprintf(text, sizeof text, "measured while other processes took %.0f%% of the CPU", *record.load * 100);
  else
    std::snprintf(text, sizeof text, "its median is known to +-%.0f%% only", record.spread.value_or(0) * 100);
  return text;
}

}  // namespace optune::db
