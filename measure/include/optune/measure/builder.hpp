// Builder: turns a batch of candidates into artifacts the runner can load (MetaSchedule's
// Builder). Implementations: LocalBuilder (compilers on this machine, cross compilers too),
// OpenCLBuilder (artifacts of source text that the worker compiles).
#pragma once

#include <string>
#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

// What builds a device's candidates, as their records keep it (db::TuningRecord::toolchain): the
// compiler with its version ("c++ (Debian 12.2.0-14) 12.2.0", "NVRTC 13.0", "OpenCL: Portable
// Computing Language, driver 5.0") and the flags the builder passes to every compile. A table
// tuned under one toolchain may be slower, or wrong, under the next.
struct Toolchain {
  std::string compiler;
  std::string flags;
};

class Builder {
 public:
  virtual ~Builder() = default;
  // One result per input, in order. Build failures are results, not exceptions.
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
  // The toolchain of `device`'s candidates; empty where the builder cannot tell.
  virtual Toolchain toolchain(const kernels::DeviceInfo& /*device*/) const { return {}; }
};

// Writes one of a builder's own files (a candidate's source, an artifact) whole. A failure is the
// environment's, not the candidate's (a full or read-only TMPDIR): it throws EnvironmentFailure
// naming the file and the system's reason.
void write_build_file(const std::string& path, const std::string& text);

}  // namespace optune::measure
