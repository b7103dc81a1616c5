#include "optune/db/tuning_record.hpp"

#include <cstdio>

namespace optune::db {

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
