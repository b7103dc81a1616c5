// The device the standalone OpenCL bench tools (opencl_gemm_sweep, opencl_launch_floor,
// clblast_sgemm) run on: the first GPU of any platform, else, where `any_type` is set, the first
// device of any type (PoCL's CPU device, to try a tool where there is no GPU); nullptr if none.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

inline cl_device_id first_opencl_device(bool any_type) {
  cl_platform_id platforms[8];
  cl_uint platform_count = 0;
  clGetPlatformIDs(8, platforms, &platform_count);
  const cl_device_type types[] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
  cl_device_id device = nullptr;
  for (int t = 0; t < (any_type ? 2 : 1) && !device; ++t)
    for (cl_uint p = 0; p < platform_count && !device; ++p)
      if (clGetDeviceIDs(platforms[p], types[t], 1, &device, nullptr) != CL_SUCCESS) device = nullptr;
  return device;
}
