// The OpenCL backend: candidates are .cl programs with the config's knobs as -D options
// (backends/opencl/kernels), compiled by the worker for its device through the program cache, and
// timed with profiling events. Targets: "opencl" (the first device) and
// "opencl:<platform>:<device>" (index or name substring of each).
#pragma once

#include <memory>

#include "optune/measure/backend.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends {

const measure::Backend& opencl_backend();
std::unique_ptr<measure::WorkerBackend> make_opencl_worker();

}  // namespace optune::backends
