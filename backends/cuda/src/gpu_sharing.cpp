#include "gpu_sharing.hpp"

#include <algorithm>
#include <vector>

#include "shared_library.hpp"

namespace optune::backends::cuda {
namespace {

// NVML's ABI, as nvml.h declares it (the header is not part of the CUDA toolkit's Debian install).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds
  unsigned int smUtil;           // percent of the sample's period a kernel of the process ran
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
using nvmlInit_t = nvmlReturn_t (*)();
using nvmlDeviceGetHandleByPciBusId_t = nvmlReturn_t (*)(const char* pci_bus_id, nvmlDevice_t* device);
using nvmlDeviceGetProcessUtilization_t = nvmlReturn_t (*)(nvmlDevice_t device, nvmlProcessUtilizationSample_t* samples,
                                                           unsigned int* count, unsigned long long last_seen);

struct Nvml {
  nvmlDeviceGetHandleByPciBusId_t handle_by_pci_bus_id = nullptr;
  nvmlDeviceGetProcessUtilization_t process_utilization = nullptr;
  bool usable = false;
};

// Loaded and initialised once per process; never shut down (as the driver, SharedLibrary's note).
const Nvml& nvml() {
  static const Nvml table = [] {
    Nvml api;
    const SharedLibrary library = open_shared_library("libnvidia-ml.so.1");
    if (!library.is_open()) return api;
    auto init = reinterpret_cast<nvmlInit_t>(library.symbol("nvmlInit_v2"));
    api.handle_by_pci_bus_id =
        reinterpret_cast<nvmlDeviceGetHandleByPciBusId_t>(library.symbol("nvmlDeviceGetHandleByPciBusId_v2"));
    api.process_utilization =
        reinterpret_cast<nvmlDeviceGetProcessUtilization_t>(library.symbol("nvmlDeviceGetProcessUtilization"));
    api.usable = init && api.handle_by_pci_bus_id && api.process_utilization && init() == NVML_SUCCESS;
    return api;
  }();
  return table;
}

}  // namespace

GpuSharing::GpuSharing(const std::string& pci_bus_id) {
  const Nvml& api = nvml();
  nvmlDevice_t device = nullptr;
  if (api.usable && api.handle_by_pci_bus_id(pci_bus_id.c_str(), &device) == NVML_SUCCESS) device_ = device;
}

std::optional<double> GpuSharing::others_share_since(double since_unix_seconds, pid_t own_pid) const {
  if (!device_) return std::nullopt;
  // NVML samples a process every 1/6 s or slower: a timing of a fraction of a second may hold no
  // sample of a process that runs kernels throughout (on an H100, a quarter of the candidates
  // timed beside one read 0). Samples from kLookBackSeconds before count too.
  constexpr double kLookBackSeconds = 0.5;
  const auto since = static_cast<unsigned long long>(std::max(0.0, since_unix_seconds - kLookBackSeconds) * 1e6);
  std::vector<nvmlProcessUtilizationSample_t> samples(16);
  unsigned int count = 0;
  nvmlReturn_t result = NVML_ERROR_INSUFFICIENT_SIZE;
  // The first call may say how many samples there are; a process or two more may start meanwhile.
  for (int attempt = 0; attempt < 3 && result == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    count = static_cast<unsigned int>(samples.size());
    result = nvml().process_utilization(device_, samples.data(), &count, since);
    if (result == NVML_ERROR_INSUFFICIENT_SIZE) samples.resize(std::max<std::size_t>(count, 2 * samples.size()));
  }
  if (result == NVML_ERROR_NOT_FOUND) return 0.0;  // no process's kernels ran since then
  if (result != NVML_SUCCESS) return std::nullopt;
  unsigned int others = 0;
  for (unsigned int i = 0; i < count && i < samples.size(); ++i)
    if (static_cast<pid_t>(samples[i].pid) != own_pid && samples[i].timeStamp >= since) others += samples[i].smUtil;
  return std::min(1.0, others / 100.0);
}

}  // namespace optune::backends::cuda
