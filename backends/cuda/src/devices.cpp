#include "devices.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver_api.hpp"

namespace optune::backends::cuda {
namespace {

int attribute(const DriverApi& api, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(api.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

bool is_version_number(const std::string& word) {
  if (word.empty() || !std::isdigit(static_cast<unsigned char>(word.front()))) return false;
  for (char c : word) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return word.find('.') != std::string::npos;
}

// The kernel module's full version where the driver exposes it (it tells 580.159.04 from
// 580.65.06, which the API's 13.0 does not), else the API version.
std::string driver_version(const DriverApi& api) {
  std::ifstream proc("/proc/driver/nvidia/version");
  if (proc) {
    std::ostringstream text;
    text << proc.rdbuf();
    std::string version = kernel_module_version(text.str());
    if (!version.empty()) return version;
  }
  int version = 0;
  check(api.cuDriverGetVersion(&version), "cuDriverGetVersion");
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

CudaDeviceInfo describe(const DriverApi& api, int ordinal, const std::string& driver) {
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  info.name = name;
  std::size_t bytes = 0;
  check(api.cuDeviceTotalMem(&bytes, device), "cuDeviceTotalMem");
  info.total_memory_bytes = bytes;
  info.compute_major = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.compute_minor = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.l2_bytes = attribute(api, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.max_threads_per_block = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_block_dims = {attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                         attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                         attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  info.max_grid_dims = {attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                        attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                        attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  info.max_shared_per_block = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.max_shared_per_block_optin = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.registers_per_block = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.warp_size = attribute(api, device, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.clock_khz = attribute(api, device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.driver_version = driver;
  return info;
}

}  // namespace

std::vector<CudaDeviceInfo> list_cuda_devices() {
  const DriverApi& api = DriverApi::get();
  if (!api.has_devices()) return {};
  int count = 0;
  check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) return {};
  const std::string driver = driver_version(api);
  std::vector<CudaDeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) devices.push_back(describe(api, ordinal, driver));
  return devices;
}

std::string kernel_module_version(const std::string& proc_version_text) {
  std::istringstream lines(proc_version_text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto module = line.find("Kernel Module");
    if (module == std::string::npos) continue;
    // The version is the first dotted number after it ("Open Kernel Module for x86_64  580...").
    std::istringstream words(line.substr(module));
    std::string word;
    while (words >> word) {
      if (is_version_number(word)) return word;
    }
  }
  return {};
}

void to_json(nlohmann::json& json, const CudaDeviceInfo& device) {
  json = {{"ordinal", device.ordinal},
          {"name", device.name},
          {"compute_capability", fmt::format("{}.{}", device.compute_major, device.compute_minor)},
          {"sm_count", device.sm_count},
          {"total_memory_bytes", device.total_memory_bytes},
          {"l2_bytes", device.l2_bytes},
          {"max_threads_per_block", device.max_threads_per_block},
          {"max_block_dims", device.max_block_dims},
          {"max_grid_dims", device.max_grid_dims},
          {"max_shared_per_block", device.max_shared_per_block},
          {"max_shared_per_block_optin", device.max_shared_per_block_optin},
          {"registers_per_block", device.registers_per_block},
          {"warp_size", device.warp_size},
          {"clock_khz", device.clock_khz},
          {"driver_version", device.driver_version}};
}

}  // namespace optune::backends::cuda
