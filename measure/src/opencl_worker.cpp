#include "opencl_worker.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/measure/opencl_artifact.hpp"

namespace optune::measure {
namespace {

// Build log kept in a build_error record: the first errors are the useful ones.
constexpr std::size_t kMaxLogBytes = 4000;

nlohmann::json failure(const std::string& status, const std::string& message) {
  return {{"status", status}, {"message", message}};
}

}  // namespace

void OpenCLWorker::open(const std::string& target_text) {
  if (target_ == target_text && context_) return;
  target_.clear();
  buffers_for_.clear();
  inputs_.clear();
  output_.reset();
  queue_.reset();
  context_.reset();
  device_ = cl::select_device(kernels::parse_target(target_text));
  cl_int error = CL_SUCCESS;
  context_ = cl::Context(clCreateContext(nullptr, 1, &device_.device, nullptr, nullptr, &error));
  cl::check(error, "clCreateContext");
  queue_ = cl::Queue(clCreateCommandQueue(context_.get(), device_.device, CL_QUEUE_PROFILING_ENABLE, &error));
  cl::check(error, "clCreateCommandQueue");
  target_ = target_text;
}

void OpenCLWorker::allocate_buffers(const Operands& operands) {
  if (buffers_for_ == operands.workload_key) return;
  buffers_for_.clear();
  inputs_.clear();
  const auto workload = kernels::parse_workload_key(operands.workload_key);
  cl_int error = CL_SUCCESS;
  for (std::size_t size : kernels::input_sizes(workload)) {
    inputs_.emplace_back(clCreateBuffer(context_.get(), CL_MEM_READ_ONLY, size * sizeof(float), nullptr, &error));
    cl::check(error, "clCreateBuffer");
  }
  output_ = cl::Buffer(
      clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, operands.output_size * sizeof(float), nullptr, &error));
  cl::check(error, "clCreateBuffer");
  buffers_for_ = operands.workload_key;
}

nlohmann::json OpenCLWorker::measure(const nlohmann::json& request, const Operands& operands,
                                     const TimingPolicy& policy) {
  try {
    open(request.at("target").get<std::string>());
    allocate_buffers(operands);
    if (!request.contains("artifact")) return {{"status", "ready"}};
    return measure_candidate(request, operands, policy);
  } catch (const cl::Error& error) {
    // A failed launch or wait may leave the context unusable (NVIDIA does after a fault): start
    // the next candidate on a fresh one.
    target_.clear();
    return failure("runtime_error", error.what());
  } catch (const std::invalid_argument& error) {
    return failure("runtime_error", error.what());
  }
}

