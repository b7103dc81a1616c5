// LocalRunner: measures candidates of every backend in a separate worker process (optune-worker), one at a
// time, so that a segfault, an abort or an endless loop inside a candidate becomes a crash or
// timeout result and tuning goes on with a fresh worker. The worker keeps inputs and the
// reference result of a workload between candidates.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/measure/runner.hpp"
#include "optune/measure/subprocess.hpp"
#include "optune/measure/timing_policy.hpp"
#include "optune/measure/worker_messages.hpp"

namespace optune::measure {

struct LocalRunnerOptions {
  std::string worker_path;  // the optune-worker executable
  TimingPolicy timing;
  bool remove_artifacts = true;  // delete each shared object once measured
  std::string program_cache_dir;  // programs the worker compiles (OpenCL); "" = compile every candidate
  // Runs the worker under this command, e.g. {"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"} for
  // an aarch64 worker on another machine's CPU; empty: the worker runs directly.
  std::vector<std::string> launcher;
  // The device the worker measures on, in place of each task's target: one GPU of a tune spread
  // over several (DeviceSpreadRunner); "": the task's target.
  std::string device_target;
};

// A target that names no device where the worker runs (its message names the devices there are).
class NoSuchDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LocalRunner final : public Runner {
 public:
  explicit LocalRunner(LocalRunnerOptions options);
  ~LocalRunner() override;
  // The device the worker measures `target` on: for a CPU target the CPU it runs on (under its
  // launcher: the emulated one), for an OpenCL target that device. Throws NoSuchDeviceError when
  // the target names none there, std::runtime_error when the worker cannot tell.
  kernels::DeviceInfo describe_device(const std::string& target = "cpu");
  // Every device the worker can measure on: its CPU first, then each OpenCL device.
  std::vector<kernels::DeviceInfo> describe_devices();
  // One candidate, timed with the options' policy, or its comparison_policy where `comparing` (a
  // round of a comparison: is_comparing() of the runner whose round it is).
  MeasureResult measure_one(const MeasureInput& input, const BuildResult& build, bool comparing);
  // The generic step the RPC server reuses: measures `artifact` for a worker request (the
  // request's own timing policy applies) and returns the worker's reply; a crash, hang or
  // malformed reply becomes a reply with that status ("crash", "timeout", "runtime_error"). A kernel
  // file's reference runs first, on its own: one that crashes, hangs (past 10 candidate timeouts)
  // or fails makes a "reference_error" reply, for this and every later candidate of the problem.
  WorkerReply measure_request(WorkerRequest request, const std::string& artifact);

 private:
  std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds) override;
  Subprocess& worker();
  LocalRunnerOptions options_;
  std::unique_ptr<Subprocess> worker_;
  // Kernel files' problems whose reference failed (by workload and operands): the reply every
  // candidate gets.
  std::map<std::string, WorkerReply> failed_references_;
  // The load of the latest measurement that could tell it (LoadWindow::close).
  std::optional<double> recent_load_;
};

// The worker request of one input (without the artifact), and the result of a worker's reply to
// it: shared by LocalRunner and the RPC runner, whose server returns the worker's reply as is.
WorkerRequest worker_request(const MeasureInput& input, const TimingPolicy& timing, const std::string& cache_dir = "");
MeasureResult result_from_worker_reply(const MeasureInput& input, const WorkerReply& reply, const TimingPolicy& timing);

}  // namespace optune::measure
