#include "measuring.hpp"

#include "cli_support.hpp"
#include "optune/measure/local_builder.hpp"
#include "optune/measure/opencl_builder.hpp"

namespace optune::cli {
namespace {

std::unique_ptr<measure::Builder> make_builder(const MeasureSettings& settings) {
  if (kernels::parse_target(settings.target).backend == kernels::Backend::kOpenCL)
    return std::make_unique<measure::OpenCLBuilder>(measure::OpenCLBuilderOptions{opencl_kernel_dir(), ""});
  measure::LocalBuilderOptions build;
  build.compiler = settings.compiler;
  build.include_dirs = kernel_include_dirs();
  build.jobs = settings.jobs;
  build.timeout_seconds = settings.compile_timeout;
  return std::make_unique<measure::LocalBuilder>(build);
}

}  // namespace

Measuring::Measuring(const MeasureSettings& settings)
    : builder(make_builder(settings)), runner({worker_path(), settings.timing, true, opencl_cache_dir()}) {}

}  // namespace optune::cli
