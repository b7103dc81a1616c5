#include "worker.hpp"

#include "optune/backends/opencl/backend.hpp"

#include <vector>

#include "optune/backends/opencl/artifact.hpp"
#include "optune/backends/opencl/devices.hpp"
#include "optune/kernels/opencl/program_cache.hpp"

namespace optune::backends::opencl {
namespace cl = measure::cl;

void set_arguments(cl_kernel kernel, measure::KernelOperands& operands, const std::vector<cl::Buffer>& buffers) {
  for (std::size_t i = 0; i < operands.args.size(); ++i) {
    const measure::HostArgument& arg = operands.args[i];
    const auto index = static_cast<cl_uint>(i);
    if (arg.spec.is_buffer) {
      cl_mem mem = buffers[i].get();
      cl::check(clSetKernelArg(kernel, index, sizeof mem, &mem), "clSetKernelArg");
    } else {
      cl::check(clSetKernelArg(kernel, index, arg.size(), arg.bytes.data()), "clSetKernelArg");
    }
  }
}

void upload(cl_command_queue queue, const measure::KernelOperands& operands, const std::vector<cl::Buffer>& buffers,
            measure::Transfers& transfers) {
  for (std::size_t i = 0; i < operands.args.size(); ++i) {
    const measure::HostArgument& arg = operands.args[i];
    if (!arg.spec.is_buffer) continue;
    cl_event raw = nullptr;
    cl::check(clEnqueueWriteBuffer(queue, buffers[i].get(), CL_TRUE, 0, arg.bytes.size(), arg.bytes.data(), 0, nullptr,
                                   &raw),
              "clEnqueueWriteBuffer");
    cl::Event event(raw);
    transfers.write_seconds += cl::event_seconds(event.get());
    transfers.write_bytes += double(arg.bytes.size());
  }
}

void download_outputs(cl_command_queue queue, measure::KernelOperands& operands, const std::vector<cl::Buffer>& buffers,
                      measure::Transfers& transfers) {
  transfers.read_seconds = transfers.read_bytes = 0;
  for (std::size_t i = 0; i < operands.args.size(); ++i) {
    measure::HostArgument& arg = operands.args[i];
    if (!arg.spec.is_buffer || !arg.spec.is_output) continue;
    cl_event raw = nullptr;
    cl::check(clEnqueueReadBuffer(queue, buffers[i].get(), CL_TRUE, 0, arg.bytes.size(), arg.bytes.data(), 0, nullptr,
                                  &raw),
              "clEnqueueReadBuffer");
    cl::Event event(raw);
    transfers.read_seconds += cl::event_seconds(event.get());
    transfers.read_bytes += double(arg.bytes.size());
  }
}

cl_event launch(cl_command_queue queue, cl_kernel kernel, int dimensions, const std::array<std::size_t, 3>& global,
                const std::array<std::size_t, 3>* local) {
  cl_event raw = nullptr;
  cl::check(clEnqueueNDRangeKernel(queue, kernel, static_cast<cl_uint>(dimensions), nullptr, global.data(),
                                   local ? local->data() : nullptr, 0, nullptr, &raw),
            "clEnqueueNDRangeKernel");
  return raw;
}

std::array<std::size_t, 3> sizes(const std::array<std::int64_t, 3>& values) {
  return {static_cast<std::size_t>(values[0]), static_cast<std::size_t>(values[1]), static_cast<std::size_t>(values[2])};
}

namespace {

// One candidate, an operator's or a kernel file's: its arguments are the operands' device
// buffers in order (and, for an operator's split-K kernel, a scratch buffer of its own); the loop's
// poisoned and restored host bytes go up before each checked run, the outputs come back after it.
class ProgramCandidate final : public BuiltCandidate {
 public:
  ProgramCandidate(cl::Program program, cl::Kernel kernel, kernels::OpenCLKernel launch, cl_command_queue queue,
                   measure::KernelOperands& operands, const std::vector<cl::Buffer>& buffers, cl::Buffer scratch,
                   double build_seconds, bool from_cache)
      : BuiltCandidate(std::move(program), std::move(kernel), std::move(launch), queue, build_seconds, from_cache),
        operands_(operands), buffers_(buffers), scratch_(std::move(scratch)) {}

