// The measuring parts of a command that measures on this machine (tune, job run, regress): a
// builder (parallel C++ compiles for CPU targets; OpenCL candidates become artifact files) and a
// local runner (isolated worker), made once from the command's settings and shared by all its
// tasks.
#pragma once

#include <memory>
#include <string>

#include "optune/measure/builder.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::cli {

struct MeasureSettings {
  std::string target = "cpu";  // chooses the builder
  measure::TimingPolicy timing;
  int jobs = 0;                  // parallel compiles; 0: all cores
  double compile_timeout = 120;  // seconds
  std::string compiler = "c++";
};

struct Measuring {
  std::unique_ptr<measure::Builder> builder;
  measure::LocalRunner runner;
  explicit Measuring(const MeasureSettings& settings);
};

}  // namespace optune::cli
