// Runner: measures built candidates on a device (MetaSchedule's Runner). Implementations:
// LocalRunner (an isolated worker process on this machine) and rpc::RpcRunner (remote devices).
#pragma once

#include <functional>
#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

// What a run's rounds are for. kCompared: the candidates are compared with one another (the
// finalists'), so each round measures all of them on one device and a round's ratios are that
// device's. kEachItsOwn: each candidate's rounds only firm up its own time (a re-measurement of
// noisy records), so a runner of several devices may give each device candidates of its own.
enum class Rounds { kCompared, kEachItsOwn };

class Runner {
 public:
  virtual ~Runner() = default;
  // One result per input, in order; inputs whose build failed get that failure as their result.
  // Candidates are measured one at a time, the whole list `rounds` times over in turn (A B C,
  // A B C, ...), and each input's costs are merged over its rounds: a slow spell of a shared
  // machine then falls on every candidate of the list alike, not on whichever was timed during
  // it. A candidate that fails in any round is that failure. Each result keeps its rounds'
  // medians (round_medians) and their mean load. Artifacts are removed (when the runner's
  // options say so) after the last round.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 int rounds = 1);
  // Asked after each round, with the results merged so far (so it can show progress), whether one
  // more round is worth it; the answer counts from the `rounds`-th round on (the closing
  // comparison of finalists goes on while they are tied).
  using MoreRounds = std::function<bool(const std::vector<MeasureResult>& merged)>;
  // run(), then further rounds while `more` says so, up to `max_rounds` in all.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 int rounds, int max_rounds, const MoreRounds& more,
                                 Rounds kind = Rounds::kCompared);

 protected:
  explicit Runner(bool remove_artifacts) : remove_artifacts_(remove_artifacts) {}
  // Whether the run under way compares its candidates with one another (a run that may take
  // several rounds: the finalists' comparison) rather than ranking a batch (one round); run() sets
  // it before its first round. A comparison is timed with comparison_policy (timing_policy.hpp),
  // and a runner of several devices gives each a whole round of it.
  bool is_comparing() const { return comparing_; }
  // The run under way's Rounds (set by run() with comparing_).
  Rounds rounds_kind() const { return rounds_kind_; }
  // One round: each input measured once; artifacts are left in place.
  virtual std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                                   const std::vector<BuildResult>& builds) = 0;
  // Up to `at_most` rounds at once, each a list of results in the inputs' order: a runner of
  // several devices measures a comparison's whole list on each at the same time. One by default.
  virtual std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<MeasureInput>& inputs,
                                                                 const std::vector<BuildResult>& builds, int at_most) {
    (void)at_most;
    return {measure_round(inputs, builds)};
  }

 private:
  bool remove_artifacts_;
  bool comparing_ = false;  // set by run() before its first round
  Rounds rounds_kind_ = Rounds::kCompared;
};

}  // namespace optune::measure
