// The OpenCL side of the worker: keeps a context and queue for the target's device and device
// buffers for the current workload between requests; per candidate it reads the artifact,
// compiles it through the program cache, uploads the inputs (timed), runs it once on a poisoned
// output, reads the output back (timed) and checks it against the reference, then times the
// kernel with profiling events under the timing policy.
// Request fields beyond the CPU ones: "backend": "opencl", "target": "opencl:...",
// "cache_dir": "..." ("" for none). Reply fields beyond the CPU ones: "build_seconds",
// "program_cached", "transfer": {"write_seconds", "read_seconds", "write_bytes", "read_bytes"}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "opencl_api.hpp"
#include "optune/measure/timing_policy.hpp"
#include "worker_operands.hpp"

namespace optune::measure {

class OpenCLWorker {
 public:
  nlohmann::json measure(const nlohmann::json& request, const Operands& operands, const TimingPolicy& policy);

 private:
  void open(const std::string& target_text);
  void allocate_buffers(const Operands& operands);
  nlohmann::json measure_candidate(const nlohmann::json& request, const Operands& operands,
                                   const TimingPolicy& policy);

  std::string target_;  // the device the context is for; "" = none yet (or lost)
  cl::SelectedDevice device_;
  cl::Context context_;
  cl::Queue queue_;
  std::string buffers_for_;  // workload key of the device buffers
  std::vector<cl::Buffer> inputs_;
  cl::Buffer output_;
};

}  // namespace optune::measure
