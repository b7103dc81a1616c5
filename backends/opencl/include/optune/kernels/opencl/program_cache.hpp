// Builds OpenCL programs for a device through an on-disk cache of program binaries, so the slow
// first compile of a program (seconds on phones) is paid once per source, build
// options, device and driver version: by the worker for candidates, and by applications
// (optune::opencl::Runtime) for tuned kernels, which hit the tuner's entries when they share the
// directory. The cache is a directory of <hash>.bin files, each beside
// a <hash>.key holding the full key it was built for: a hash collision or a stale entry is a miss.
#pragma once

#include <string>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/opencl/cl_api.hpp"

namespace optune::opencl {

struct ProgramBuild {
  Program program;       // empty when the build failed
  std::string log;       // the compiler's log on failure
  bool from_cache = false;
  double seconds = 0;    // compile or cache load, wall clock
};

// `device_info` (describe_device of `device`) names the device and driver in the cache key.
// cache_dir "" builds from source every time, and so does PoCL, which caches its own builds (its
// POCL_KERNEL_CACHE, unless 0): optune's cache is then left alone (program_cache.cpp says why).
ProgramBuild build_program(cl_context context, cl_device_id device, const kernels::DeviceInfo& device_info,
                           const std::string& source, const std::string& options, const std::string& cache_dir);

}  // namespace optune::opencl
