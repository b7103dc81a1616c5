#include "worker.hpp"

#include "optune/backends/opencl/backend.hpp"

#include <limits>
#include <vector>

#include "optune/backends/opencl/artifact.hpp"
#include "optune/backends/opencl/devices.hpp"
#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/kernels/reference.hpp"

namespace optune::backends::opencl {
namespace cl = measure::cl;
namespace {

class ProgramCandidate final : public BuiltCandidate {
 public:
  ProgramCandidate(cl::Program program, cl::Kernel kernel, kernels::OpenCLKernel launch, cl_command_queue queue,
                   cl_mem output, cl::Buffer scratch, std::size_t output_size, measure::Transfers transfers,
                   double build_seconds, bool from_cache)
      : BuiltCandidate(std::move(program), std::move(kernel), std::move(launch), queue, build_seconds, from_cache),
        output_(output), scratch_(std::move(scratch)), host_output_(output_size) {
    transfers_ = transfers;
  }

  void poison_output() override {
    const std::vector<float> poison(host_output_.size(), std::numeric_limits<float>::quiet_NaN());
    cl::check(clEnqueueWriteBuffer(queue_, output_, CL_TRUE, 0, poison.size() * sizeof(float), poison.data(), 0,
                                   nullptr, nullptr),
              "clEnqueueWriteBuffer");
  }

  // A call's time: the kernel's, from its profiling events.
  double run(int times) override {
    std::vector<cl::Event> events;
    events.reserve(times);
    for (int i = 0; i < times; ++i) {
      cl_event raw = nullptr;
      cl::check(clEnqueueNDRangeKernel(queue_, kernel_.get(), launch_.dimensions, nullptr, launch_.global_size.data(),
                                       launch_.local_size.data(), 0, nullptr, &raw),
                "clEnqueueNDRangeKernel");
      events.emplace_back(raw);
    }
    cl::check(clFinish(queue_), "clFinish");
    double seconds = 0;
    for (const cl::Event& event : events) seconds += cl::event_seconds(event.get());
    return seconds / times;
  }

  const float* output() override {
    cl_event raw = nullptr;
    cl::check(clEnqueueReadBuffer(queue_, output_, CL_TRUE, 0, host_output_.size() * sizeof(float),
                                  host_output_.data(), 0, nullptr, &raw),
              "clEnqueueReadBuffer");
    cl::Event read(raw);
    transfers_.read_seconds = cl::event_seconds(read.get());
    transfers_.read_bytes = double(host_output_.size() * sizeof(float));
    return host_output_.data();
  }

 private:
  cl_mem output_;
  cl::Buffer scratch_;  // the kernel's, for this candidate alone
  std::vector<float> host_output_;
};

}  // namespace

std::string clipped_build_log(std::string log) {
  constexpr std::size_t kMaxLogBytes = 4000;
  if (log.size() > kMaxLogBytes) log = log.substr(0, kMaxLogBytes) + "\n[...]";
  return log;
}

std::vector<kernels::DeviceInfo> OpenCLWorker::devices() { return measure::list_opencl_devices(); }

kernels::DeviceInfo OpenCLWorker::device(const kernels::Target& target) { return measure::find_opencl_device(target); }

void OpenCLWorker::open(const std::string& target_text) {
  if (target_ == target_text && context_) return;
  target_.clear();
  buffers_for_.clear();
  inputs_.clear();
  output_.reset();
  kernel_buffers_for_.clear();
  kernel_buffers_.clear();
  queue_.reset();
  context_.reset();
  device_ = cl::select_device(kernels::split_target(target_text));
  cl_int error = CL_SUCCESS;
  context_ = cl::Context(clCreateContext(nullptr, 1, &device_.device, nullptr, nullptr, &error));
  cl::check(error, "clCreateContext");
  queue_ = cl::Queue(clCreateCommandQueue(context_.get(), device_.device, CL_QUEUE_PROFILING_ENABLE, &error));
  cl::check(error, "clCreateCommandQueue");
  target_ = target_text;
}

void OpenCLWorker::allocate_buffers(const measure::Operands& operands) {
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

void OpenCLWorker::prepare(const measure::WorkerRequest& request, const measure::Operands& operands) {
  open(request.target);
  if (request.kernel) allocate_kernel_buffers(operands.kernel);
  else allocate_buffers(operands);
}

std::unique_ptr<measure::LoadedCandidate> OpenCLWorker::load(const measure::WorkerRequest& request,
                                                             measure::Operands& operands, measure::WorkerReply& reply) {
  if (request.kernel) return load_user_kernel(request, operands.kernel, reply);
  const measure::OpenCLArtifact artifact = measure::read_opencl_artifact(request.artifact);
  if (artifact.workload_key != operands.workload_key) {
    reply = measure::failure_reply("runtime_error",
                                   "artifact is for " + artifact.workload_key + ", not " + operands.workload_key);
    return nullptr;
  }
  optune::opencl::ProgramBuild build = optune::opencl::build_program(
      context_.get(), device_.device, device_.info, artifact.source, artifact.kernel.build_options, request.cache_dir);
  if (!build.program) {
    reply = measure::failure_reply("build_error", "OpenCL build failed: " + clipped_build_log(build.log));
    reply.build_seconds = build.seconds;
    return nullptr;
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
  cl::check(clSetKernelArg(kernel.get(), argument++, sizeof out, &out), "clSetKernelArg");
  // A scratch buffer of its own, zero-filled: a candidate that crashed or left it dirty harms no
  // other candidate.
  cl::Buffer scratch;
  if (artifact.kernel.scratch_bytes > 0) {
    scratch = optune::opencl::zeroed_buffer(context_.get(), queue_.get(), artifact.kernel.scratch_bytes);
    cl_mem mem = scratch.get();
    cl::check(clSetKernelArg(kernel.get(), argument, sizeof mem, &mem), "clSetKernelArg");
  }

  // Host -> device, timed apart from the kernel.
  measure::Transfers transfers;
  const auto sizes = kernels::input_sizes(kernels::parse_workload_key(operands.workload_key));
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    cl_event raw = nullptr;
    cl::check(clEnqueueWriteBuffer(queue_.get(), inputs_[i].get(), CL_TRUE, 0, sizes[i] * sizeof(float),
                                   operands.input_pointers[i], 0, nullptr, &raw),
              "clEnqueueWriteBuffer");
    cl::Event event(raw);
    transfers.write_seconds += cl::event_seconds(event.get());
    transfers.write_bytes += double(sizes[i] * sizeof(float));
  }
  return std::make_unique<ProgramCandidate>(std::move(build.program), std::move(kernel), artifact.kernel, queue_.get(),
                                            output_.get(), std::move(scratch), operands.output_size, transfers,
                                            build.seconds, build.from_cache);
}

}  // namespace optune::backends::opencl

namespace optune::backends {

std::unique_ptr<measure::WorkerBackend> make_opencl_worker() { return std::make_unique<opencl::OpenCLWorker>(); }

}  // namespace optune::backends
