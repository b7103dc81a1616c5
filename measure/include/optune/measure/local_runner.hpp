// LocalRunner: measures CPU and OpenCL candidates in a separate worker process (optune-worker), one at a
// time, so that a segfault, an abort or an endless loop inside a candidate becomes a crash or
// timeout result and tuning goes on with a fresh worker. The worker keeps inputs and the
// reference result of a workload between candidates.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/measure/runner.hpp"
#include "optune/measure/subprocess.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::measure {

struct LocalRunnerOptions {
  std::string worker_path;  // the optune-worker executable
  TimingPolicy timing;
  bool remove_artifacts = true;  // delete each shared object once measured
  std::string opencl_cache_dir;  // OpenCL program binaries; "" = compile every candidate
  // Runs the worker under this command, e.g. {"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"} for
  // an aarch64 worker on another machine's CPU; empty: the worker runs directly.
  std::vector<std::string> launcher;
};

class LocalRunner final : public Runner {
 public:
  explicit LocalRunner(LocalRunnerOptions options);
  ~LocalRunner() override;
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;
  // The fingerprint of the CPU the worker runs on (under its launcher: the emulated one).
  kernels::DeviceInfo describe_device();
  MeasureResult measure_one(const MeasureInput& input, const BuildResult& build);
  // The generic step the RPC server reuses: measures `artifact` for a worker request (the
  // request's own timing policy applies) and returns the worker's reply; a crash, hang or
  // malformed reply becomes a reply with that status ("crash", "timeout", "runtime_error").
  nlohmann::json measure_request(const nlohmann::json& request, const std::string& artifact);

 private:
  Subprocess& worker();
  LocalRunnerOptions options_;
  std::unique_ptr<Subprocess> worker_;
};

// The worker request of one input (without the artifact), and the result of a worker's reply to
// it: shared by LocalRunner and the RPC runner, whose server returns the worker's reply as is.
nlohmann::json worker_request(const MeasureInput& input, const TimingPolicy& timing,
                              const std::string& opencl_cache_dir = "");
MeasureResult result_from_worker_reply(const MeasureInput& input, const nlohmann::json& reply);

}  // namespace optune::measure
