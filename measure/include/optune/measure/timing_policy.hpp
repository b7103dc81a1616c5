// How a candidate is timed (DESIGN.md): warm-up runs, then `repeat` repeats of `number` back to
// back runs each; `number` is the whole number of runs nearest to min_repeat_ms (at least one), so
// fast kernels are not timed at clock resolution (a run that sizes it at one, being about that long
// already, is the first repeat). The reported cost is the median over repeats.
//
// A candidate sent with the task's best time so far (WorkerRequest::best_seconds) is timed only as
// long as its rank needs: where even its fastest reading is over `bail_out` times that best, timing
// stops and the candidate is `slow` (a first run over twice that stops it before any repeat); the
// run that sized the repeats, where it is not the first repeat, counts as a reading: a burst of
// load that doubles the first repeat of the eventual winner does not discard it;
// with `adaptive`, its timing also ends once it is clearly not the best (its fastest reading over
// kClearlySlowerAfter[r - 1] times the best after r repeats: the further off, the sooner) or once
// its median is known well enough to rank it (after kSettledRepeats repeats within
// kSettledSpread of each other). Candidates sent without a best (the default, the closing
// re-measurements) get every repeat; a run's first batch is sent with the default's time and the
// bail-out off (MeasureInput::may_cut).
//
// A comparison (a Runner::run of several rounds: the finalists', whose figures a run reports) times
// its repeats to comparison_min_repeat_ms where that is longer (comparison_policy): a
// GPU at full load lowers its clock within tens of milliseconds, so short repeats, good enough to
// rank a batch, would report its boost clock's throughput rather than the sustained one.
#pragma once

#include <nlohmann/json.hpp>

namespace optune::measure {

struct TimingPolicy {
  int warmup = 1;
  int number = 0;            // runs per repeat; 0 means chosen from min_repeat_ms
  int repeat = 5;
  double min_repeat_ms = 40;
  // A comparison's shortest repeat, in milliseconds (comparison_policy); 0, or any length under
  // min_repeat_ms: min_repeat_ms. Longer where short repeats flatter a device (a GPU near its boost
  // clock): a comparison gives a run's headline figures, held against peers timed in sustained batches.
  double comparison_min_repeat_ms = 0;
  double timeout_seconds = 30;  // whole candidate: check and timing; past it the worker is killed
  double max_relative_error = 1e-4;  // relative L2 against the reference, else wrong_answer
  double bail_out = 2;   // 0: never cut a candidate as slow
  bool adaptive = true;  // false: every repeat for every candidate that is not slow
};

// How much slower than the best a candidate's fastest repeat must be, after 1, 2 and 3 repeats,
// for an adaptive timing to end there: beyond the 3-10% that repeats of one config spread on a
// busy machine, by a wide margin while few repeats are in.
inline constexpr double kClearlySlowerAfter[] = {1.5, 1.3, 1.15};
// Repeats after which an adaptive timing may end however close the candidate is to the best, where
// they lie within kSettledSpread of each other (max / min - 1): more would move its median by less
// than its rank's uncertainty against a best timed the same way.
inline constexpr int kSettledRepeats = 3;
inline constexpr double kSettledSpread = 0.02;
// The bail-out factors a user may give (0 is off): at 1 or below the best itself would be cut.
inline constexpr double kMinBailOut = 1.1;
inline constexpr double kMaxBailOut = 1000;

// The policy a comparison times with: `policy` with repeats of about comparison_min_repeat_ms.
TimingPolicy comparison_policy(TimingPolicy policy);

nlohmann::json to_json(const TimingPolicy& policy);
TimingPolicy timing_policy_from_json(const nlohmann::json& json);

}  // namespace optune::measure
