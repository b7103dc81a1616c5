#include "optune/measure/opencl_devices.hpp"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

namespace optune::measure {
namespace {

std::string platform_text(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  clGetPlatformInfo(platform, what, size, text.data(), nullptr);
  return text.c_str();  // drop the terminating NUL
}

std::string device_text(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  return text.c_str();
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  clGetDeviceInfo(device, what, sizeof value, &value, nullptr);
  return value;
}

kernels::DeviceInfo describe(cl_platform_id platform, cl_device_id device) {
  kernels::DeviceInfo info;
  info.kind = "opencl";
  info.platform = platform_text(platform, CL_PLATFORM_NAME);
  info.name = device_text(device, CL_DEVICE_NAME);
  info.driver_version = device_text(device, CL_DRIVER_VERSION);
  info.cores = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.local_mem_bytes = static_cast<std::int64_t>(device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE));
  info.max_work_group_size = static_cast<std::int64_t>(device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  cl_uint dimensions = device_value<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<std::size_t> sizes(dimensions);
  if (dimensions && clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(std::size_t) * dimensions,
                                    sizes.data(), nullptr) == CL_SUCCESS)
    info.max_work_item_sizes.assign(sizes.begin(), sizes.end());
  info.l1d_bytes = 0;
  info.l2_bytes = static_cast<std::int64_t>(device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
  return info;
}

}  // namespace

std::vector<kernels::DeviceInfo> list_opencl_devices() {
  std::vector<kernels::DeviceInfo> devices;
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) return devices;
  std::vector<cl_platform_id> platforms(platform_count);
  clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(device_count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr);
    for (cl_device_id device : ids) devices.push_back(describe(platform, device));
  }
  return devices;
}

}  // namespace optune::measure
