// Builder: turns a batch of candidates into artifacts the runner can load (MetaSchedule's
// Builder). Implementations: LocalBuilder (compilers on this machine, cross compilers too),
// OpenCLBuilder (artifacts of source text that the worker compiles).
#pragma once

#include <string>
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

// Writes one of a builder's own files (a candidate's source, an artifact) whole. A failure is the
// environment's, not the candidate's (a full or read-only TMPDIR): it throws EnvironmentFailure
// naming the file and the system's reason.
void write_build_file(const std::string& path, const std::string& text);

}  // namespace optune::measure
