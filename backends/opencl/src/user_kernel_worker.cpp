// The OpenCL worker's side of a user kernel (a kernel file): one device buffer per buffer
// argument, a guard's bytes longer than its elements, scalars passed by value in their dtype, the
// reference kernel run once per problem, and the candidate launched with the file's sizes.
#include "worker.hpp"

#include <vector>

#include "optune/backends/opencl/artifact.hpp"
#include "optune/kernels/opencl/program_cache.hpp"

namespace optune::backends::opencl {
namespace cl = measure::cl;
namespace {

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

// Host -> device for every buffer, guards included; seconds and bytes added to `transfers`.
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

class UserKernelCandidate final : public BuiltCandidate {
 public:
  UserKernelCandidate(cl::Program program, cl::Kernel kernel, kernels::OpenCLKernel launch, cl_command_queue queue,
                      measure::KernelOperands& operands, const std::vector<cl::Buffer>& buffers, double build_seconds,
                      bool from_cache)
      : BuiltCandidate(std::move(program), std::move(kernel), std::move(launch), queue, build_seconds, from_cache),
        operands_(operands), buffers_(buffers) {}

  void poison_output() override {
    transfers_ = {};
    upload(queue_, operands_, buffers_, transfers_);
  }

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

  const float* output() override { return nullptr; }
  void fetch_outputs() override { download_outputs(queue_, operands_, buffers_, transfers_); }

 private:
  measure::KernelOperands& operands_;
  const std::vector<cl::Buffer>& buffers_;
};

}  // namespace

void OpenCLWorker::allocate_kernel_buffers(const measure::KernelOperands& operands) {
  if (kernel_buffers_for_ == operands.id) return;
  kernel_buffers_for_.clear();
  kernel_buffers_.clear();
  cl_int error = CL_SUCCESS;
  for (const auto& arg : operands.args) {
    if (!arg.spec.is_buffer) {
      kernel_buffers_.emplace_back();
      continue;
    }
    kernel_buffers_.emplace_back(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, arg.bytes.size(), nullptr, &error));
    cl::check(error, "clCreateBuffer");
  }
  kernel_buffers_for_ = operands.id;
}

// Runs the file's reference kernel on the operands' initial values and keeps its outputs as the
// expected ones. False with `reply` saying why when it does not build or run.
bool OpenCLWorker::run_kernel_reference(measure::KernelOperands& operands, const std::string& cache_dir,
                                        measure::WorkerReply& reply) {
  const measure::KernelCheckSpec& check = operands.check;
  optune::opencl::ProgramBuild build = optune::opencl::build_program(context_.get(), device_.device, device_.info,
                                                                     check.source, check.build_options, cache_dir);
  if (!build.program) {
    reply = measure::failure_reply("reference_error", "the check's reference kernel '" + check.entry +
                                                          "' does not build: " + clipped_build_log(build.log));
    return false;
  }
  cl_int error = CL_SUCCESS;
  cl::Kernel kernel(clCreateKernel(build.program.get(), check.entry.c_str(), &error));
  cl::check(error, "clCreateKernel");
  set_arguments(kernel.get(), operands, kernel_buffers_);
  measure::reset_for_run(operands, 0);
  measure::Transfers ignored;
  upload(queue_.get(), operands, kernel_buffers_, ignored);
  const auto global = sizes(check.launch.global);
  const auto local = sizes(check.launch.local);
  cl::Event done(launch(queue_.get(), kernel.get(), check.launch.dimensions, global,
                        check.launch.has_local ? &local : nullptr));
  cl::check(clFinish(queue_.get()), "clFinish (reference)");
  download_outputs(queue_.get(), operands, kernel_buffers_, ignored);
  if (const std::string problem = measure::take_reference_outputs(operands); !problem.empty()) {
    reply = measure::failure_reply("reference_error", "the check's reference kernel '" + check.entry + "' " + problem);
    return false;
  }
  return true;
}

std::unique_ptr<measure::LoadedCandidate> OpenCLWorker::load_user_kernel(const measure::WorkerRequest& request,
                                                                         measure::KernelOperands& operands,
                                                                         measure::WorkerReply& reply) {
  const measure::OpenCLArtifact artifact = measure::read_opencl_artifact(request.artifact);
  if (artifact.workload_key != request.workload) {
    reply = measure::failure_reply("runtime_error", "artifact is for " + artifact.workload_key + ", not " + request.workload);
    return nullptr;
  }
  // The runner has the reference run on its own first (run_reference); a runner that did not gets
  // it run here, by the problem's first candidate.
  if (operands.needs_reference() && !run_kernel_reference(operands, request.cache_dir, reply)) return nullptr;
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
  set_arguments(kernel.get(), operands, kernel_buffers_);
  return std::make_unique<UserKernelCandidate>(std::move(build.program), std::move(kernel), artifact.kernel,
                                               queue_.get(), operands, kernel_buffers_, build.seconds, build.from_cache);
}

bool OpenCLWorker::run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                                 measure::WorkerReply& reply) {
  return !operands.kernel.needs_reference() || run_kernel_reference(operands.kernel, request.cache_dir, reply);
}

}  // namespace optune::backends::opencl
