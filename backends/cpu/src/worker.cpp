// The CPU backend's worker side: a candidate is a shared object exporting kCandidateSymbol,
// loaded into this (the worker's) process and called on the host operands.
#include "worker.hpp"

#include "optune/backends/cpu/backend.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include <dlfcn.h>

#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/kernels/cpu/candidate.hpp"

namespace optune::backends::cpu {
namespace {

using Clock = std::chrono::steady_clock;

class SharedObjectCandidate final : public measure::LoadedCandidate {
 public:
  SharedObjectCandidate(void* handle, kernels::CandidateFunction function, measure::Operands& operands)
      : handle_(handle), function_(function), operands_(operands) {}
  ~SharedObjectCandidate() override { dlclose(handle_); }

  void poison_output() override {
    std::fill_n(operands_.output.get(), operands_.output_size, std::nanf(""));
  }
  double run(int times) override {
    const auto start = Clock::now();
    for (int i = 0; i < times; ++i) function_(operands_.input_pointers.data(), operands_.output.get());
    return std::chrono::duration<double>(Clock::now() - start).count() / times;
  }
  const float* output() override { return operands_.output.get(); }

 private:
  void* handle_;
  kernels::CandidateFunction function_;
  measure::Operands& operands_;
};

}  // namespace

std::vector<kernels::DeviceInfo> CpuWorker::devices() { return {measure::detect_local_cpu()}; }

// The worker measures on the CPU it runs on, whatever triple the target names (a cross-built
// worker runs on that triple's CPU).
kernels::DeviceInfo CpuWorker::device(const kernels::Target&) { return measure::detect_local_cpu(); }

std::unique_ptr<measure::LoadedCandidate> CpuWorker::load(const measure::WorkerRequest& request,
                                                          measure::Operands& operands, measure::WorkerReply& reply) {
  void* handle = dlopen(request.artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    reply = measure::failure_reply("runtime_error", std::string("dlopen: ") + dlerror());
    return nullptr;
  }
  auto function = reinterpret_cast<kernels::CandidateFunction>(dlsym(handle, kernels::kCandidateSymbol));
  if (!function) {
    reply = measure::failure_reply("runtime_error", std::string("dlsym: ") + dlerror());
    dlclose(handle);
    return nullptr;
  }
  return std::make_unique<SharedObjectCandidate>(handle, function, operands);
}

}  // namespace optune::backends::cpu

namespace optune::backends {

std::unique_ptr<measure::WorkerBackend> make_cpu_worker() { return std::make_unique<cpu::CpuWorker>(); }

}  // namespace optune::backends
