// The worker side of LocalRunner: loads one candidate at a time and times it (CPU candidates
// here, OpenCL ones in opencl_worker.cpp). Everything that can
// go wrong inside a candidate happens in this process, which the runner may lose and replace.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/measure/cpu_device.hpp"
#include "optune/measure/measure_result.hpp"
#include "optune/measure/opencl_devices.hpp"
#include "optune/measure/timing_policy.hpp"
#include "optune/measure/worker_protocol.hpp"
#include "worker_operands.hpp"
#ifdef OPTUNE_WORKER_CPU_ONLY
namespace optune::measure {
// A worker cross-built for a device without an OpenCL loader (tests/rpc's aarch64 worker): no
// OpenCL devices, and none measured.
struct OpenCLWorker {
  nlohmann::json measure(const nlohmann::json&, const Operands&, const TimingPolicy&) {
    return {{"status", "runtime_error"}, {"message", "this optune-worker was built without OpenCL"}};
  }
};
std::vector<kernels::DeviceInfo> list_opencl_devices() { return {}; }
kernels::DeviceInfo find_opencl_device(const kernels::Target& target) {
  throw std::invalid_argument("opencl: no device for target '" + target.str() +
                              "' (this optune-worker was built without OpenCL)");
}
}  // namespace optune::measure
#else
#include "opencl_worker.hpp"
#endif

namespace optune::measure {

Buffer allocate(std::size_t count) {
  std::size_t bytes = (count * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
  auto* p = static_cast<float*>(std::aligned_alloc(kAlignment, std::max(bytes, kAlignment)));
  if (!p) throw std::bad_alloc();
  return Buffer(p);
}

void prepare(Operands& operands, const std::string& key, std::uint64_t seed) {
  if (operands.workload_key == key) return;
  kernels::Workload workload = kernels::parse_workload_key(key);
  std::mt19937_64 rng(seed);
  // Never zeros: a kernel that skips work would pass a check on zero inputs.
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  operands = Operands{};
  for (std::size_t size : kernels::input_sizes(workload)) {
    Buffer buffer = allocate(size);
    for (std::size_t i = 0; i < size; ++i) buffer[i] = value(rng);
    operands.input_pointers.push_back(buffer.get());
    operands.inputs.push_back(std::move(buffer));
  }
  operands.output_size = kernels::output_size(workload);
  operands.output = allocate(operands.output_size);
  operands.expected = allocate(operands.output_size);
  kernels::reference(workload, operands.input_pointers, operands.expected.get());
  operands.workload_key = key;
}

namespace {

using Clock = std::chrono::steady_clock;

struct SharedObject {
  void* handle = nullptr;
  explicit SharedObject(const std::string& path) : handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~SharedObject() {
    if (handle) dlclose(handle);
  }
};

double time_runs(kernels::CandidateFunction kernel, const Operands& operands, int runs) {
  auto start = Clock::now();
  for (int i = 0; i < runs; ++i) kernel(operands.input_pointers.data(), operands.output.get());
  return std::chrono::duration<double>(Clock::now() - start).count() / runs;
}

// The devices this worker measures on, which an RPC server reports: the CPU it runs on (under an
// emulator the emulated CPU, not the server's) and its machine's OpenCL devices. With a target,
// that target's device; a target naming no device here is a "no_device" reply naming those there are.
nlohmann::json describe(const nlohmann::json& request) {
  if (!request.contains("target")) {
    nlohmann::json devices = nlohmann::json::array({detect_local_cpu().fingerprint()});
    for (const auto& device : list_opencl_devices()) devices.push_back(device.fingerprint());
    return {{"status", "ok"}, {"device", devices[0]}, {"devices", devices}};
  }
  try {
    const kernels::Target target = kernels::parse_target(request.at("target").get<std::string>());
    const kernels::DeviceInfo device =
        target.backend == kernels::Backend::kOpenCL ? find_opencl_device(target) : detect_local_cpu();
    return {{"status", "ok"}, {"device", device.fingerprint()}};
  } catch (const std::invalid_argument& error) {
    return {{"status", "no_device"}, {"message", error.what()}};
  }
}

nlohmann::json measure(const nlohmann::json& request, Operands& operands, OpenCLWorker& opencl) {
  if (request.value("describe", false)) return describe(request);
  TimingPolicy policy = timing_policy_from_json(request.at("timing"));
  prepare(operands, request.at("workload").get<std::string>(), request.value("seed", 1u));
  if (request.value("backend", "cpu") == "opencl") return opencl.measure(request, operands, policy);
  if (!request.contains("artifact")) return {{"status", "ready"}};

  SharedObject object(request.at("artifact").get<std::string>());
  if (!object.handle) return {{"status", "runtime_error"}, {"message", std::string("dlopen: ") + dlerror()}};
  auto kernel = reinterpret_cast<kernels::CandidateFunction>(dlsym(object.handle, kernels::kCandidateSymbol));
  if (!kernel) return {{"status", "runtime_error"}, {"message", std::string("dlsym: ") + dlerror()}};

  // Poison the output, so a kernel that leaves elements unwritten cannot pass.
  std::fill_n(operands.output.get(), operands.output_size, std::nanf(""));
  kernel(operands.input_pointers.data(), operands.output.get());
  double error = kernels::relative_l2_error(operands.output.get(), operands.expected.get(),
                                            operands.output_size);
  if (!(error <= policy.max_relative_error)) {
    return {{"status", "wrong_answer"},
            {"error", std::isfinite(error) ? error : -1.0},
            {"message", "relative L2 error " + std::to_string(error) + " exceeds " +
                            std::to_string(policy.max_relative_error)}};
  }
  for (int i = 1; i < policy.warmup; ++i) time_runs(kernel, operands, 1);
  int number = policy.number;
  if (number <= 0) {
    double once = time_runs(kernel, operands, 1);
    number = static_cast<int>(std::ceil(policy.min_repeat_ms / 1e3 / std::max(once, 1e-9)));
    number = std::clamp(number, 1, 1 << 20);
  }
  std::vector<double> costs;
  for (int r = 0; r < std::max(1, policy.repeat); ++r) costs.push_back(time_runs(kernel, operands, number));
  return {{"status", "ok"}, {"costs", costs}, {"error", error}, {"number", number}};
}

}  // namespace

int run_worker_loop(std::istream& in, std::ostream& out) {
  Operands operands;
  OpenCLWorker opencl;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json response;
    try {
      response = measure(nlohmann::json::parse(line), operands, opencl);
    } catch (const std::exception& error) {
      response = {{"status", "runtime_error"}, {"message", error.what()}};
    }
    out << response.dump() << std::endl;
  }
  return 0;
}

}  // namespace optune::measure
