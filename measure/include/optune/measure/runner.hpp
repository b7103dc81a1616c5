// Runner: measures built candidates on a device (MetaSchedule's Runner). Implementations:
// LocalRunner (an isolated worker process on this machine) and rpc::RpcRunner (remote devices).
#pragma once

#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

class Runner {
 public:
  virtual ~Runner() = default;
  // One result per input, in order; inputs whose build failed get that failure as their result.
  // Candidates are measured one at a time, the whole list `rounds` times over in turn (A B C,
  // A B C, ...), and each input's costs are merged over its rounds: a slow spell of a shared
  // machine then falls on every candidate of the list alike, not on whichever was timed during
  // it. A candidate that fails in any round is that failure. Artifacts are removed (when the
  // runner's options say so) after the last round.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds,
                                 int rounds = 1);

 protected:
  explicit Runner(bool remove_artifacts) : remove_artifacts_(remove_artifacts) {}
  // One round: each input measured once; artifacts are left in place.
  virtual std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                                   const std::vector<BuildResult>& builds) = 0;

 private:
  bool remove_artifacts_;
};

}  // namespace optune::measure
