// The CUDA devices of this machine as the tuner sees them: the limits that shape a kernel's space
// (threads, shared memory, registers) and the facts a record is keyed by (name, compute
// capability, driver version).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace optune::backends::cuda {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory_bytes = 0;
  int l2_bytes = 0;
  int max_threads_per_block = 0;
  std::array<int, 3> max_block_dims{};
  std::array<int, 3> max_grid_dims{};
  int max_shared_per_block = 0;        // bytes without opting in (48 KiB)
  int max_shared_per_block_optin = 0;  // bytes after cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  int registers_per_block = 0;
  int warp_size = 0;
  int clock_khz = 0;
  std::string driver_version;  // "580.159.04" (the kernel module's), else the API's "13.0"
};

// Every device the driver sees; empty when there is no driver (DriverApi::missing says why) or it
// sees no device. A failing query of a present device throws CudaError.
std::vector<CudaDeviceInfo> list_cuda_devices();

// The kernel module's version in the text of /proc/driver/nvidia/version
// ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..."), or "".
std::string kernel_module_version(const std::string& proc_version_text);

void to_json(nlohmann::json& json, const CudaDeviceInfo& device);

}  // namespace optune::backends::cuda
