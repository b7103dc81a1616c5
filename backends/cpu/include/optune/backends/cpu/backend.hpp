// The CPU backend: C++ candidates instantiating the kernel headers (optune/kernels/cpu), compiled
// into shared objects (cross-compiled for "cpu:<triple>" targets, measured over RPC) and called in
// the worker's process.
#pragma once

#include <memory>

#include "optune/measure/backend.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends {

const measure::Backend& cpu_backend();
std::unique_ptr<measure::WorkerBackend> make_cpu_worker();

}  // namespace optune::backends
