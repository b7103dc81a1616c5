#include "optune/kernels/opencl/cl_api.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace optune::opencl {
namespace {

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  clGetDeviceInfo(device, what, sizeof value, &value, nullptr);
  return value;
}

}  // namespace

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

kernels::DeviceInfo describe_device(cl_device_id device) {
  kernels::DeviceInfo info;
  info.kind = "opencl";
  info.platform = platform_text(device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM), CL_PLATFORM_NAME);
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
  // NVIDIA's compute capability (cl_nv_device_attribute_query) says which PTX instructions the
  // device's compiler takes in inline assembly: the tensor-core GEMM needs sm_80 or later.
  if (device_text(device, CL_DEVICE_EXTENSIONS).find("cl_nv_device_attribute_query") != std::string::npos) {
    constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000, kComputeCapabilityMinorNv = 0x4001;
    const cl_uint major = device_value<cl_uint>(device, kComputeCapabilityMajorNv);
    const cl_uint minor = device_value<cl_uint>(device, kComputeCapabilityMinorNv);
    if (major > 0) info.isa.push_back("sm_" + std::to_string(major * 10 + minor));
  }
  // Packed int8 dot products (gemm_dot4.cl's dot_4x8packed_ss_int), where the device has them.
  if (device_text(device, CL_DEVICE_EXTENSIONS).find("cl_khr_integer_dot_product") != std::string::npos)
    info.isa.push_back(kernels::kIntegerDotProductIsa);
  std::sort(info.isa.begin(), info.isa.end());
  return info;
}

Buffer zeroed_buffer(cl_context context, cl_command_queue queue, std::size_t bytes) {
  cl_int error = CL_SUCCESS;
  Buffer buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &error));
  check(error, "clCreateBuffer");
  const cl_uint zero = 0;
  check(clEnqueueFillBuffer(queue, buffer.get(), &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
  check(clFinish(queue), "clFinish");
  return buffer;
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

}  // namespace optune::opencl
