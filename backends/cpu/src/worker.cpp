// The CPU backend's worker side: a candidate is a shared object exporting kCandidateSymbol,
// loaded into this (the worker's) process and called on the host operands.
#include "worker.hpp"

#include "optune/backends/cpu/backend.hpp"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <dlfcn.h>

#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/kernels/cpu/candidate.hpp"

namespace optune::backends::cpu {
namespace {

using Clock = std::chrono::steady_clock;

// An operator's candidate, called with its inputs' addresses and its output's, on the host bytes
// of Operands::values themselves (the loop poisons and restores them there).
class SharedObjectCandidate final : public measure::LoadedCandidate {
 public:
  SharedObjectCandidate(void* handle, kernels::CandidateFunction function, measure::KernelOperands& operands)
      : handle_(handle), function_(function), operands_(operands) {}
  ~SharedObjectCandidate() override { dlclose(handle_); }

  void poison_output() override {}
  double run(int times) override {
    const std::vector<void*> operands = measure::argument_pointers(operands_);
    const std::vector<const void*> inputs(operands.begin(), operands.end() - 1);
    void* output = operands.back();
    const auto start = Clock::now();
    for (int i = 0; i < times; ++i) function_(inputs.data(), output);
    return std::chrono::duration<double>(Clock::now() - start).count() / times;
  }

 private:
  void* handle_;
  kernels::CandidateFunction function_;
  measure::KernelOperands& operands_;
};

// A user kernel's candidate: the shared object's trampoline (kernel_file_template.cpp) takes every
// argument's address in kernel order, and runs on the host bytes of Operands::values themselves.
class UserKernelCandidate final : public measure::LoadedCandidate {
 public:
  UserKernelCandidate(void* handle, kernels::UserKernelFunction function, measure::KernelOperands& operands)
      : handle_(handle), function_(function), operands_(operands) {}
  ~UserKernelCandidate() override { dlclose(handle_); }

  void poison_output() override {}  // the loop poisoned the very bytes the kernel reads
  double run(int times) override {
    const std::vector<void*> args = measure::argument_pointers(operands_);
    const auto start = Clock::now();
    for (int i = 0; i < times; ++i) function_(args.data());
    return std::chrono::duration<double>(Clock::now() - start).count() / times;
  }

 private:
  void* handle_;
  kernels::UserKernelFunction function_;
  measure::KernelOperands& operands_;
};

void* open_shared_object(const std::string& path, measure::WorkerReply& reply) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) reply = measure::failure_reply("runtime_error", std::string("dlopen: ") + dlerror());
  return handle;
}

template <typename Function>
Function find_symbol(void* handle, const char* name, measure::WorkerReply& reply) {
  auto function = reinterpret_cast<Function>(dlsym(handle, name));
  if (!function) reply = measure::failure_reply("runtime_error", std::string("dlsym: ") + dlerror());
  return function;
}

// Runs the reference compiled into a candidate's object and keeps its outputs as the expected ones.
bool run_reference_in(void* handle, measure::KernelOperands& operands, measure::WorkerReply& reply) {
  auto reference = find_symbol<kernels::UserKernelFunction>(handle, kernels::kUserReferenceSymbol, reply);
  if (!reference) {
    reply = measure::failure_reply("reference_error", "the check's reference '" + operands.check.entry +
                                                          "' is not in the candidate's object: " + reply.message);
    return false;
  }
  measure::reset_for_run(operands, 0);
  reference(measure::argument_pointers(operands).data());
  if (const std::string problem = measure::take_reference_outputs(operands); !problem.empty()) {
    reply = measure::failure_reply("reference_error", "the check's reference '" + operands.check.entry + "' " + problem);
    return false;
  }
  return true;
}

std::unique_ptr<measure::LoadedCandidate> load_user_kernel(const measure::WorkerRequest& request,
                                                           measure::KernelOperands& operands,
                                                           measure::WorkerReply& reply) {
  void* handle = open_shared_object(request.artifact, reply);
  if (!handle) return nullptr;
  auto function = find_symbol<kernels::UserKernelFunction>(handle, kernels::kUserKernelSymbol, reply);
  // The reference is in every candidate's object. The runner has it run on its own first
  // (run_reference); a runner that did not gets it run here, by the problem's first candidate.
  if (function && operands.needs_reference() && !run_reference_in(handle, operands, reply)) function = nullptr;
  if (!function) {
    dlclose(handle);
    return nullptr;
  }
  return std::make_unique<UserKernelCandidate>(handle, function, operands);
}

}  // namespace

bool CpuWorker::run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                              measure::WorkerReply& reply) {
  if (!operands.values.needs_reference()) return true;
  void* handle = open_shared_object(request.artifact, reply);  // the candidate's fault when it fails
  if (!handle) return false;
  const bool ran = run_reference_in(handle, operands.values, reply);
  dlclose(handle);
  return ran;
}

std::vector<kernels::DeviceInfo> CpuWorker::devices() { return {measure::detect_local_cpu()}; }

// The worker measures on the CPU it runs on, whatever triple the target names (a cross-built
// worker runs on that triple's CPU).
kernels::DeviceInfo CpuWorker::device(const kernels::Target&) { return measure::detect_local_cpu(); }

std::unique_ptr<measure::LoadedCandidate> CpuWorker::load(const measure::WorkerRequest& request,
                                                          measure::Operands& operands, measure::WorkerReply& reply) {
  if (request.kernel) return load_user_kernel(request, operands.values, reply);
  void* handle = open_shared_object(request.artifact, reply);
  if (!handle) return nullptr;
  auto function = find_symbol<kernels::CandidateFunction>(handle, kernels::kCandidateSymbol, reply);
  if (function && !request.run_time_knobs.empty()) {
    if (auto set_knobs = find_symbol<kernels::SetKnobsFunction>(handle, kernels::kSetKnobsSymbol, reply))
      set_knobs(request.run_time_knobs.data(), static_cast<int>(request.run_time_knobs.size()));
    else
      function = nullptr;
  }
  if (!function) {
    dlclose(handle);
    return nullptr;
  }
  return std::make_unique<SharedObjectCandidate>(handle, function, operands.values);
}

}  // namespace optune::backends::cpu

namespace optune::backends {

std::unique_ptr<measure::WorkerBackend> make_cpu_worker() { return std::make_unique<cpu::CpuWorker>(); }

}  // namespace optune::backends
