#include "cli_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include <unistd.h>

#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/measure/cpu_device.hpp"
#include "optune/measure/opencl_devices.hpp"

namespace optune::cli {
namespace fs = std::filesystem;
namespace {

fs::path executable_dir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : self.parent_path();
}

}  // namespace

std::shared_ptr<measure::MeasureTask> make_task(const std::string& op, const std::string& shape,
                                                const std::string& target, const kernels::Workload* workload,
                                                const kernels::DeviceInfo* device) {
  auto task = std::make_shared<measure::MeasureTask>();
  try {
    task->workload = workload ? *workload : kernels::parse_workload(kernels::parse_op(op), shape);
    task->target = kernels::parse_target(target);
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
  if (task->target.backend == kernels::Backend::kCpu && !task->target.is_native_cpu() && !device)
    throw UsageError("target " + task->target.str() + " is measured on a remote device: give --rpc KEY@HOST:PORT");
  if (device) task->device = *device;
  else if (task->target.backend == kernels::Backend::kCpu) task->device = measure::detect_local_cpu();
  if (task->target.backend == kernels::Backend::kOpenCL && !device) {
    try {
      task->device = measure::find_opencl_device(task->target);
    } catch (const std::invalid_argument& error) {
      throw UsageError(error.what());
    }
  }
  try {
    task->kernel_template = &kernels::find_template(task->workload.op, task->target.backend);
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
  task->space = task->kernel_template->space(task->workload, task->device);
  return task;
}

db::Database open_database(const std::string& path, db::Database::Mode mode) {
  try {
    return db::Database::open(path, mode);
  } catch (const db::DatabaseError& error) {
    throw UsageError(error.what());
  }
}

std::string worker_path() {
  fs::path beside = executable_dir() / "optune-worker";
  if (fs::exists(beside)) return beside.string();
  throw std::runtime_error("optune-worker not found next to optune in " + executable_dir().string());
}

std::vector<std::string> kernel_include_dirs() {
  // Installed: <prefix>/bin/optune and <prefix>/include/optune/kernels. Built: the source tree.
  fs::path installed = executable_dir().parent_path() / "include";
  if (fs::exists(installed / "optune" / "kernels" / "cpu" / "gemm.hpp")) return {installed.string()};
  return {OPTUNE_SOURCE_KERNEL_INCLUDE_DIR};
}

std::string opencl_kernel_dir() {
  fs::path installed = executable_dir().parent_path() / "share" / "optune" / "opencl";
  if (fs::exists(installed / "gemm.cl")) return installed.string();
  return (fs::path(OPTUNE_SOURCE_KERNEL_INCLUDE_DIR).parent_path() / "opencl").string();
}

std::string opencl_cache_dir() { return opencl::default_program_cache_dir(); }

tuner::Suite load_suite_option(const std::string& path, const std::string& layout) {
  std::optional<int> layout_block;
  try {
    if (!layout.empty()) layout_block = kernels::parse_layout(layout);
    return tuner::load_suite(path, layout_block);
  } catch (const std::invalid_argument& error) {  // SuiteError too
    throw UsageError(error.what());
  }
}

void add_layout_option(CLI::App& command, std::string& layout) {
  command.add_option("--layout", layout,
                     "With --suite: the activation layout the network keeps between conv layers (nchw, nchw4c, "
                     "nchw8c, nchw16c), replacing the suite file's; layers that pin their own keep it");
}

}  // namespace optune::cli