nlohmann::json OpenCLWorker::measure_candidate(const nlohmann::json& request, const Operands& operands,
                                               const TimingPolicy& policy) {
  const OpenCLArtifact artifact = read_opencl_artifact(request.at("artifact").get<std::string>());
  if (artifact.workload_key != operands.workload_key)
    return failure("runtime_error", "artifact is for " + artifact.workload_key + ", not " + operands.workload_key);

  opencl::ProgramBuild build = opencl::build_program(context_.get(), device_.device, device_.info, artifact.source,
                                                     artifact.kernel.build_options, request.value("cache_dir", ""));
  if (!build.program) {
    std::string log = build.log;
    if (log.size() > kMaxLogBytes) log = log.substr(0, kMaxLogBytes) + "\n[...]";
    auto reply = failure("build_error", "OpenCL build failed: " + log);
    reply["build_seconds"] = build.seconds;
    return reply;
  }
  cl_int error = CL_SUCCESS;
  cl::Kernel kernel(clCreateKernel(build.program.get(), artifact.kernel.kernel_name.c_str(), &error));
  cl::check(error, "clCreateKernel");
  cl_uint argument = 0;
  for (const auto& buffer : inputs_) {
    cl_mem mem = buffer.get();
    cl::check(clSetKernelArg(kernel.get(), argument++, sizeof mem, &mem), "clSetKernelArg");
  }
  cl_mem out = output_.get();
  cl::check(clSetKernelArg(kernel.get(), argument, sizeof out, &out), "clSetKernelArg");

  // Host -> device, timed apart from the kernel.
  double write_seconds = 0, write_bytes = 0;
  const auto workload = kernels::parse_workload_key(operands.workload_key);
  const auto sizes = kernels::input_sizes(workload);
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    cl_event raw = nullptr;
    cl::check(clEnqueueWriteBuffer(queue_.get(), inputs_[i].get(), CL_TRUE, 0, sizes[i] * sizeof(float),
                                   operands.input_pointers[i], 0, nullptr, &raw),
              "clEnqueueWriteBuffer");
    cl::Event event(raw);
    write_seconds += cl::event_seconds(event.get());
    write_bytes += double(sizes[i] * sizeof(float));
  }
  // Poison the output, so a kernel that leaves elements unwritten cannot pass.
  const std::vector<float> poison(operands.output_size, std::numeric_limits<float>::quiet_NaN());
  cl::check(clEnqueueWriteBuffer(queue_.get(), output_.get(), CL_TRUE, 0, operands.output_size * sizeof(float),
                                 poison.data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");

  const auto& k = artifact.kernel;
  // A call's time: the kernel's, or with zero_output from the start of the fill to the kernel's
  // end (the gap between the two included).
  auto run = [&](int times) {
    std::vector<cl::Event> fills, events;
    fills.reserve(times);
    events.reserve(times);
    for (int i = 0; i < times; ++i) {
      if (k.zero_output) {
        const float zero = 0.0f;
        cl_event raw = nullptr;
        cl::check(clEnqueueFillBuffer(queue_.get(), output_.get(), &zero, sizeof zero, 0,
                                      operands.output_size * sizeof(float), 0, nullptr, &raw),
                  "clEnqueueFillBuffer");
        fills.emplace_back(raw);
      }
      cl_event raw = nullptr;
      cl::check(clEnqueueNDRangeKernel(queue_.get(), kernel.get(), k.dimensions, nullptr, k.global_size.data(),
                                       k.local_size.data(), 0, nullptr, &raw),
                "clEnqueueNDRangeKernel");
      events.emplace_back(raw);
    }
    cl::check(clFinish(queue_.get()), "clFinish");
    double seconds = 0;
    for (int i = 0; i < times; ++i)
      seconds += k.zero_output ? cl::span_seconds(fills[i].get(), events[i].get()) : cl::event_seconds(events[i].get());
    return seconds / times;
  };
  run(1);

  std::vector<float> got(operands.output_size);
  cl_event raw = nullptr;
  cl::check(clEnqueueReadBuffer(queue_.get(), output_.get(), CL_TRUE, 0, got.size() * sizeof(float), got.data(), 0,
                                nullptr, &raw),
            "clEnqueueReadBuffer");
  cl::Event read_event(raw);
  const double read_seconds = cl::event_seconds(read_event.get());
  const double read_bytes = double(got.size() * sizeof(float));

  const double error_l2 = kernels::relative_l2_error(got.data(), operands.expected.get(), got.size());
  nlohmann::json reply = {{"build_seconds", build.seconds},
                          {"program_cached", build.from_cache},
                          {"transfer",
                           {{"write_seconds", write_seconds},
                            {"read_seconds", read_seconds},
                            {"write_bytes", write_bytes},
                            {"read_bytes", read_bytes}}}};
  if (!(error_l2 <= policy.max_relative_error)) {
    reply["status"] = "wrong_answer";
    reply["error"] = std::isfinite(error_l2) ? error_l2 : -1.0;
    reply["message"] = "relative L2 error " + std::to_string(error_l2) + " exceeds " +
                       std::to_string(policy.max_relative_error);
    return reply;
  }

  for (int i = 1; i < policy.warmup; ++i) run(1);
  int number = policy.number;
  if (number <= 0) {
    const double once = run(1);
    number = static_cast<int>(std::ceil(policy.min_repeat_ms / 1e3 / std::max(once, 1e-9)));
    number = std::clamp(number, 1, 1 << 16);
  }
  std::vector<double> costs;
  for (int r = 0; r < std::max(1, policy.repeat); ++r) costs.push_back(run(number));
  reply["status"] = "ok";
  reply["costs"] = costs;
  reply["error"] = error_l2;
  reply["number"] = number;
  return reply;
}

}  // namespace optune::measure
