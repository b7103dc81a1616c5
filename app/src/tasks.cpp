#include "optune/app/tasks.hpp"

#include <optional>

#include "optune/app/bad_input.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/measure/cpu_device.hpp"
#include "optune/measure/opencl_devices.hpp"

namespace optune::app {

std::shared_ptr<measure::MeasureTask> make_task(const std::string& op, const std::string& shape,
                                                const std::string& target, const kernels::Workload* workload,
                                                const kernels::DeviceInfo* device) {
  auto task = std::make_shared<measure::MeasureTask>();
  try {
    task->workload = workload ? *workload : kernels::parse_workload(kernels::parse_op(op), shape);
    task->target = kernels::parse_target(target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  if (task->target.backend == kernels::Backend::kCpu && !task->target.is_native_cpu() && !device)
    throw BadInput("target " + task->target.str() + " is measured on a remote device: give --rpc KEY@HOST:PORT");
  if (device) task->device = *device;
  else if (task->target.backend == kernels::Backend::kCpu) task->device = measure::detect_local_cpu();
  if (task->target.backend == kernels::Backend::kOpenCL && !device) {
    try {
      task->device = measure::find_opencl_device(task->target);
    } catch (const std::invalid_argument& error) {
      throw BadInput(error.what());
    }
  }
  try {
    task->kernel_template = &kernels::find_template(task->workload.op, task->target.backend);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  task->space = task->kernel_template->space(task->workload, task->device);
  return task;
}

db::Database open_database(const std::string& path, db::Database::Mode mode) {
  try {
    return db::Database::open(path, mode);
  } catch (const db::StorageError&) {
    throw;  // a full disk is the run's failure (exit 1), not bad input
  } catch (const db::DatabaseError& error) {
    throw BadInput(error.what());
  }
}

tuner::Suite load_suite_option(const std::string& path, const std::string& layout) {
  std::optional<int> layout_block;
  try {
    if (!layout.empty()) layout_block = kernels::parse_layout(layout);
    return tuner::load_suite(path, layout_block);
  } catch (const std::invalid_argument& error) {  // SuiteError too
    throw BadInput(error.what());
  }
}

}  // namespace optune::app
