// The line-based JSON protocol between LocalRunner and optune-worker, and the worker's loop.
// Request:  {"artifact": "/path/cand.so", "workload": "<key>", "timing": {...}, "seed": 1}
// Response: {"status": "ok"|"wrong_answer"|"runtime_error", "costs": [...], "error": 1e-7,
//            "message": "..."}
// Describe: {"describe": true} -> {"status": "ok", "device": <fingerprint of this worker's CPU>}
// A crash or hang shows up on the runner's side as a dead or silent worker.
#pragma once

#include <iosfwd>

namespace optune::measure {

// Serves requests from `in` until end of file; returns the process exit code.
int run_worker_loop(std::istream& in, std::ostream& out);

}  // namespace optune::measure
