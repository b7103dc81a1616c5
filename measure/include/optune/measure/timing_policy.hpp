// How a candidate is timed (DESIGN.md): warm-up runs, then `repeat` repeats of `number` back to
// back runs each; `number` grows until one repeat lasts at least min_repeat_ms, so fast kernels are
// not timed at clock resolution. The reported cost is the median over repeats.
#pragma once

#include <nlohmann/json.hpp>

namespace optune::measure {

struct TimingPolicy {
  int warmup = 1;
  int number = 0;            // runs per repeat; 0 means chosen from min_repeat_ms
  int repeat = 5;
  double min_repeat_ms = 40;
  double timeout_seconds = 30;  // whole candidate: check and timing; past it the worker is killed
  double max_relative_error = 1e-4;  // relative L2 against the reference, else wrong_answer
};

nlohmann::json to_json(const TimingPolicy& policy);
TimingPolicy timing_policy_from_json(const nlohmann::json& json);

}  // namespace optune::measure
