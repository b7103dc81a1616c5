// What an OpenCL template adds to a KernelTemplate: the program and launch of one candidate. One
// .cl file (backends/opencl/kernels, installed under share/optune/opencl and compiled into
// optune::opencl) is compiled with the config's knobs as -D build options; its arguments are the
// op's inputs in reference.hpp's order, then the output, all global float buffers, then the
// scratch buffer where the kernel has one.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

struct OpenCLKernel {
  std::string source_file;    // e.g. "gemm.cl"
  std::string kernel_name;    // e.g. "optune_gemm"
  std::string build_options;  // "-DMWG=64 -DNWG=64 ... -cl-mad-enable"
  std::array<std::size_t, 3> global_size{1, 1, 1};
  std::array<std::size_t, 3> local_size{1, 1, 1};
  int dimensions = 1;
  // > 0: the kernel's last argument is a scratch buffer of this many bytes (split-K's partial
  // tiles and counters, split_k.cl). A launcher allocates it once per kernel, zero-filled, and
  // passes the same buffer to every launch: each launch leaves it as the next one needs it.
  // Launches sharing it must not overlap (the worker's queue is in order; the Runtime chains them
  // by events).
  std::size_t scratch_bytes = 0;
};

class OpenCLTemplate : public KernelTemplate {
 public:
  std::string_view backend() const final { return "opencl"; }
  virtual OpenCLKernel opencl_kernel(const Workload& workload, const DeviceInfo& device,
                                     const search_space::ConfigView& config) const = 0;
};

// The OpenCL side of a template of this backend; throws std::invalid_argument for any other.
const OpenCLTemplate& as_opencl(const KernelTemplate& kernel_template);

}  // namespace optune::kernels
