// OpenCL device listing and target resolution, through the ICD loader.
#include "optune/measure/opencl_devices.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "opencl_api.hpp"

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
  info.preferred_vector_width =
      static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
  return info;
}

std::vector<cl_platform_id> platform_ids() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  return platforms;
}

std::vector<cl_device_id> device_ids(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> ids(count);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
  return ids;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// "" matches everything; digits match the index; else a case-insensitive substring of the name.
bool matches(const std::string& wanted, std::size_t index, const std::string& name) {
  if (wanted.empty()) return true;
  if (std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::to_string(index) == wanted;
  return lower(name).find(lower(wanted)) != std::string::npos;
}

}  // namespace

std::vector<kernels::DeviceInfo> list_opencl_devices() {
  std::vector<kernels::DeviceInfo> devices;
  for (cl_platform_id platform : platform_ids()) {
    for (cl_device_id device : device_ids(platform)) devices.push_back(describe(platform, device));
  }
  return devices;
}

kernels::DeviceInfo find_opencl_device(const kernels::Target& target) { return cl::select_device(target).info; }

namespace cl {

SelectedDevice select_device(const kernels::Target& target) {
  if (target.backend != kernels::Backend::kOpenCL)
    throw std::invalid_argument("opencl: " + target.str() + " is not an OpenCL target");
  const auto platforms = platform_ids();
  std::string seen;
  // An empty platform with a device index means the first platform (target.cpp).
  const bool first_platform_only = target.platform.empty() && !target.device.empty();
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const std::string platform_name = platform_text(platforms[p], CL_PLATFORM_NAME);
    const auto devices = device_ids(platforms[p]);
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const std::string device_name = device_text(devices[d], CL_DEVICE_NAME);
      seen += (seen.empty() ? "" : ", ") + std::to_string(p) + ":" + std::to_string(d) + " " + platform_name +
              " / " + device_name;
      if (matches(target.platform, p, platform_name) && matches(target.device, d, device_name))
        return {platforms[p], devices[d], describe(platforms[p], devices[d])};
    }
    if (first_platform_only) break;
  }
  throw std::invalid_argument("opencl: no device matches target '" + target.str() + "' (" +
                              (seen.empty() ? "no OpenCL platform is installed" : "devices: " + seen) + ")");
}

double event_seconds(cl_event event) {
  cl_ulong start = 0, end = 0;
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
        "clGetEventProfilingInfo");
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
        "clGetEventProfilingInfo");
  return static_cast<double>(end - start) * 1e-9;
}

std::string error_name(cl_int code) {
  const char* name = "unknown error";
  switch (code) {
    case CL_DEVICE_NOT_FOUND: name = "CL_DEVICE_NOT_FOUND"; break;
    case CL_DEVICE_NOT_AVAILABLE: name = "CL_DEVICE_NOT_AVAILABLE"; break;
    case CL_COMPILER_NOT_AVAILABLE: name = "CL_COMPILER_NOT_AVAILABLE"; break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: name = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case CL_OUT_OF_RESOURCES: name = "CL_OUT_OF_RESOURCES"; break;
    case CL_OUT_OF_HOST_MEMORY: name = "CL_OUT_OF_HOST_MEMORY"; break;
    case CL_PROFILING_INFO_NOT_AVAILABLE: name = "CL_PROFILING_INFO_NOT_AVAILABLE"; break;
    case CL_BUILD_PROGRAM_FAILURE: name = "CL_BUILD_PROGRAM_FAILURE"; break;
    case CL_INVALID_VALUE: name = "CL_INVALID_VALUE"; break;
    case CL_INVALID_DEVICE: name = "CL_INVALID_DEVICE"; break;
    case CL_INVALID_BINARY: name = "CL_INVALID_BINARY"; break;
    case CL_INVALID_BUILD_OPTIONS: name = "CL_INVALID_BUILD_OPTIONS"; break;
    case CL_INVALID_PROGRAM_EXECUTABLE: name = "CL_INVALID_PROGRAM_EXECUTABLE"; break;
    case CL_INVALID_KERNEL_NAME: name = "CL_INVALID_KERNEL_NAME"; break;
    case CL_INVALID_KERNEL_ARGS: name = "CL_INVALID_KERNEL_ARGS"; break;
    case CL_INVALID_WORK_DIMENSION: name = "CL_INVALID_WORK_DIMENSION"; break;
    case CL_INVALID_WORK_GROUP_SIZE: name = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case CL_INVALID_WORK_ITEM_SIZE: name = "CL_INVALID_WORK_ITEM_SIZE"; break;
    case CL_INVALID_GLOBAL_WORK_SIZE: name = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case CL_INVALID_BUFFER_SIZE: name = "CL_INVALID_BUFFER_SIZE"; break;
    case CL_INVALID_COMMAND_QUEUE: name = "CL_INVALID_COMMAND_QUEUE"; break;
    case CL_INVALID_EVENT: name = "CL_INVALID_EVENT"; break;
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: name = "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"; break;
    default: break;
  }
  return std::string(name) + " (" + std::to_string(code) + ")";
}

}  // namespace cl
}  // namespace optune::measure
