// OpenCLBuilder: turns OpenCL candidates into artifact files (opencl_artifact.hpp): the template's
// launch for the config plus the text of its .cl file. Compiling is the worker's job, on the
// device that runs the candidate (a remote one too), through the on-disk program cache; a
// program that does not compile comes back from the runner as a build_error with the build log.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "optune/measure/build_directory.hpp"
#include "optune/measure/builder.hpp"

namespace optune::measure {

struct OpenCLBuilderOptions {
  std::string kernel_source_dir;  // holds gemm.cl, conv2d.cl, ... (kernels/opencl, share/optune/opencl)
  std::string work_dir;           // where artifacts go; "" = a fresh temp dir, removed at the end
};

class OpenCLBuilder final : public Builder {
 public:
  explicit OpenCLBuilder(OpenCLBuilderOptions options);
  ~OpenCLBuilder() override;
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;
  // The device's driver compiles the programs: its platform and driver version.
  Toolchain toolchain(const kernels::DeviceInfo& device) const override;

 private:
  const std::string& source_text(const std::string& file);
  OpenCLBuilderOptions options_;
  BuildDirectory work_dir_;
  std::size_t next_id_ = 0;
  std::map<std::string, std::string> sources_;  // file name -> text, read once
};

}  // namespace optune::measure
