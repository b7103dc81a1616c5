// Runner: measures built candidates on a device (MetaSchedule's Runner). Implementations:
// LocalRunner (an isolated worker process on this machine); later OpenCL and RPC runners.
#pragma once

#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

class Runner {
 public:
  virtual ~Runner() = default;
  // One result per input, in order; inputs whose build failed get that failure as their result.
  // Candidates are measured one at a time.
  virtual std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                         const std::vector<BuildResult>& builds) = 0;
};

}  // namespace optune::measure
