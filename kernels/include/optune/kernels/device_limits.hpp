// The device limits a kernel file's expressions may name (kernel_file.hpp), and their values for
// one device, read from DeviceInfo. Each backend has its own list, so that a cpu kernel naming
// `local_mem_size` is told the name is unknown instead of silently reading 0.
#pragma once

#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"

namespace optune::kernels {

// "opencl":
//   max_work_group_size      CL_DEVICE_MAX_WORK_GROUP_SIZE (work-items)
//   local_mem_size           CL_DEVICE_LOCAL_MEM_SIZE (bytes)
//   compute_units            CL_DEVICE_MAX_COMPUTE_UNITS
//   vector_width_float       CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT (floats)
//   max_work_item_size_0..2  CL_DEVICE_MAX_WORK_ITEM_SIZES, per dimension (work-items)
// "cpu":
//   cores                    cores available to the process
//   l1_bytes, l2_bytes, l3_bytes   data cache sizes (bytes; l3_bytes 0 where there is none)
//   simd_lanes               float32 lanes of the widest SIMD vector the kernel should use
// A limit the device does not report is 0. Throws std::invalid_argument for another backend.
const std::vector<std::string>& device_limit_names(const std::string& backend);
// Whether a kernel file of the backend launches over an NDRange (`[launch]` required) rather than
// calling its entry once (`[launch]` refused). Throws std::invalid_argument for another backend.
bool launches_over_ndrange(const std::string& backend);
// In device_limit_names(backend)'s order.
std::vector<double> device_limit_values(const std::string& backend, const DeviceInfo& device);

}  // namespace optune::kernels
