// The CUDA backend's worker side (measure/worker_backend.hpp): the target's device's primary
// context and a stream, and a device buffer per operand of the current workload, kept between
// requests. A candidate is an artifact (artifact.hpp) whose module is loaded and started with the
// operands' buffers and scalars; its launches are timed with CUDA events, its copies apart.
// A fault that leaves the context unusable (an illegal address, a trap: driver_api.hpp's
// is_sticky) is one record, and the process asks to be replaced (needs_fresh_process).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "artifact.hpp"
#include "driver_handles.hpp"
#include "gpu_sharing.hpp"
#include "optune/measure/kernel_operands.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends::cuda {

class CudaWorker final : public measure::WorkerBackend {
 public:
  ~CudaWorker() override;
  std::string_view name() const override { return "cuda"; }
  std::vector<kernels::DeviceInfo> devices() override;
  kernels::DeviceInfo device(const kernels::Target& target) override;
  void prepare(const measure::WorkerRequest& request, const measure::Operands& operands) override;
  std::unique_ptr<measure::LoadedCandidate> load(const measure::WorkerRequest& request, measure::Operands& operands,
                                                 measure::WorkerReply& reply) override;
  bool run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                     measure::WorkerReply& reply) override;
  void reset() override;
  bool needs_fresh_process() const override { return poisoned_; }
  // Other processes' share of the GPU since then (gpu_sharing.hpp); nullopt without NVML.
  std::optional<double> device_load_since(const measure::WorkerRequest& request, double since_unix_seconds) override;

 private:
  void open(int ordinal);
  void allocate_buffers(const measure::KernelOperands& operands);
  // The artifact's module, or nullopt with `reply` a build_error where the device cannot load it.
  std::optional<Module> load_module(const CudaArtifact& artifact, measure::WorkerReply& reply);
  bool run_kernel_reference(const CudaArtifact& artifact, measure::KernelOperands& operands, measure::WorkerReply& reply);

  std::optional<int> ordinal_;  // the device the context is for; nullopt: none yet (or dropped)
  std::unique_ptr<PrimaryContext> context_;
  Stream stream_;
  std::string buffers_for_;            // KernelOperands::id of buffers_
  std::vector<DeviceMemory> buffers_;  // one per operand (empty for scalars)
  bool poisoned_ = false;              // a sticky fault happened: this process measures no more
  std::unique_ptr<GpuSharing> sharing_;  // NVML's view of the context's GPU
};

}  // namespace optune::backends::cuda
