#include "optune/measure/timing_policy.hpp"

#include <algorithm>

namespace optune::measure {

TimingPolicy comparison_policy(TimingPolicy policy) {
  policy.min_repeat_ms = std::max(policy.min_repeat_ms, policy.comparison_min_repeat_ms);
  return policy;
}

nlohmann::json to_json(const TimingPolicy& policy) {
  return {{"warmup", policy.warmup},
          {"number", policy.number},
          {"repeat", policy.repeat},
          {"min_repeat_ms", policy.min_repeat_ms},
          {"comparison_min_repeat_ms", policy.comparison_min_repeat_ms},
          {"timeout_seconds", policy.timeout_seconds},
          {"max_relative_error", policy.max_relative_error},
          {"bail_out", policy.bail_out},
          {"adaptive", policy.adaptive}};
}

TimingPolicy timing_policy_from_json(const nlohmann::json& json) {
  TimingPolicy policy;
  policy.warmup = json.value("warmup", policy.warmup);
  policy.number = json.value("number", policy.number);
  policy.repeat = json.value("repeat", policy.repeat);
  policy.min_repeat_ms = json.value("min_repeat_ms", policy.min_repeat_ms);
  // A peer that predates it sends none: its comparisons are timed as its batches.
  policy.comparison_min_repeat_ms = json.value("comparison_min_repeat_ms", 0.0);
  policy.timeout_seconds = json.value("timeout_seconds", policy.timeout_seconds);
  policy.max_relative_error = json.value("max_relative_error", policy.max_relative_error);
  // A peer that predates these fields times every candidate in full.
  policy.bail_out = json.value("bail_out", 0.0);
  policy.adaptive = json.value("adaptive", false);
  return policy;
}

}  // namespace optune::measure
