// The worker side of a backend: what the one check-and-time loop (worker_loop.hpp) cannot do by
// itself. A backend finds its devices, puts a workload's operands on a device, loads a candidate,
// launches it and waits for it, and reads its output back; the loop poisons, checks, warms up
// and times the same way for every backend.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"
#include "optune/measure/worker_messages.hpp"
#include "optune/measure/worker_operands.hpp"

namespace optune::measure {

// One candidate, loaded on its device with the workload's inputs in place.
class LoadedCandidate {
 public:
  virtual ~LoadedCandidate() = default;
  // Before a checked run the loop has written the poison into the outputs' host bytes in
  // Operands::values (NaN, or a byte pattern for integers, so that a candidate leaving some
  // element unwritten cannot pass) and restored the inputs; the candidate puts every operand's
  // host bytes, guards included, where it reads them (a no-op for a candidate that runs on the
  // host bytes themselves).
  virtual void poison_output() = 0;
  // Launches the candidate `times` times back to back and waits for all: seconds per run on the
  // backend's clock (the host's for the CPU; the device's profiling events for OpenCL).
  virtual double run(int times) = 0;
  // Copies every output of the last run, guard included, into its host bytes in
  // Operands::values (a no-op for a candidate that runs on those bytes).
  virtual void fetch_outputs() {}
  // What the reply says beyond the loop's fields: compile time, transfers.
  virtual void describe(WorkerReply& /*reply*/) const {}
};

class WorkerBackend {
 public:
  virtual ~WorkerBackend() = default;
  virtual std::string_view name() const = 0;  // as in targets: "cpu"

  virtual std::vector<kernels::DeviceInfo> devices() = 0;
  // The device a target of this backend names; throws std::invalid_argument naming the devices
  // there are.
  virtual kernels::DeviceInfo device(const kernels::Target& target) = 0;

  // Makes the request's device ready for its workload (a context, device buffers); the loop calls
  // it for every request, so it must be cheap when nothing changed.
  virtual void prepare(const WorkerRequest& /*request*/, const Operands& /*operands*/) {}
  // Loads the request's artifact. A candidate that cannot be loaded (a program that does not
  // compile) gives nullptr with `reply` saying why. For a user kernel (request.kernel) whose
  // operands have no expected values yet and whose check runs a reference, the backend runs the
  // reference first on the operands' initial values and stores its outputs as the expected ones.
  virtual std::unique_ptr<LoadedCandidate> load(const WorkerRequest& request, Operands& operands,
                                                WorkerReply& reply) = 0;
  // Runs a user kernel's check reference on the operands' initial values and keeps its outputs as
  // the expected ones, before any candidate runs (`request.artifact` is a candidate's, for backends
  // whose reference lives in the candidate's object). A reference that cannot run gives false with
  // `reply` saying why: a "reference_error" where the reference is at fault, another status where
  // the candidate's artifact is.
  virtual bool run_reference(const WorkerRequest& request, Operands& operands, WorkerReply& reply) = 0;
  // The share of the target's device time (0..1) that other processes' work took since
  // `since_unix_seconds`: a GPU that another process runs kernels on slows the candidate's own
  // (time-slicing). The loop asks around each candidate's timed runs. nullopt where the backend
  // cannot tell; CPU backends leave it so (the runner measures the CPU's load itself).
  virtual std::optional<double> device_load_since(const WorkerRequest& /*request*/, double /*since_unix_seconds*/) {
    return std::nullopt;
  }
  // After an exception from this backend's candidate: drop state that may be broken (an OpenCL
  // context after a fault), so the next candidate starts clean.
  virtual void reset() {}
  // After reset(): whether this process can no longer measure on the backend (a CUDA context lost
  // to an illegal address stays lost until the process exits). The loop then tells the runner to
  // replace the worker, so the fault is one record and the next candidate runs in a fresh process.
  virtual bool needs_fresh_process() const { return false; }
};

}  // namespace optune::measure
