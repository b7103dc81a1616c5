// Builder: turns a batch of candidates into artifacts the runner can load (MetaSchedule's
// Builder). Implementations: LocalBuilder (compilers on this machine, cross compilers too).
#pragma once

#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

class Builder {
 public:
  virtual ~Builder() = default;
  // One result per input, in order. Build failures are results, not exceptions.
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
};

}  // namespace optune::measure
