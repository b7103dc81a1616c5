#include "optune/kernels/opencl/runtime.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "embedded_sources.hpp"
#include "templates.hpp"
#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/kernels/opencl/program_text.hpp"
#include "optune/kernels/reference.hpp"

namespace optune::opencl {
namespace {

kernels::OpenCLKernel from_row(const TunedKernel& row) {
  kernels::OpenCLKernel kernel;
  kernel.source_file = row.source_file;
  kernel.kernel_name = row.kernel_name;
  kernel.build_options = row.build_options;
  kernel.dimensions = row.dimensions;
  kernel.global_size = row.global_size;
  kernel.local_size = row.local_size;
  kernel.scratch_bytes = row.scratch_bytes;
  return kernel;
}

}  // namespace

std::string_view kernel_source(std::string_view file) {
  for (const EmbeddedSource& source : embedded_sources())
    if (source.file == file) return source.text;
  throw std::invalid_argument("opencl: no kernel source " + std::string(file) + " in optune::opencl");
}

Runtime::Runtime(cl_command_queue queue, RuntimeOptions options) : options_(std::move(options)) {
  if (!queue) throw std::invalid_argument("opencl: Runtime needs a command queue");
  check(clRetainCommandQueue(queue), "clRetainCommandQueue");
  queue_ = Queue(queue);
  check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context_, &context_, nullptr), "clGetCommandQueueInfo");
  check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device_id_, &device_id_, nullptr),
        "clGetCommandQueueInfo");
  device_ = describe_device(device_id_);
}

kernels::OpenCLKernel Runtime::plan(const kernels::Workload& workload, const TunedTable& table, bool* tuned) const {
  std::lock_guard lock(mutex_);
  return plan_locked(workload, table, tuned);
}

kernels::OpenCLKernel Runtime::plan_locked(const kernels::Workload& workload, const TunedTable& table,
                                           bool* tuned) const {
  kernels::validate_workload(workload);
  const std::string key = workload.key();
  // A table tuned on another device may not even fit this one (work-group size, local memory).
  if (table.device == device_.name) {
    for (const TunedKernel& row : table.rows) {
      if (row.workload_key != key) continue;
      if (tuned) *tuned = true;
      return from_row(row);
    }
  }
  if (tuned) *tuned = false;
  if (auto found = defaults_.find(key); found != defaults_.end()) return found->second;
  const kernels::OpenCLTemplate& kernel_template = kernels::opencl_template_for(workload.op);
  const auto space = kernel_template.space(workload, device_);
  const auto config = kernel_template.default_config(workload, device_, space);
  return defaults_[key] = kernel_template.opencl_kernel(workload, device_, search_space::ConfigView(space, config));
}

Runtime::Built& Runtime::program_for(const kernels::OpenCLKernel& kernel, ProgramSource& source) {
  const std::string key = kernel.source_file + "\n" + kernel.build_options;
  if (auto found = programs_.find(key); found != programs_.end()) {
    source = ProgramSource::kMemory;
    return found->second;
  }
  const std::string text = with_includes(kernel_source(kernel.source_file),
                                         [](const std::string& name) { return std::string(kernel_source(name)); });
  ProgramBuild build = build_program(context_, device_id_, device_, text, kernel.build_options, options_.cache_dir);
  if (!build.program)
    throw std::runtime_error("opencl: " + kernel.source_file + " does not build with " + kernel.build_options +
                             ": " + build.log);
  source = build.from_cache ? ProgramSource::kDiskCache : ProgramSource::kBuilt;
  cl_int error = CL_SUCCESS;
  Kernel compiled(clCreateKernel(build.program.get(), kernel.kernel_name.c_str(), &error));
  check(error, "clCreateKernel");
  Buffer scratch;
  if (kernel.scratch_bytes > 0) scratch = zeroed_buffer(context_, queue_.get(), kernel.scratch_bytes);
  return programs_[key] = Built{std::move(build.program), std::move(compiled), std::move(scratch), Event{}};
}

