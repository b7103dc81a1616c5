// The CPU backend's worker side (measure/worker_backend.hpp).
#pragma once

#include "optune/measure/worker_backend.hpp"

namespace optune::backends::cpu {

class CpuWorker final : public measure::WorkerBackend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::vector<kernels::DeviceInfo> devices() override;
  kernels::DeviceInfo device(const kernels::Target& target) override;
  std::unique_ptr<measure::LoadedCandidate> load(const measure::WorkerRequest& request, measure::Operands& operands,
                                                 measure::WorkerReply& reply) override;
  bool run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                     measure::WorkerReply& reply) override;
};

}  // namespace optune::backends::cpu
