#include "optune/measure/local_runner.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <variant>

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

LocalRunner::LocalRunner(LocalRunnerOptions options) : options_(std::move(options)) {}
LocalRunner::~LocalRunner() = default;

Subprocess& LocalRunner::worker() {
  if (!worker_ || worker_->poll())
    worker_ = std::make_unique<Subprocess>(
        Subprocess::spawn({options_.worker_path}, {.pipe_stdio = true, .output_file = ""}));
  return *worker_;
}

namespace {

// Sends one request and reads its response; a dead or silent worker becomes a crash or timeout
// result and is replaced on the next request.
std::variant<nlohmann::json, MeasureResult> exchange(std::unique_ptr<Subprocess>& worker,
                                                            const nlohmann::json& request,
                                                            double timeout_seconds) {
  if (!worker->write_line(request.dump())) {
    auto status = worker->wait_until(after(kExitGraceSeconds));
    worker.reset();
    return failure(ErrorKind::kCrash, "worker died: " + (status ? status->describe() : "unknown"));
  }
  auto line = worker->read_line(after(timeout_seconds));
  if (line) {
    try {
      return nlohmann::json::parse(*line);
    } catch (const std::exception& error) {
      worker.reset();
      return failure(ErrorKind::kRuntimeError, std::string("malformed worker reply: ") + error.what());
    }
  }
  if (worker->timed_out()) {
    worker.reset();  // kills the worker and the candidate running in it
    return failure(ErrorKind::kTimeout, "no result within " + std::to_string(timeout_seconds) + " s");
  }
  auto status = worker->wait_until(after(kExitGraceSeconds));
  std::string how = status ? status->describe() : "closed its output";
  worker.reset();
  return failure(ErrorKind::kCrash, "candidate crashed the worker: " + how);
}

}  // namespace

MeasureResult LocalRunner::measure_one(const MeasureInput& input, const BuildResult& build) {
  if (!build.ok()) {
    MeasureResult result = failure(build.error, build.message);
    result.build_seconds = build.build_seconds;
    return result;
  }
  const std::string key = input.task->workload.key();
  nlohmann::json prepare = {{"workload", key}, {"timing", to_json(options_.timing)}};
  const bool is_opencl = input.task->target.backend == kernels::Backend::kOpenCL;
  if (is_opencl) {
    prepare["backend"] = "opencl";
    prepare["target"] = input.task->target.str();
    prepare["cache_dir"] = options_.opencl_cache_dir;
  }
  worker();
  auto prepared = exchange(worker_, prepare, kPrepareTimeoutSeconds);
  if (auto* failed = std::get_if<MeasureResult>(&prepared)) return *failed;
  const auto& ready = std::get<nlohmann::json>(prepared);
  if (ready.value("status", "") != "ready")
    return failure(ErrorKind::kRuntimeError, "preparing " + key + ": " + ready.value("message", ""));

  nlohmann::json request = prepare;
  request["artifact"] = build.artifact;
  worker();
  auto reply = exchange(worker_, request, options_.timing.timeout_seconds);
  MeasureResult result;
  if (auto* failed = std::get_if<MeasureResult>(&reply)) {
    result = *failed;
  } else {
    const auto& json = std::get<nlohmann::json>(reply);
    result.error = parse_error_kind(json.value("status", "runtime_error"));
    result.message = json.value("message", "");
    if (result.ok()) {
      result.costs = json.at("costs").get<std::vector<double>>();
      result.median_seconds = median(result.costs);
      result.gflops = input.task->workload.flops() / result.median_seconds / 1e9;
    }
    result.timestamp = unix_now();
    // OpenCL compiles in the worker: its compile (or cache load) is the candidate's build time.
    result.build_seconds = json.value("build_seconds", 0.0);
    if (json.contains("transfer") && result.message.empty()) result.message = describe_transfers(json);
  }
  result.build_seconds += build.build_seconds;
  return result;
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<MeasureInput>& inputs,
                                            const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    results.push_back(measure_one(inputs[i], builds[i]));
    if (options_.remove_artifacts && !builds[i].artifact.empty()) {
      std::error_code ignored;
      std::filesystem::remove(builds[i].artifact, ignored);
    }
  }
  return results;
}

}  // namespace optune::measure
