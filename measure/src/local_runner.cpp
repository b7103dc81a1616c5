#include "optune/measure/local_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "optune/measure/machine_load.hpp"

namespace optune::measure {
namespace {

using Clock = std::chrono::steady_clock;

// Making inputs and the reference result of a large workload takes far longer than a candidate
// may; it gets its own allowance, paid once per workload and worker.
constexpr double kPrepareTimeoutSeconds = 600;
// A kernel file's check reference is usually a plain loop, many times slower than a tuned
// candidate: it may take this many candidates' timeouts.
constexpr double kReferenceTimeoutFactor = 10;
// Other processes' share of the CPU over which a measurement counts as taken on a busy machine (as
// db::kBusyLoad).
constexpr double kBusyShare = 0.10;
// How long a worker that closed its output may take to exit before it is killed.
constexpr double kExitGraceSeconds = 2;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

MeasureResult failure(ErrorKind kind, std::string message) {
  MeasureResult result;
  result.error = kind;
  result.message = std::move(message);
  result.timestamp = unix_now();
  return result;
}

// Transfers are reported beside the kernel time, never inside it (phones read back slowly).
std::string describe_transfers(const WorkerReply& reply) {
  const Transfers& t = *reply.transfer;
  auto rate = [](double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; };
  char text[256];
  std::snprintf(text, sizeof text,
                "transfers: host->device %.3f ms (%.2f GB/s), device->host %.3f ms (%.2f GB/s); program %s",
                t.write_seconds * 1e3, rate(t.write_bytes, t.write_seconds), t.read_seconds * 1e3,
                rate(t.read_bytes, t.read_seconds), reply.program_cached.value_or(false) ? "from cache" : "compiled");
  return text;
}

}  // namespace

LocalRunner::LocalRunner(LocalRunnerOptions options)
    : Runner(options.remove_artifacts), options_(std::move(options)) {}
LocalRunner::~LocalRunner() = default;

Subprocess& LocalRunner::worker() {
  // A worker stopped while idle (SIGSTOP) would answer nothing: the wait for it would count
  // against the next candidate, which never ran. It is replaced like a dead one.
  if (!worker_ || worker_->poll() || worker_->is_stopped()) {
    std::vector<std::string> argv = options_.launcher;
    argv.push_back(options_.worker_path);
    worker_ = std::make_unique<Subprocess>(Subprocess::spawn(argv, {.pipe_stdio = true, .output_file = ""}));
  }
  return *worker_;
}

namespace {

// Sends one request and reads its reply; a dead or silent worker becomes a crash or timeout
// reply and is replaced on the next request. `running`: what ran in the worker, for messages.
WorkerReply exchange(std::unique_ptr<Subprocess>& worker, const nlohmann::json& request, double timeout_seconds,
                     const std::string& running = "candidate") {
  if (!worker->write_line(request.dump())) {
    auto status = worker->wait_until(after(kExitGraceSeconds));
    worker.reset();
    return failure_reply("crash", "worker died: " + (status ? status->describe() : "unknown"));
  }
  auto line = worker->read_line(after(timeout_seconds));
  if (line) {
    try {
      auto reply = nlohmann::json::parse(*line).get<WorkerReply>();
      // The candidate left processes or descriptors behind: a fresh worker for the next one, so
      // that they reach no later record (replacing it ends its process group).
      if (reply.replace_worker.value_or(false)) worker.reset();
      return reply;
    } catch (const std::exception& error) {
      worker.reset();
      return failure_reply("runtime_error", std::string("malformed worker reply: ") + error.what());
    }
  }
  if (worker->timed_out()) {
    worker.reset();  // kills the worker and the candidate running in it
    return failure_reply("timeout", running == "candidate" ? "no result within " + seconds_text(timeout_seconds)
                                                           : running + " gave no result within " + seconds_text(timeout_seconds));
  }
  auto status = worker->wait_until(after(kExitGraceSeconds));
  std::string how = status ? status->describe() : "closed its output";
  worker.reset();
  return failure_reply("crash", running + " crashed the worker: " + how);
}

// The reply of a kernel file's reference run: "ready", a reference_error (the reference crashed,
// hung or failed), or the candidate artifact's own failure to load.
WorkerReply reference_reply(WorkerReply reply) {
  if (reply.status == "crash" || reply.status == "timeout") reply.status = "reference_error";
  return reply;
}

}  // namespace

WorkerReply LocalRunner::measure_request(WorkerRequest request, const std::string& artifact) {
  request.artifact.clear();
  try {
    worker();
  } catch (const std::exception& error) {
    return failure_reply("runtime_error", std::string("cannot start the worker: ") + error.what());
  }
  WorkerReply ready = exchange(worker_, request, kPrepareTimeoutSeconds);
  if (ready.status != "ready") {
    if (ready.status == "runtime_error") ready.message = "preparing " + request.workload + ": " + ready.message;
    return ready;
  }
  // A problem is its workload and, for a kernel file, the file's operands and check; the key is
  // only made where some reference has failed, not for every candidate.
  auto problem = [&] { return request.workload + (request.kernel ? nlohmann::json(*request.kernel).dump() : ""); };
  if (!failed_references_.empty())
    if (auto failed = failed_references_.find(problem()); failed != failed_references_.end()) return failed->second;
  request.artifact = artifact;
  if (ready.needs_reference.value_or(false)) {
    request.reference = true;
    worker();
    const std::string running = "the check's reference '" + (request.kernel ? request.kernel->check.entry : "") + "'";
    WorkerReply reference = reference_reply(
        exchange(worker_, request, kReferenceTimeoutFactor * request.timing.timeout_seconds, running));
    // A failed reference fails every candidate of the problem alike: it is not run again.
    if (reference.status == "reference_error") failed_references_[problem()] = reference;
    if (reference.status != "ready") return reference;
    request.reference = false;
  }
  // The window covers the candidate's check and timing: what ran beside it then is what disturbed it.
  auto check_and_time = [&] {
    worker();
    const LoadWindow window = LoadWindow::open(worker_->pid());
    WorkerReply reply = exchange(worker_, request, request.timing.timeout_seconds);
    if (reply.status == "ok" || reply.status == "slow") reply.load = window.close();
    if (reply.load) recent_load_ = reply.load;
    return reply;
  };
  WorkerReply reply = check_and_time();
  // Cut as slow while others held the machine: the slowness may have been theirs, not the
  // candidate's. It is timed again in full rather than lost to a busy moment. A cut within the
  // first runs of a fast kernel may be too short for the clock to tell the load (no tick passed):
  // the last load known stands for it.
  if (const double busy = reply.load.value_or(recent_load_.value_or(0)); reply.status == "slow" && busy > kBusyShare) {
    request.best_seconds.reset();
    reply = check_and_time();
    if (reply.status == "ok" && reply.message.empty())
      reply.message = "timed in full: cut as slow while other processes took " +
                      std::to_string(static_cast<int>(busy * 100 + 0.5)) + "% of the CPU";
  }
  return reply;
}

kernels::DeviceInfo LocalRunner::describe_device(const std::string& target) {
  worker();
  WorkerReply reply = exchange(worker_, DescribeRequest{target}, kPrepareTimeoutSeconds);
  if (reply.status == "no_device") throw NoSuchDeviceError(reply.message.empty() ? "no device" : reply.message);
  if (reply.status != "ok" || !reply.device)
    throw std::runtime_error("the worker did not describe its device: " + reply.message);
  return kernels::DeviceInfo::from_fingerprint(*reply.device);
}

std::vector<kernels::DeviceInfo> LocalRunner::describe_devices() {
  worker();
  WorkerReply reply = exchange(worker_, DescribeRequest{}, kPrepareTimeoutSeconds);
  if (reply.status != "ok" || !reply.devices || reply.devices->empty())
    throw std::runtime_error("the worker did not describe its devices: " + reply.message);
  std::vector<kernels::DeviceInfo> devices;
  for (const auto& fingerprint : *reply.devices) devices.push_back(kernels::DeviceInfo::from_fingerprint(fingerprint));
  // Listing loaded every device runtime into that worker; CPU candidates get a fresh one without them.
  worker_.reset();
  return devices;
}

MeasureResult LocalRunner::measure_one(const MeasureInput& input, const BuildResult& build, bool comparing) {
  if (!build.ok()) {
    MeasureResult result = failure(build.error, build.message);
    result.build_seconds = build.build_seconds;
    return result;
  }
  const TimingPolicy timing = comparing ? comparison_policy(options_.timing) : options_.timing;
  WorkerRequest request = worker_request(input, timing, options_.program_cache_dir);
  if (!options_.device_target.empty()) request.target = options_.device_target;
  MeasureResult result = result_from_worker_reply(input, measure_request(std::move(request), build.artifact), timing);
  result.build_seconds += build.build_seconds;
  return result;
}

WorkerRequest worker_request(const MeasureInput& input, const TimingPolicy& timing, const std::string& cache_dir) {
  WorkerRequest request;
  request.workload = input.task->workload.key();
  request.timing = timing;
  if (!input.may_cut) request.timing.bail_out = 0;
  request.target = input.task->target.str();
  request.cache_dir = cache_dir;
  request.best_seconds = input.best_seconds;
  request.run_time_knobs = input.task->kernel_template->run_time_knob_values(
      input.task->workload, input.task->device, search_space::ConfigView(input.task->space, input.config));
  if (auto operands = input.task->kernel_template->worker_operands(input.task->workload, input.task->device))
    request.kernel = operands->get<KernelOperandsSpec>();
  else request.input_dtypes = input.task->kernel_template->input_dtypes(input.task->workload, input.task->device);
  return request;
}

MeasureResult result_from_worker_reply(const MeasureInput& input, const WorkerReply& reply, const TimingPolicy& timing) {
  MeasureResult result;
  try {
    result.error = parse_error_kind(reply.status);
    result.message = reply.message;
    if (result.ok() || result.is_slow()) {
      result.costs = reply.costs;
      if (result.costs.empty()) throw std::runtime_error("no costs");
      for (double cost : result.costs)
        if (!(cost >= 0) || !std::isfinite(cost)) throw std::runtime_error("a cost that is negative or not finite");
      result.median_seconds = median(result.costs);
      result.gflops = input.task->workload.flops() / result.median_seconds / 1e9;
      // The repeats the candidate was spared, at its own pace (a slow one's lower bound).
      const int skipped = std::max(1, timing.repeat) - static_cast<int>(result.costs.size());
      result.saved_seconds = std::max(0, skipped) * std::max(1, reply.number) * result.median_seconds;
      // A slow record too says whether others held the machine: what made it slow may have been them.
      // Shares come from a worker, perhaps a remote one: outside 0..1 the reply is malformed.
      const auto share = [](std::optional<double> value, const char* name) {
        if (value && !(*value >= 0 && *value <= 1)) throw std::runtime_error(std::string(name) + " out of 0..1");
        return value;
      };
      result.load = share(reply.load, "load");
      result.device_load = share(reply.device_load, "device_load");
    }
    const auto seconds = [](std::optional<double> value, const char* name) {
      if (value && !(*value >= 0 && std::isfinite(*value))) throw std::runtime_error(std::string(name) + " negative");
      return value;
    };
    result.check_seconds = seconds(reply.check_seconds, "check_seconds");
    result.timing_seconds = seconds(reply.timing_seconds, "timing_seconds");
    // The worker's -1 (an error that was not finite) is no figure: unknown, as where no check ran.
    if (reply.error && *reply.error != -1) {
      if (!(*reply.error >= 0 && std::isfinite(*reply.error))) throw std::runtime_error("check error negative");
      result.check_error = reply.error;
    }
    // Backends that compile in the worker: its compile (or cache load) is the candidate's build time.
    result.build_seconds = reply.build_seconds;
    if (reply.transfer && result.message.empty()) result.message = describe_transfers(reply);
  } catch (const std::exception& error) {
    result = failure(ErrorKind::kRuntimeError, std::string("malformed worker reply: ") + error.what());
  }
  result.timestamp = unix_now();
  return result;
}

std::vector<MeasureResult> LocalRunner::measure_round(const std::vector<MeasureInput>& inputs,
                                                      const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) results.push_back(measure_one(inputs[i], builds[i], is_comparing()));
  return results;
}

}  // namespace optune::measure
