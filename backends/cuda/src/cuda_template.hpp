// What a CUDA candidate is before NVRTC compiles it: CUDA C++ text, NVRTC options, the kernel to
// start (a name expression, so extern "C", mangled and templated kernels all load by name), its
// launch, and the check reference compiled into the same program where there is one. Every CUDA
// template (a user's kernel file, optune's own) gives one per config; CudaBuilder compiles it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "optune/kernels/kernel_problem.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "tensor_map.hpp"

namespace optune::backends::cuda {

struct CudaKernel {
  std::string source;                    // CUDA C++ text, or:
  std::string source_file;               // a file of the backend's own kernels (backends/cuda/kernels)
  std::string program_name = "kernel.cu";  // names the source in NVRTC's log
  std::vector<std::string> options;      // "-DTILE=16", then the file's options ("--use_fast_math")
  std::filesystem::path include_dir;     // the source's own folder ("#include \"helpers.cuh\""); "" none
  std::string entry;                     // "vector_add", "matmul<float, 16>"
  std::string reference_entry;           // the check's reference kernel; "" none
  kernels::LaunchSize launch;            // grid (blocks) in global, block (threads) in local
  std::vector<TensorMapArgument> tensor_maps;  // TMA descriptors passed after the arguments
  // Knobs the kernel reads at run time (group_m), passed as ints after the tensor maps. They and
  // the launch stay out of the compile: configs that differ only in them share one cubin, so a
  // CUDA template lists such knobs in run_time_knobs() while its run_time_knob_values() stays
  // empty (the artifact carries them to the worker, here or over RPC).
  std::vector<std::int32_t> run_time_arguments;
};

class CudaTemplate : public kernels::KernelTemplate {
 public:
  std::string_view backend() const final { return "cuda"; }
  // Throws std::invalid_argument for a config whose kernel cannot be written (a launch the space
  // rejects); the builder records that as the candidate's build error.
  virtual CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                                 const search_space::ConfigView& config) const = 0;
};

inline const CudaTemplate& as_cuda(const kernels::KernelTemplate& kernel_template) {
  return dynamic_cast<const CudaTemplate&>(kernel_template);
}

}  // namespace optune::backends::cuda
