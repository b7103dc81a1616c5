// The worker's loop (optune-worker): serves WorkerRequests and DescribeRequests
// (worker_messages.hpp) read from `in`, one JSON line each, until end of file, measuring each
// candidate with the backend its target names: the output is poisoned, the candidate run once and
// checked against the reference, warmed up, then timed as the timing policy says.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "optune/measure/worker_backend.hpp"

namespace optune::measure {

// Returns the process exit code. The first backend's first device is the worker's own device.
int run_worker_loop(std::istream& in, std::ostream& out, std::vector<std::unique_ptr<WorkerBackend>> backends);

}  // namespace optune::measure
