// The line-based JSON protocol between LocalRunner and optune-worker, and the worker's loop.
// Request:  {"artifact": "/path/cand.so", "workload": "<key>", "timing": {...}, "seed": 1}
// Response: {"status": "ok"|"wrong_answer"|"runtime_error", "costs": [...], "error": 1e-7,
//            "message": "..."}
// Describe: {"describe": true} -> {"status": "ok", "device": <this worker's CPU>,
//            "devices": [<the CPU>, <every OpenCL device>]} (fingerprints);
//           {"describe": true, "target": "opencl:0:0"} -> {"status": "ok", "device": <that device>}, or
//            {"status": "no_device", "message": "... (devices: ...)"} when the target names none here.
// A crash or hang shows up on the runner's side as a dead or silent worker.
#pragma once

#include <iosfwd>

namespace optune::measure {

// Serves requests from `in` until end of file; returns the process exit code.
int run_worker_loop(std::istream& in, std::ostream& out);

}  // namespace optune::measure
