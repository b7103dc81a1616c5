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

namespace {

// The share others took of the device that ran the candidate: the GPU's where it has a figure of
// its own, else the host's (the CPU is the device, or the device has no figure: OpenCL).
double device_share(std::optional<double> load, std::optional<double> device_load) {
  return device_load ? *device_load : load.value_or(0);
}

}  // namespace

bool is_busy(std::optional<double> load, std::optional<double> device_load) {
  return device_share(load, device_load) > kBusyLoad;
}

double busy_share(std::optional<double> load, std::optional<double> device_load) {
  return std::clamp(device_share(load, device_load), 0.0, kMaxBusyShare);
}

double quiet_gflops_estimate(double gflops, std::optional<double> load, std::optional<double> device_load) {
  return gflops / (1 - busy_share(load, device_load));
}

std::string busy_text(std::optional<double> load, std::optional<double> device_load) {
  if (!is_busy(load, device_load)) return "";
  char text[96];
  if (device_load)
    std::snprintf(text, sizeof text, "other processes took %.0f%% of the GPU", *device_load * 100);
  else
    std::snprintf(text, sizeof text, "other processes took %.0f%% of the CPU", *load * 100);
  return text;
}

std::string noise_text(const TuningRecord& record) {
  if (!record.is_noisy()) return "";
  if (is_busy(record.load, record.device_load)) return "measured while " + busy_text(record.load, record.device_load);
  char text[64];
  std::snprintf(text, sizeof text, "its median is known to +-%.0f%% only", record.spread.value_or(0) * 100);
  return text;
}

}  // namespace optune::db