  void poison_output() override {
    transfers_ = {};
    upload(queue_, operands_, buffers_, transfers_);
  }

  // A call's time: the kernel's, from its profiling events.
  double run(int times) override {
    std::vector<cl::Event> events;
    events.reserve(times);
    for (int i = 0; i < times; ++i)
      events.emplace_back(launch(queue_, kernel_.get(), launch_.dimensions, launch_.global_size, &launch_.local_size));
    cl::check(clFinish(queue_), "clFinish");
    double seconds = 0;
    for (const auto& event : events) seconds += cl::event_seconds(event.get());
    return seconds / times;
  }

  void fetch_outputs() override { download_outputs(queue_, operands_, buffers_, transfers_); }

 private:
  measure::KernelOperands& operands_;
  const std::vector<cl::Buffer>& buffers_;
  cl::Buffer scratch_;  // the kernel's, for this candidate alone
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
  buffers_.clear();
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

void OpenCLWorker::allocate_buffers(const measure::KernelOperands& operands) {
  if (buffers_for_ == operands.id) return;
  buffers_for_.clear();
  buffers_.clear();
  cl_int error = CL_SUCCESS;
  for (const auto& arg : operands.args) {
    if (!arg.spec.is_buffer) {
      buffers_.emplace_back();
      continue;
    }
    buffers_.emplace_back(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, arg.bytes.size(), nullptr, &error));
    cl::check(error, "clCreateBuffer");
  }
  buffers_for_ = operands.id;
}

void OpenCLWorker::prepare(const measure::WorkerRequest& request, const measure::Operands& operands) {
  open(request.target);
  allocate_buffers(operands.values);
}

std::unique_ptr<measure::LoadedCandidate> OpenCLWorker::load(const measure::WorkerRequest& request,
                                                             measure::Operands& operands, measure::WorkerReply& reply) {
  const measure::OpenCLArtifact artifact = measure::read_opencl_artifact(request.artifact);
  if (artifact.workload_key != request.workload) {
    reply = measure::failure_reply("runtime_error", "artifact is for " + artifact.workload_key + ", not " + request.workload);
    return nullptr;
  }
  // The runner has a kernel file's reference run on its own first (run_reference); a runner that
  // did not gets it run here, by the problem's first candidate.
  if (operands.values.needs_reference() && !run_kernel_reference(operands.values, request.cache_dir, reply))
    return nullptr;
  optune::opencl::ProgramBuild build = optune::opencl::build_program(
      context_.get(), device_.device, device_.info, artifact.source, artifact.kernel.build_options, request.cache_dir);
  if (!build.program) {
    reply = measure::failure_reply("build_error", "OpenCL build failed: " + clipped_build_log(build.log));
    reply.build_seconds = build.seconds;
    return nullptr;
  }
  cl_int error = CL_SUCCESS;
  cl::Kernel kernel(clCreateKernel(build.program.get(), artifact.kernel.kernel_name.c_str(), &error));
  if (error != CL_SUCCESS) {
    reply = measure::failure_reply("build_error", "the program has no kernel '" + artifact.kernel.kernel_name + "' (" +
                                                      cl::error_name(error) + ")");
    return nullptr;
  }
  set_arguments(kernel.get(), operands.values, buffers_);
  // A scratch buffer of its own, zero-filled: a candidate that crashed or left it dirty harms no
  // other candidate.
  cl::Buffer scratch;
  if (artifact.kernel.scratch_bytes > 0) {
    scratch = optune::opencl::zeroed_buffer(context_.get(), queue_.get(), artifact.kernel.scratch_bytes);
    cl_mem mem = scratch.get();
    const auto index = static_cast<cl_uint>(operands.values.args.size());
    cl::check(clSetKernelArg(kernel.get(), index, sizeof mem, &mem), "clSetKernelArg");
  }
  return std::make_unique<ProgramCandidate>(std::move(build.program), std::move(kernel), artifact.kernel, queue_.get(),
                                            operands.values, buffers_, std::move(scratch), build.seconds,
                                            build.from_cache);
}

}  // namespace optune::backends::opencl

namespace optune::backends {

std::unique_ptr<measure::WorkerBackend> make_opencl_worker() { return std::make_unique<opencl::OpenCLWorker>(); }

}  // namespace optune::backends
