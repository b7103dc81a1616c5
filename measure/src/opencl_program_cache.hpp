// Builds OpenCL programs for a device through an on-disk cache of program binaries, so the slow
// first compile of a candidate (seconds on PoCL and on phones) is paid once per source, build
// options, device and driver version. The cache is a directory of <hash>.bin files, each beside
// a <hash>.key holding the full key it was built for: a hash collision or a stale entry is a miss.
#pragma once

#include <string>

#include "opencl_api.hpp"

namespace optune::measure::cl {

struct ProgramBuild {
  Program program;       // empty when the build failed
  std::string log;       // the compiler's log on failure
  bool from_cache = false;
  double seconds = 0;    // compile or cache load, wall clock
};

// cache_dir "" builds from source every time.
ProgramBuild build_program(cl_context context, const SelectedDevice& device, const std::string& source,
                           const std::string& options, const std::string& cache_dir);

}  // namespace optune::measure::cl
