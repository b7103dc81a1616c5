#include "measuring.hpp"

#include "cli_support.hpp"

namespace optune::cli {
namespace {

measure::LocalBuilderOptions builder_options(const MeasureSettings& settings) {
  measure::LocalBuilderOptions build;
  build.compiler = settings.compiler;
  build.include_dirs = kernel_include_dirs();
  build.jobs = settings.jobs;
  build.timeout_seconds = settings.compile_timeout;
  return build;
}

}  // namespace

Measuring::Measuring(const MeasureSettings& settings)
    : builder(builder_options(settings)), runner({worker_path(), settings.timing, true}) {}

}  // namespace optune::cli
