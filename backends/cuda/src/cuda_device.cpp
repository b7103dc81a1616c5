#include "cuda_device.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "driver_api.hpp"

namespace optune::backends::cuda {

kernels::DeviceInfo cuda_device_info(const CudaDeviceInfo& device) {
  kernels::DeviceInfo info;
  info.kind = "cuda";
  info.name = device.name;
  info.arch = fmt::format("sm_{}{}", device.compute_major, device.compute_minor);
  info.isa = {info.arch};  // read by DeviceInfo::nvidia_compute_capability()
  info.cores = device.sm_count;
  info.l1d_bytes = 0;
  info.l2_bytes = device.l2_bytes;
  info.l3_bytes = 0;
  info.platform = "CUDA";
  info.driver_version = device.driver_version;
  info.local_mem_bytes = device.max_shared_per_block_optin;
  info.max_work_group_size = device.max_threads_per_block;
  info.max_work_item_sizes = {device.max_block_dims[0], device.max_block_dims[1], device.max_block_dims[2]};
  info.attributes = {
      {"warp_size", device.warp_size},
      {"max_grid_dim_x", device.max_grid_dims[0]},
      {"max_grid_dim_y", device.max_grid_dims[1]},
      {"max_grid_dim_z", device.max_grid_dims[2]},
      {"max_shared_memory_per_block", device.max_shared_per_block},
      {"max_registers_per_block", device.registers_per_block},
      {"memory_bytes", static_cast<std::int64_t>(device.total_memory_bytes)},
      {"clock_khz", device.clock_khz},
  };
  return info;
}

int cuda_ordinal(std::string_view spec) {
  if (spec.empty()) return 0;
  if (spec.size() > 4 || spec.find_first_not_of("0123456789") != std::string_view::npos)
    throw std::invalid_argument("target: bad CUDA device '" + std::string(spec) + "' (an ordinal: cuda:0)");
  return std::stoi(std::string(spec));
}

CudaDeviceInfo find_cuda_device(const kernels::Target& target) {
  const int ordinal = cuda_ordinal(target.spec);
  const DriverApi& driver = DriverApi::get();
  if (!driver.is_available()) throw std::invalid_argument("target " + target.str() + ": " + driver.missing);
  const std::vector<CudaDeviceInfo> devices = list_cuda_devices();
  if (devices.empty())
    throw std::invalid_argument("target " + target.str() + ": the CUDA driver (" + driver.library + ") sees no device");
  if (ordinal < static_cast<int>(devices.size())) return devices[ordinal];
  std::string seen;
  for (const auto& device : devices) seen += (seen.empty() ? "" : ", ") + fmt::format("{} {}", device.ordinal, device.name);
  throw std::invalid_argument("target " + target.str() + ": no such device (CUDA devices: " + seen + ")");
}

}  // namespace optune::backends::cuda