void Runtime::check_buffer(cl_mem buffer, std::size_t needed_bytes, const kernels::Workload& workload,
                           const std::string& role) const {
  std::size_t bytes = 0;
  if (!buffer || clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr) != CL_SUCCESS)
    throw std::invalid_argument("opencl: " + workload.key() + ": the " + role + " is not a buffer");
  if (bytes < needed_bytes)
    throw std::invalid_argument("opencl: " + workload.key() + ": the " + role + " holds " + std::to_string(bytes) +
                                " bytes, it needs " + std::to_string(needed_bytes));
}

Launch Runtime::run(const kernels::Workload& workload, const TunedTable& table, std::span<const cl_mem> inputs,
                    cl_mem output) {
  std::lock_guard lock(mutex_);
  Launch launch;
  launch.kernel = plan_locked(workload, table, &launch.tuned);
  // Buffers hold the operands in their types: s8 inputs and an int32 output for i8 (reference.hpp).
  const auto operands = kernels::operator_operands(workload);
  const auto bytes = [](const kernels::OperandDescription& operand) {
    return operand.count * kernels::data_type_bytes(operand.dtype);
  };
  if (inputs.size() + 1 != operands.size())
    throw std::invalid_argument("opencl: " + workload.key() + " takes " + std::to_string(operands.size() - 1) +
                                " inputs, got " + std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    check_buffer(inputs[i], bytes(operands[i]), workload, "input " + std::to_string(i));
  check_buffer(output, bytes(operands.back()), workload, "output");

  Built& built = program_for(launch.kernel, launch.program);
  cl_uint argument = 0;
  for (cl_mem input : inputs) check(clSetKernelArg(built.kernel.get(), argument++, sizeof input, &input), "clSetKernelArg");
  check(clSetKernelArg(built.kernel.get(), argument++, sizeof output, &output), "clSetKernelArg");
  if (cl_mem scratch = built.scratch.get())
    check(clSetKernelArg(built.kernel.get(), argument, sizeof scratch, &scratch), "clSetKernelArg");
  const auto& k = launch.kernel;
  // Launches sharing a scratch buffer must not overlap: on an out-of-order queue the event chain
  // orders them, as an in-order queue does anyway.
  cl_event previous = built.last_launch.get(), raw = nullptr;
  check(clEnqueueNDRangeKernel(queue_.get(), built.kernel.get(), static_cast<cl_uint>(k.dimensions), nullptr,
                               k.global_size.data(), k.local_size.data(), previous ? 1 : 0,
                               previous ? &previous : nullptr, built.scratch ? &raw : nullptr),
        "clEnqueueNDRangeKernel");
  if (built.scratch) built.last_launch = Event(raw);
  return launch;
}

Launch gemm(Runtime& runtime, const TunedTable& table, std::int64_t M, std::int64_t N, std::int64_t K, cl_mem A,
            cl_mem B, cl_mem C, kernels::DataType dtype) {
  const kernels::Workload workload{kernels::Op::kGemm, dtype, kernels::GemmShape{M, N, K}};
  const cl_mem inputs[] = {A, B};
  return runtime.run(workload, table, inputs, C);
}

Launch conv2d(Runtime& runtime, const TunedTable& table, const kernels::Conv2dShape& shape, cl_mem input,
              cl_mem filter, cl_mem output, kernels::DataType dtype) {
  const kernels::Workload workload{kernels::Op::kConv2d, dtype, shape};
  const cl_mem inputs[] = {input, filter};
  return runtime.run(workload, table, inputs, output);
}

Launch depthwise_conv2d(Runtime& runtime, const TunedTable& table, kernels::Conv2dShape shape, cl_mem input,
                        cl_mem filter, cl_mem output, kernels::DataType dtype) {
  shape.K = shape.groups = shape.C;
  const kernels::Workload workload{kernels::Op::kDepthwiseConv2d, dtype, shape};
  const cl_mem inputs[] = {input, filter};
  return runtime.run(workload, table, inputs, output);
}

}  // namespace optune::opencl
