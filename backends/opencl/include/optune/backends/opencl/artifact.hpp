// The artifact of an OpenCL candidate: one JSON file holding everything needed to compile and
// launch it on any machine with an OpenCL device (the .cl source itself, build options, kernel
// name, work sizes, the workload), so a remote server can take it unchanged. OpenCLBuilder
// writes it; the worker reads it, compiles it for its device (through the program cache) and
// measures it.
#pragma once

#include <string>

#include "optune/kernels/opencl/opencl_template.hpp"

namespace optune::measure {

struct OpenCLArtifact {
  std::string template_name;  // e.g. "gemm.opencl"
  std::string workload_key;
  kernels::OpenCLKernel kernel;
  std::string source;  // text of kernel.source_file
};

// Writing: throws EnvironmentFailure when the file cannot be written (builder.hpp's
// write_build_file). Reading: throws std::runtime_error when it cannot be read or is malformed.
void write_opencl_artifact(const OpenCLArtifact& artifact, const std::string& path);
OpenCLArtifact read_opencl_artifact(const std::string& path);

}  // namespace optune::measure
