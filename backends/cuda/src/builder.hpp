// CudaBuilder: compiles each candidate with NVRTC in a helper process of its own (optune-nvrtc: a
// crash or hang of NVRTC costs one candidate, not the tuner), jobs at a time, each under the
// compile timeout, for the architecture of the task's device; through the cubin cache. A compile
// error is the candidate's build_error with NVRTC's log; a helper that cannot start or run is the
// environment's failure (EnvironmentFailure: nothing of the batch recorded). Compiling on the host
// means a remote GPU server needs only the driver.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cubin_cache.hpp"
#include "optune/measure/build_directory.hpp"
#include "optune/measure/builder.hpp"

namespace optune::backends::cuda {

struct CudaBuilderOptions {
  std::string nvrtc_executable;  // optune-nvrtc
  std::string kernel_source_dir;  // the backend's own kernels (CudaKernel::source_file)
  int jobs = 0;                  // 0: all cores
  double timeout_seconds = 120;  // per compile
  std::string cache_dir;         // compiled modules; "" none
  std::string work_dir;          // "" : a fresh temp dir, removed at the end
};

class CudaBuilder final : public measure::Builder {
 public:
  explicit CudaBuilder(CudaBuilderOptions options);
  ~CudaBuilder() override;
  std::vector<measure::BuildResult> build(const std::vector<measure::MeasureInput>& inputs) override;
  // NVRTC's version (the driver's is in the device's fingerprint).
  measure::Toolchain toolchain(const kernels::DeviceInfo& device) const override;

 private:
  const std::string& headers_of(const std::string& dir);
  const std::string& kernel_source(const std::string& file);
  CudaBuilderOptions options_;
  CubinCache cache_;
  measure::BuildDirectory work_dir_;
  std::size_t next_id_ = 0;
  std::map<std::string, std::string> headers_;  // include dir -> its headers' names and text, read once
  std::map<std::string, std::string> sources_;  // the backend's kernel files, read once
};

}  // namespace optune::backends::cuda
