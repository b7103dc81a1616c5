// The OpenCL C API as measure/ uses it: the shared handles and errors of optune::opencl, the device
// a target selects, and the profiling time of an event.
#pragma once

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/opencl/cl_api.hpp"
#include "optune/kernels/target.hpp"

namespace optune::measure::cl {

// The shared handles and errors (optune/kernels/opencl/cl_api.hpp), under measure's short names.
using opencl::Buffer;
using opencl::check;
using opencl::Context;
using opencl::Error;
using opencl::error_name;
using opencl::Event;
using opencl::Kernel;
using opencl::Program;
using opencl::Queue;

struct SelectedDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  kernels::DeviceInfo info;
};
// Throws std::invalid_argument when no device matches the target.
SelectedDevice select_device(const kernels::Target& target);

// Seconds between an event's start and end (profiling must be on in its queue).
double event_seconds(cl_event event);

}  // namespace optune::measure::cl
