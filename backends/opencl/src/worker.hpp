// The OpenCL backend's worker side (measure/worker_backend.hpp): keeps a context and queue for the
// target's device, and a device buffer per operand of the current workload (an operator's or a
// kernel file's: one typed model, measure/worker_operands.hpp), between requests. A candidate is
// an artifact (artifact.hpp) compiled through the program cache; its operands are uploaded and its
// outputs read back with both copies timed apart from the kernel, which is timed with profiling
// events.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "opencl_api.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends::opencl {

// A build log as a record keeps it: the first errors are the useful ones.
std::string clipped_build_log(std::string log);

// The operands as kernel arguments, in order: buffers by their device buffer, scalars by value.
void set_arguments(cl_kernel kernel, measure::KernelOperands& operands, const std::vector<measure::cl::Buffer>& buffers);
// Host -> device for every buffer, guards included; seconds and bytes added to `transfers`.
void upload(cl_command_queue queue, const measure::KernelOperands& operands,
            const std::vector<measure::cl::Buffer>& buffers, measure::Transfers& transfers);
// Device -> host for every output buffer, guards included; `transfers`' reads are these copies.
void download_outputs(cl_command_queue queue, measure::KernelOperands& operands,
                      const std::vector<measure::cl::Buffer>& buffers, measure::Transfers& transfers);
// Enqueues one launch; its event, which the caller owns.
cl_event launch(cl_command_queue queue, cl_kernel kernel, int dimensions, const std::array<std::size_t, 3>& global,
                const std::array<std::size_t, 3>* local);
std::array<std::size_t, 3> sizes(const std::array<std::int64_t, 3>& values);

// What every loaded OpenCL candidate holds (its program, kernel and launch, the queue it runs on,
// the copies' times) and reports of its build: built-in templates and user kernels alike.
class BuiltCandidate : public measure::LoadedCandidate {
 public:
  BuiltCandidate(measure::cl::Program program, measure::cl::Kernel kernel, kernels::OpenCLKernel launch,
                 cl_command_queue queue, double build_seconds, bool from_cache)
      : program_(std::move(program)), kernel_(std::move(kernel)), launch_(std::move(launch)), queue_(queue),
        build_seconds_(build_seconds), from_cache_(from_cache) {}

  void describe(measure::WorkerReply& reply) const override {
    reply.build_seconds = build_seconds_;
    reply.program_cached = from_cache_;
    reply.transfer = transfers_;
  }

 protected:
  measure::cl::Program program_;
  measure::cl::Kernel kernel_;
  kernels::OpenCLKernel launch_;
  cl_command_queue queue_;
  measure::Transfers transfers_;

 private:
  double build_seconds_;
  bool from_cache_;
};

class OpenCLWorker final : public measure::WorkerBackend {
 public:
  std::string_view name() const override { return "opencl"; }
  std::vector<kernels::DeviceInfo> devices() override;
  kernels::DeviceInfo device(const kernels::Target& target) override;
  void prepare(const measure::WorkerRequest& request, const measure::Operands& operands) override;
  std::unique_ptr<measure::LoadedCandidate> load(const measure::WorkerRequest& request, measure::Operands& operands,
                                                 measure::WorkerReply& reply) override;
  bool run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                     measure::WorkerReply& reply) override;
  // A failed launch or wait may leave the context unusable (NVIDIA's does after a fault).
  void reset() override { target_.clear(); }

 private:
  void open(const std::string& target_text);
  void allocate_buffers(const measure::KernelOperands& operands);
  // A kernel file's check reference (kernel_reference.cpp).
  bool run_kernel_reference(measure::KernelOperands& operands, const std::string& cache_dir, measure::WorkerReply& reply);

  std::string target_;  // the device the context is for; "" = none yet (or lost)
  measure::cl::SelectedDevice device_;
  measure::cl::Context context_;
  measure::cl::Queue queue_;
  std::string buffers_for_;  // KernelOperands::id of buffers_
  std::vector<measure::cl::Buffer> buffers_;  // one per operand (empty for scalars)
};

}  // namespace optune::backends::opencl
