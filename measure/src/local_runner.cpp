#include "optune/measure/local_runner.hpp"

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace optune::measure {
namespace {

using Clock = std::chrono::steady_clock;

// Making inputs and the reference result of a large workload takes far longer than a candidate
// may; it gets its own allowance, paid once per workload and worker.
constexpr double kPrepareTimeoutSeconds = 600;
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
std::string describe_transfers(const nlohmann::json& reply) {
  const auto& t = reply.at("transfer");
  auto rate = [](double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; };
  char text[256];
  std::snprintf(text, sizeof text,
                "transfers: host->device %.3f ms (%.2f GB/s), device->host %.3f ms (%.2f GB/s); program %s",
                t.value("write_seconds", 0.0) * 1e3, rate(t.value("write_bytes", 0.0), t.value("write_seconds", 0.0)),
                t.value("read_seconds", 0.0) * 1e3, rate(t.value("read_bytes", 0.0), t.value("read_seconds", 0.0)),
                reply.value("program_cached", false) ? "from cache" : "compiled");
  return text;
}

}  // namespace

LocalRunner::LocalRunner(LocalRunnerOptions options)
    : Runner(options.remove_artifacts), options_(std::move(options)) {}
LocalRunner::~LocalRunner() = default;

Subprocess& LocalRunner::worker() {
  if (!worker_ || worker_->poll()) {
    std::vector<std::string> argv = options_.launcher;
    argv.push_back(options_.worker_path);
    worker_ = std::make_unique<Subprocess>(Subprocess::spawn(argv, {.pipe_stdio = true, .output_file = ""}));
  }
  return *worker_;
}

namespace {

nlohmann::json failure_reply(ErrorKind kind, const std::string& message) {
  return {{"status", error_kind_name(kind)}, {"message", message}};
}

// Sends one request and reads its response; a dead or silent worker becomes a crash or timeout
// reply and is replaced on the next request.
nlohmann::json exchange(std::unique_ptr<Subprocess>& worker, const nlohmann::json& request, double timeout_seconds) {
  if (!worker->write_line(request.dump())) {
    auto status = worker->wait_until(after(kExitGraceSeconds));
    worker.reset();
    return failure_reply(ErrorKind::kCrash, "worker died: " + (status ? status->describe() : "unknown"));
  }
  auto line = worker->read_line(after(timeout_seconds));
  if (line) {
    try {
      auto reply = nlohmann::json::parse(*line);
      if (reply.is_object()) return reply;
      throw std::runtime_error("not an object");
    } catch (const std::exception& error) {
      worker.reset();
      return failure_reply(ErrorKind::kRuntimeError, std::string("malformed worker reply: ") + error.what());
    }
  }
  if (worker->timed_out()) {
    worker.reset();  // kills the worker and the candidate running in it
    return failure_reply(ErrorKind::kTimeout, "no result within " + std::to_string(timeout_seconds) + " s");
  }
  auto status = worker->wait_until(after(kExitGraceSeconds));
  std::string how = status ? status->describe() : "closed its output";
  worker.reset();
  return failure_reply(ErrorKind::kCrash, "candidate crashed the worker: " + how);
}

}  // namespace

nlohmann::json LocalRunner::measure_request(const nlohmann::json& request, const std::string& artifact) {
  nlohmann::json prepare = request;
  prepare.erase("artifact");
  try {
    worker();
  } catch (const std::exception& error) {
    return failure_reply(ErrorKind::kRuntimeError, std::string("cannot start the worker: ") + error.what());
  }
  auto ready = exchange(worker_, prepare, kPrepareTimeoutSeconds);
  if (ready.value("status", "") != "ready") {
    if (ready.value("status", "") == "runtime_error")
      ready["message"] = "preparing " + prepare.value("workload", std::string("the workload")) + ": " +
                         ready.value("message", "");
    return ready;
  }
  nlohmann::json measure = request;
  measure["artifact"] = artifact;
  double timeout = TimingPolicy{}.timeout_seconds;
  if (request.contains("timing")) timeout = timing_policy_from_json(request.at("timing")).timeout_seconds;
  worker();
  return exchange(worker_, measure, timeout);
}

kernels::DeviceInfo LocalRunner::describe_device(const std::string& target) {
  worker();
  auto reply = exchange(worker_, {{"describe", true}, {"target", target}}, kPrepareTimeoutSeconds);
  if (reply.value("status", "") == "no_device") throw NoSuchDeviceError(reply.value("message", "no device"));
  if (reply.value("status", "") != "ok" || !reply.contains("device"))
    throw std::runtime_error("the worker did not describe its device: " + reply.value("message", reply.dump()));
  return kernels::DeviceInfo::from_fingerprint(reply["device"]);
}

std::vector<kernels::DeviceInfo> LocalRunner::describe_devices() {
  worker();
  auto reply = exchange(worker_, {{"describe", true}}, kPrepareTimeoutSeconds);
  if (reply.value("status", "") != "ok" || !reply.contains("devices") || !reply["devices"].is_array() ||
      reply["devices"].empty())
    throw std::runtime_error("the worker did not describe its devices: " + reply.value("message", reply.dump()));
  std::vector<kernels::DeviceInfo> devices;
  for (const auto& fingerprint : reply["devices"]) devices.push_back(kernels::DeviceInfo::from_fingerprint(fingerprint));
  // Listing loaded every OpenCL runtime into that worker; CPU candidates get a fresh one without them.
  worker_.reset();
  return devices;
}

MeasureResult LocalRunner::measure_one(const MeasureInput& input, const BuildResult& build) {
  if (!build.ok()) {
    MeasureResult result = failure(build.error, build.message);
    result.build_seconds = build.build_seconds;
    return result;
  }
  MeasureResult result = result_from_worker_reply(
      input, measure_request(worker_request(input, options_.timing, options_.opencl_cache_dir), build.artifact));
  result.build_seconds += build.build_seconds;
  return result;
}

nlohmann::json worker_request(const MeasureInput& input, const TimingPolicy& timing,
                              const std::string& opencl_cache_dir) {
  nlohmann::json request = {{"workload", input.task->workload.key()}, {"timing", to_json(timing)}};
  if (input.task->target.backend == kernels::Backend::kOpenCL) {
    request["backend"] = "opencl";
    request["target"] = input.task->target.str();
    request["cache_dir"] = opencl_cache_dir;
  }
  return request;
}

MeasureResult result_from_worker_reply(const MeasureInput& input, const nlohmann::json& reply) {
  MeasureResult result;
  try {
    result.error = parse_error_kind(reply.value("status", "runtime_error"));
    result.message = reply.value("message", "");
    if (result.ok()) {
      result.costs = reply.at("costs").get<std::vector<double>>();
      if (result.costs.empty()) throw std::runtime_error("no costs");
      result.median_seconds = median(result.costs);
      result.gflops = input.task->workload.flops() / result.median_seconds / 1e9;
    }
    // OpenCL compiles in the worker: its compile (or cache load) is the candidate's build time.
    result.build_seconds = reply.value("build_seconds", 0.0);
    if (reply.contains("transfer") && result.message.empty()) result.message = describe_transfers(reply);
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
  for (std::size_t i = 0; i < inputs.size(); ++i) results.push_back(measure_one(inputs[i], builds[i]));
  return results;
}

}  // namespace optune::measure
