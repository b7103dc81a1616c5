// The CUDA backend: candidates are CUDA C++ compiled by NVRTC on the host (optune-nvrtc, one
// process per compile, cubins cached on disk) for the device's architecture, loaded by the worker
// through the driver API and timed with CUDA events. The driver and NVRTC are loaded at run time,
// so a machine without them builds and runs everything else; there `--target cuda` is bad input
// naming what is missing. Targets: "cuda" (device 0) and "cuda:<ordinal>".
#pragma once

#include <memory>

#include "optune/measure/backend.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends {

const measure::Backend& cuda_backend();
std::unique_ptr<measure::WorkerBackend> make_cuda_worker();

}  // namespace optune::backends
