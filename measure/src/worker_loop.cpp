// The worker's loop: everything that can go wrong inside a candidate happens in this process,
// which the runner may lose and replace. One check-and-time procedure serves every backend.
#include "optune/measure/worker_loop.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure {

namespace {

// Descriptors a worker may gain over its candidates before it counts as leaking: a device runtime
// opens some of its own as its first candidates run (a driver's device files, a cache).
constexpr std::size_t kDescriptorSlack = 64;

std::size_t open_descriptors() {
  std::error_code error;
  std::size_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end; it.increment(error))
    ++count;
  return count;
}

// Reaps the children that have ended; true when some still run.
bool has_running_children() {
  int status = 0;
  pid_t child = 0;
  while ((child = ::waitpid(-1, &status, WNOHANG)) > 0) {
  }
  return child == 0;
}

// Runs per repeat when the policy leaves it open: enough for min_repeat_ms, and at most this many
// (a candidate that returns at once must not spin for hours).
constexpr int kMaxNumber = 1 << 20;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class WorkerLoop {
 public:
  explicit WorkerLoop(std::vector<std::unique_ptr<WorkerBackend>> backends) : backends_(std::move(backends)) {
    if (backends_.empty()) throw std::invalid_argument("worker: no backend");
  }

  nlohmann::json serve(const nlohmann::json& message) {
    if (is_describe_request(message)) return describe(message.get<DescribeRequest>());
    return measure(message.get<WorkerRequest>());
  }

 private:
  WorkerBackend& backend_of(const kernels::Target& target) {
    std::string names;
    for (auto& backend : backends_) {
      if (backend->name() == target.backend) return *backend;
      names += (names.empty() ? "" : ", ") + std::string(backend->name());
    }
    throw std::invalid_argument("target " + target.str() + ": this optune-worker was built without backend '" +
                                target.backend + "' (it has " + names + ")");
  }

  // The devices this worker measures on, which an RPC server reports: its own (under an emulator
  // the emulated CPU, not the server's) first, then every backend's others. With a target, that
  // target's device; a target naming no device here is a "no_device" reply naming those there are.
  WorkerReply describe(const DescribeRequest& request) {
    WorkerReply reply;
    if (!request.target) {
      std::vector<nlohmann::json> devices;
      for (auto& backend : backends_)
        for (const auto& device : backend->devices()) devices.push_back(device.fingerprint());
      if (devices.empty()) return failure_reply("runtime_error", "this optune-worker finds no device");
      reply.status = "ok";
      reply.device = devices.front();
      reply.devices = std::move(devices);
      return reply;
    }
    try {
      const kernels::Target target = kernels::split_target(*request.target);
      reply.device = backend_of(target).device(target).fingerprint();
      reply.status = "ok";
      return reply;
    } catch (const std::invalid_argument& error) {
      return failure_reply("no_device", error.what());
    }
  }

  WorkerReply measure(const WorkerRequest& request) {
    if (request.kernel) prepare_kernel_operands(operands_.values, request.workload, request.seed, *request.kernel);
    else prepare_operator_operands(operands_, request.workload, request.seed, request.input_dtypes);
    WorkerBackend& backend = backend_of(kernels::split_target(request.target));
    try {
      backend.prepare(request, operands_);
      if (request.reference) return run_reference(backend, request);
      if (request.artifact.empty()) return ready(request);
      if (!descriptors_before_candidates_) descriptors_before_candidates_ = open_descriptors();
      WorkerReply reply = check_and_time(backend, request);
      if (left_behind()) reply.replace_worker = true;
      return reply;
    } catch (const std::exception& error) {
      backend.reset();
      if (!backend.needs_fresh_process()) throw;
      WorkerReply reply = failure_reply("runtime_error", error.what());
      reply.replace_worker = true;
      return reply;
    } catch (...) {
      backend.reset();
      throw;
    }
  }

  WorkerReply ready(const WorkerRequest& request) const {
    WorkerReply reply;
    reply.status = "ready";
    if (request.kernel) reply.needs_reference = operands_.values.needs_reference();
    return reply;
  }

  // A kernel file's reference, run before any candidate of the problem: what goes wrong in it is
  // the file's fault, not a candidate's.
  WorkerReply run_reference(WorkerBackend& backend, const WorkerRequest& request) {
    if (!request.kernel) return ready(request);
    WorkerReply reply;
    try {
      if (!backend.run_reference(request, operands_, reply)) return reply;
    } catch (const std::exception& error) {
      backend.reset();
      return failure_reply("reference_error",
                           "the check's reference '" + operands_.values.check.entry + "' failed: " + error.what());
    }
    return ready(request);
  }

  WorkerReply check_and_time(WorkerBackend& backend, const WorkerRequest& request) {
    WorkerReply reply;
    std::unique_ptr<LoadedCandidate> candidate = backend.load(request, operands_, reply);
    if (!candidate) return reply;
    const auto check_started = Clock::now();
    const bool passed = request.kernel ? check_kernel(*candidate, reply) : check_operator(*candidate, request, reply);
    reply.check_seconds = seconds_since(check_started);
    if (!passed) return reply;
    const double timing_started = unix_now();
    const auto timing_clock = Clock::now();
    time_runs(*candidate, request.timing, request.best_seconds, reply);
    reply.timing_seconds = seconds_since(timing_clock);
    reply.device_load = backend.device_load_since(request, timing_started);
    return reply;
  }

  // A built-in operator's output against the reference, by relative L2 error, within the
  // tolerance of its dtype (kernels::check_tolerance).
  bool check_operator(LoadedCandidate& candidate, const WorkerRequest& request, WorkerReply& reply) {
    reset_for_run(operands_.values, 0);
    candidate.poison_output();
    candidate.run(1);
    candidate.fetch_outputs();
    const double error = operator_output_error(operands_);
    const double tolerance = kernels::check_tolerance(kernels::parse_workload_key(request.workload),
                                                      operands_.values.args.back().spec.dtype,
                                                      request.timing.max_relative_error);
    candidate.describe(reply);
    reply.error = std::isfinite(error) ? error : -1.0;
    if (!(error <= tolerance)) {
      reply.status = "wrong_answer";
      reply.message = guard_intact(operands_.values.args.back())
                          ? "relative L2 error " + std::to_string(error) + " exceeds " + std::to_string(tolerance)
                          : "wrote past the end of output '" + operands_.values.args.back().spec.name + "'";
      return false;
    }
    return true;
  }

  // A user kernel's outputs element by element against the expected values (the file's rtol and
  // atol), or without any, written by the run: two runs from different poisons must agree.
  bool check_kernel(LoadedCandidate& candidate, WorkerReply& reply) {
    KernelOperands& operands = operands_.values;
    auto checked_run = [&](int poison_pattern) {
      reset_for_run(operands, poison_pattern);
      candidate.poison_output();
      candidate.run(1);
      candidate.fetch_outputs();
    };
    checked_run(0);
    OutputCheck check;
    if (operands.has_expected()) {
      check = check_outputs(operands);
    } else {
      const auto first = output_bytes(operands);
      checked_run(1);
      check = check_written(operands, first);
    }
    candidate.describe(reply);
    // The reply's error: the worst element's distance in units of its tolerance (<= 1 passes).
    reply.error = std::isfinite(check.max_error) ? check.max_error : -1.0;
    if (!check.passed) {
      reply.status = "wrong_answer";
      reply.message = check.message;
      return false;
    }
    return true;
  }

  // Times the candidate (timing_policy.hpp): with the task's best known, only as long as its rank
  // needs.
  static void time_runs(LoadedCandidate& candidate, const TimingPolicy& policy, std::optional<double> best,
                        WorkerReply& reply) {
    for (int i = 1; i < policy.warmup; ++i) candidate.run(1);
    const double bail_out_seconds = best && policy.bail_out > 0 ? policy.bail_out * *best : 0;
    const int repeats = std::max(1, policy.repeat);
    int number = policy.number;
    double sized_repeat = 0;  // the sizing run's time where it makes a repeat by itself, else 0
    double sizing_run = 0;    // the sizing run's time where it is a reading of its own, else 0
    if (number <= 0) {
      const double once = candidate.run(1);
      // One run, the check's being the first, is warm but may have been interrupted: it stops the
      // timing only at twice the bail-out's bound.
      if (bail_out_seconds > 0 && once > 2 * bail_out_seconds) return stop_slow(once, 1, 0, policy, *best, reply);
      // The whole number of runs nearest to min_repeat_ms: rounding up doubled the timing of a
      // run just short of it (two 39 ms runs a repeat for a 40 ms one) for no steadier median.
      number = static_cast<int>(std::lround(policy.min_repeat_ms / 1e3 / std::max(once, 1e-9)));
      number = std::clamp(number, 1, kMaxNumber);
      // A run that makes a repeat by itself (at least two thirds of min_repeat_ms) is the first
      // repeat, timed as the others are: running it again would only add a run (half the timing
      // of a long candidate cut after its first repeat).
      if (number == 1)
        sized_repeat = once;
      else
        sizing_run = once;
    }
    reply.status = "ok";
    reply.number = number;
    double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
    for (int r = 0; r < repeats; ++r) {
      reply.costs.push_back(r == 0 && sized_repeat > 0 ? sized_repeat : candidate.run(number));
      fastest = std::min(fastest, reply.costs.back());
      slowest = std::max(slowest, reply.costs.back());
      // Where the sizing run is a reading of its own, the faster of it and the repeats decides: a
      // burst of load that doubles the first repeat of the eventual winner must not record it as
      // slow (nor as slower, ending adaptively). A repeat of one run, the sizing run itself,
      // decides alone: a second run for it cost long kernels 7% of a tune (commands.md). The
      // fastest only falls: past the first repeat it is under the bound if it ever was.
      const double fastest_reading = sizing_run > 0 ? std::min(fastest, sizing_run) : fastest;
      if (r == 0 && bail_out_seconds > 0 && fastest_reading > bail_out_seconds)
        return stop_slow(fastest, number, 1, policy, *best, reply);
      if (!best || !policy.adaptive) continue;
      const int done = r + 1;
      const double clearly_slower = kClearlySlowerAfter[std::min<std::size_t>(done, std::size(kClearlySlowerAfter)) - 1];
      if (fastest_reading > clearly_slower * *best) return;
      if (done >= kSettledRepeats && slowest <= (1 + kSettledSpread) * fastest) return;
    }
  }

  // Ends the timing of a candidate that is over the bail-out bound: `cost` a run, after `repeats`
  // repeats (0: the sizing run alone).
  static void stop_slow(double cost, int number, int repeats, const TimingPolicy& policy, double best,
                        WorkerReply& reply) {
    reply.status = "slow";
    reply.costs = {cost};
    reply.number = number;
    char message[160];
    std::snprintf(message, sizeof message,
                  "timing stopped after %d of %d repeats: %.4g ms a run, over %gx the best so far (%.4g ms)", repeats,
                  std::max(1, policy.repeat), cost * 1e3, policy.bail_out, best * 1e3);
    reply.message = message;
  }

  // Whether the candidates run so far left processes running or descriptors open: they would
  // reach later candidates' records (a process holding the reply channel open hides the worker's
  // crash; descriptors pile up to the limit).
  bool left_behind() {
    return has_running_children() || open_descriptors() > *descriptors_before_candidates_ + kDescriptorSlack;
  }

  std::vector<std::unique_ptr<WorkerBackend>> backends_;
  Operands operands_;
  std::optional<std::size_t> descriptors_before_candidates_;  // before this worker's first candidate
};

}  // namespace

int run_worker_loop(std::istream& in, std::ostream& out, std::vector<std::unique_ptr<WorkerBackend>> backends) {
  WorkerLoop loop(std::move(backends));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json response;
    try {
      response = loop.serve(nlohmann::json::parse(line));
    } catch (const std::exception& error) {
      response = failure_reply("runtime_error", error.what());
    }
    out << response.dump() << std::endl;
  }
  return 0;
}

}  // namespace optune::measure
