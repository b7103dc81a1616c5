// The messages between a runner and optune-worker, one JSON object per line (and, unchanged,
// inside RPC frames). A request with an artifact measures it; without one it prepares the
// workload's operands (a "ready" reply, saying whether a kernel file's reference must still run);
// one with `reference` set runs that reference alone, with the artifact's help where the reference
// lives in the candidate's object (cpu), so that a reference that crashes or hangs is told apart
// from the candidate; a describe request asks for devices.
// A crash or hang shows up on the runner's side as a dead or silent worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/measure/kernel_operands.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::measure {

struct WorkerRequest {
  std::string workload;   // the workload's key
  TimingPolicy timing;
  std::uint64_t seed = 1;  // of the random inputs
  std::string target = "cpu";  // its backend measures (the text before ':')
  std::string cache_dir;   // where the backend may keep compiled programs; "" none
  std::string artifact;    // the candidate's file; "" prepares the operands only
  bool reference = false;  // run the kernel file's check reference only (a "ready" reply)
  // A user kernel's operands and check (its key alone does not say them); absent for operators.
  std::optional<KernelOperandsSpec> kernel;
  // An operator's inputs' dtypes where its template reads other than the key's dtype says
  // (kernels::operator_operands: u8 activations of an i8 GEMM on x86); empty: the key's.
  std::vector<kernels::DataType> input_dtypes;
  // The task's best median so far, which lets the worker stop timing a candidate that cannot be
  // the best (timing_policy.hpp); absent: time it in full.
  std::optional<double> best_seconds;
  // The candidate's run-time knob values (KernelTemplate::run_time_knob_values), passed to it once
  // it is loaded; empty: its knobs are all compiled in.
  std::vector<long long> run_time_knobs;
};

// {"describe": true}: every device of the worker; with a target, that target's device.
struct DescribeRequest {
  std::optional<std::string> target;
};

// Host<->device copies of the candidate's operands, reported beside the kernel time.
struct Transfers {
  double write_seconds = 0, read_seconds = 0, write_bytes = 0, read_bytes = 0;
};

struct WorkerReply {
  // "ok", "ready", "no_device", or an error kind's name (measure_result.hpp).
  std::string status = "runtime_error";
  std::string message;
  std::vector<double> costs;  // seconds per run, one per repeat
  // Measure replies whose check ran (ok, slow, wrong_answer): the check's error, as
  // MeasureResult::check_error says; -1 where it was not finite (NaN or infinity in the output).
  // Absent where no check ran.
  std::optional<double> error;
  int number = 0;             // runs per repeat
  // Measure replies: the worker's seconds checking the output and timing the runs.
  std::optional<double> check_seconds;
  std::optional<double> timing_seconds;
  double build_seconds = 0;   // compiled in the worker (OpenCL): its compile or cache load
  std::optional<bool> program_cached;
  // "ready" replies: the kernel file's reference has not run yet on these operands.
  std::optional<bool> needs_reference;
  std::optional<Transfers> transfer;
  // Measure replies: the candidate left processes running or descriptors open in the worker, which
  // the runner replaces before the next candidate.
  std::optional<bool> replace_worker;
  // Set by the runner that watched the worker (LocalRunner, here or on an RPC server), never by
  // the worker: other processes' share of the CPU time while it measured (machine_load.hpp).
  std::optional<double> load;
  // Set by the worker's loop where its backend can tell: other processes' share of the device's
  // time while the candidate was timed (WorkerBackend::device_load_since).
  std::optional<double> device_load;
  // Describe replies: the device asked for (or the first), and all of them.
  std::optional<nlohmann::json> device;
  std::optional<std::vector<nlohmann::json>> devices;
};

// Each message's JSON form. from_json throws nlohmann::json::exception (or std::invalid_argument
// for a bad timing policy) on a malformed message.
void to_json(nlohmann::json& json, const WorkerRequest& request);
void from_json(const nlohmann::json& json, WorkerRequest& request);
void to_json(nlohmann::json& json, const DescribeRequest& request);
void from_json(const nlohmann::json& json, DescribeRequest& request);
bool is_describe_request(const nlohmann::json& json);
void to_json(nlohmann::json& json, const Transfers& transfers);
void from_json(const nlohmann::json& json, Transfers& transfers);
void to_json(nlohmann::json& json, const WorkerReply& reply);
void from_json(const nlohmann::json& json, WorkerReply& reply);

WorkerReply failure_reply(std::string status, std::string message);

}  // namespace optune::measure
