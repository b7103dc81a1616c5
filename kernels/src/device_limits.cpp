#include "optune/kernels/device_limits.hpp"

#include <stdexcept>

namespace optune::kernels {
namespace {

double work_item_size(const DeviceInfo& device, std::size_t dimension) {
  if (dimension >= device.max_work_item_sizes.size()) return 0;
  return static_cast<double>(device.max_work_item_sizes[dimension]);
}

}  // namespace

const std::vector<std::string>& device_limit_names(const std::string& backend) {
  static const std::vector<std::string> opencl = {
      "max_work_group_size", "local_mem_size",       "compute_units",        "vector_width_float",
      "max_work_item_size_0", "max_work_item_size_1", "max_work_item_size_2"};
  static const std::vector<std::string> cpu = {"cores", "l1_bytes", "l2_bytes", "l3_bytes", "simd_lanes"};
  if (backend == "opencl") return opencl;
  if (backend == "cpu") return cpu;
  throw std::invalid_argument("'" + backend + "' is not a backend of kernel files (opencl | cpu)");
}

bool launches_over_ndrange(const std::string& backend) {
  device_limit_names(backend);  // names the backends there are for another
  return backend == "opencl";
}

std::vector<double> device_limit_values(const std::string& backend, const DeviceInfo& device) {
  if (backend == "opencl") {
    return {static_cast<double>(device.max_work_group_size), static_cast<double>(device.local_mem_bytes),
            static_cast<double>(device.cores), static_cast<double>(device.preferred_vector_width),
            work_item_size(device, 0), work_item_size(device, 1), work_item_size(device, 2)};
  }
  if (backend == "cpu") {
    return {static_cast<double>(device.cores), static_cast<double>(device.l1d_bytes),
            static_cast<double>(device.l2_bytes), static_cast<double>(device.l3_bytes),
            static_cast<double>(device.simd_f32_lanes())};
  }
  throw std::invalid_argument("'" + backend + "' is not a backend of kernel files (opencl | cpu)");
}

}  // namespace optune::kernels
