// The OpenCL worker's run of a kernel file's check reference: built from the file's reference
// source, launched once per problem with the file's sizes on the operands' initial values; its
// outputs become the expected ones.
#include "worker.hpp"

#include "optune/kernels/opencl/program_cache.hpp"

namespace optune::backends::opencl {
namespace cl = measure::cl;

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
  set_arguments(kernel.get(), operands, buffers_);
  measure::reset_for_run(operands, 0);
  measure::Transfers ignored;
  upload(queue_.get(), operands, buffers_, ignored);
  const auto global = sizes(check.launch.global);
  const auto local = sizes(check.launch.local);
  cl::Event done(launch(queue_.get(), kernel.get(), check.launch.dimensions, global,
                        check.launch.has_local ? &local : nullptr));
  cl::check(clFinish(queue_.get()), "clFinish (reference)");
  download_outputs(queue_.get(), operands, buffers_, ignored);
  if (const std::string problem = measure::take_reference_outputs(operands); !problem.empty()) {
    reply = measure::failure_reply("reference_error", "the check's reference kernel '" + check.entry + "' " + problem);
    return false;
  }
  return true;
}

bool OpenCLWorker::run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                                 measure::WorkerReply& reply) {
  return !operands.values.needs_reference() || run_kernel_reference(operands.values, request.cache_dir, reply);
}

}  // namespace optune::backends::opencl
