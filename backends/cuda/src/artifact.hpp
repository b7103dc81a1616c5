// The artifact of a CUDA candidate: one file the worker (here or on a remote server) loads with
// nothing else: a JSON line (what to start and how, what the compile cost) followed by the
// compiled module's bytes, a CUBIN for the device's architecture or PTX the driver compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "optune/kernels/kernel_problem.hpp"
#include "tensor_map.hpp"

namespace optune::backends::cuda {

struct CudaArtifact {
  std::string template_name;  // "kernel.vector_add.cuda#1a2b3c4d"
  std::string workload_key;
  std::string arch;           // what NVRTC compiled for: "sm_90a", or "compute_90" (PTX)
  bool is_ptx = false;
  std::string entry;          // the kernel's symbol in the module (its lowered name)
  std::string reference;      // the check reference's symbol; "" none
  kernels::LaunchSize launch;
  std::vector<TensorMapArgument> tensor_maps;  // encoded by the worker, passed after the arguments
  std::vector<std::int32_t> run_time_arguments;  // ints passed last: knobs read at run time
  double compile_seconds = 0;
  bool from_cache = false;
  std::vector<char> module;   // cuModuleLoadData's image (PTX with its terminating NUL)
};

// Writing throws EnvironmentFailure when the file cannot be written (measure::write_build_file);
// reading throws std::runtime_error naming the file when it cannot be read or is malformed.
void write_cuda_artifact(const CudaArtifact& artifact, const std::string& path);
CudaArtifact read_cuda_artifact(const std::string& path);

}  // namespace optune::backends::cuda
