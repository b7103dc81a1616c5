#include "optune/app/tasks.hpp"

#include <algorithm>
#include <optional>

#include "optune/app/bad_input.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::app {
namespace {

std::string template_choices(const measure::MeasureTask& task) {
  std::string names;
  for (const auto* kernel : backends::templates_for(task.workload, task.target.backend, task.device))
    names += (names.empty() ? "" : ", ") + kernel->name();
  return "template " + task.kernel_template->name() + " does not apply to " + task.workload.key() +
         " (templates that do: " + (names.empty() ? "none" : names) + ")";
}

// A kernel file runs on its own backend only; throws std::invalid_argument naming both.
void require_kernel_backend(const kernels::KernelSpec& spec, const std::string& kernel_file,
                            const kernels::Target& target) {
  if (target.backend != spec.backend)
    throw std::invalid_argument(kernel_file + ": backend: the kernel runs on " + spec.backend + ", not on target " +
                                target.str());
}

}  // namespace

kernels::DeviceInfo find_device_option(const kernels::Target& target) {
  try {
    return backends::find_device(target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

void check_kernel_backend(const std::string& kernel_file, const kernels::Target& target) {
  try {
    require_kernel_backend(backends::load_kernel_file(kernel_file), kernel_file, target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

kernels::Target parse_target_option(const std::string& target) {
  try {
    return backends::parse_target(target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

std::vector<kernels::Target> parse_spread_targets(const std::string& target, bool remote) {
  std::vector<kernels::Target> targets;
  try {
    targets = backends::parse_targets(target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  if (targets.size() > 1 && remote)
    throw BadInput("target " + target + ": several devices at once are measured on this machine only, not over --rpc");
  return targets;
}

void check_one_model(const std::vector<kernels::Target>& spread, const kernels::DeviceInfo& first) {
  for (std::size_t i = 1; i < spread.size(); ++i) {
    const kernels::DeviceInfo other = find_device_option(spread[i]);
    if (other.fingerprint_id() != first.fingerprint_id())
      throw BadInput("target " + spread[i].str() + " is a " + other.name + ", " + spread.front().str() + " a " + first.name +
                     "; one tune measures on devices of one model (name them: cuda:0,1)");
  }
}

std::shared_ptr<measure::MeasureTask> make_task(const std::string& op, const std::string& shape,
                                                const std::string& target, const kernels::Workload* workload,
                                                const kernels::DeviceInfo* device,
                                                const std::string& template_name) {
  kernels::Workload parsed;
  try {
    parsed = workload ? *workload : kernels::parse_workload(kernels::parse_op(op), shape);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  const kernels::Target parsed_target = parse_target_option(target);
  return make_task(parsed, parsed_target, device ? *device : find_device_option(parsed_target), template_name);
}

std::shared_ptr<measure::MeasureTask> make_task(const kernels::Workload& workload, const kernels::Target& target,
                                                const kernels::DeviceInfo& device, const std::string& template_name) {
  auto task = std::make_shared<measure::MeasureTask>();
  try {
    task->workload = workload;
    task->target = target;
    task->device = device;
    task->kernel_template = template_name.empty()
                                ? &backends::default_template(task->workload, task->target.backend, task->device)
                                : &backends::find_template(template_name);
    if (task->kernel_template->op() != task->workload.op || task->kernel_template->backend() != task->target.backend)
      throw std::invalid_argument("template " + task->kernel_template->name() + " is not a template of " +
                                  std::string(kernels::op_name(task->workload.op)) + " on " + task->target.backend);
    const auto dtypes = task->kernel_template->dtypes();
    if (std::find(dtypes.begin(), dtypes.end(), task->workload.dtype) == dtypes.end()) {
      std::string names;
      for (kernels::DataType dtype : dtypes) names += (names.empty() ? "" : ", ") + std::string(kernels::data_type_name(dtype));
      throw std::invalid_argument("template " + task->kernel_template->name() + " runs dtypes " + names + ", not " +
                                  std::string(kernels::data_type_name(task->workload.dtype)));
    }
    if (!task->kernel_template->applies(task->workload, task->device))
      throw std::invalid_argument(template_choices(*task));
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  task->space = task->kernel_template->space(task->workload, task->device);
  return task;
}

std::shared_ptr<measure::MeasureTask> make_kernel_task(const std::string& kernel_file, const std::string& shape,
                                                       const std::string& target, const kernels::DeviceInfo* device) {
  const kernels::Target parsed_target = parse_target_option(target);
  if (device) return make_kernel_task(kernel_file, shape, parsed_target, *device);
  // The file's backend is checked before a device of the target is looked for.
  check_kernel_backend(kernel_file, parsed_target);
  return make_kernel_task(kernel_file, shape, parsed_target, find_device_option(parsed_target));
}

std::shared_ptr<measure::MeasureTask> make_kernel_task(const std::string& kernel_file, const std::string& shape,
                                                       const kernels::Target& target, const kernels::DeviceInfo& device) {
  auto task = std::make_shared<measure::MeasureTask>();
  try {
    kernels::KernelSpec spec = backends::load_kernel_file(kernel_file);
    require_kernel_backend(spec, kernel_file, target);
    task->target = target;
    task->device = device;
    task->owned_template = backends::kernel_file_template(spec);
    task->kernel_template = task->owned_template.get();
    task->workload = kernels::kernel_file_of(*task->kernel_template)->workload(shape, task->device);
    task->space = task->kernel_template->space(task->workload, task->device);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  try {
    task->kernel_template->default_config(task->workload, task->device, task->space);
  } catch (const std::exception&) {
    throw BadInput(kernel_file + ": constraints: no config of the knobs is valid for " + task->workload.key() +
                   " on " + task->device.name);
  }
  return task;
}

std::shared_ptr<measure::MeasureTask> make_entry_task(const tuner::SuiteEntry& entry, const std::string& target,
                                                      const kernels::DeviceInfo* device) {
  if (!entry.kernel_file.empty())
    return make_kernel_task(entry.kernel_file, kernels::kernel_shape_text(entry.workload.kernel()), target, device);
  return make_task(std::string(kernels::op_name(entry.workload.op)), "", target, &entry.workload, device);
}

std::shared_ptr<measure::MeasureTask> make_entry_task(const tuner::SuiteEntry& entry, const kernels::Target& target,
                                                      const kernels::DeviceInfo& device) {
  if (!entry.kernel_file.empty())
    return make_kernel_task(entry.kernel_file, kernels::kernel_shape_text(entry.workload.kernel()), target, device);
  return make_task(entry.workload, target, device);
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

tuner::Suite load_suite_option(const std::string& path, const std::string& layout, const std::string& dtype) {
  std::optional<int> layout_block;
  std::optional<kernels::DataType> suite_dtype;
  try {
    if (!layout.empty()) layout_block = kernels::parse_layout(layout);
    if (!dtype.empty()) suite_dtype = kernels::parse_data_type(dtype);
    return tuner::load_suite(path, layout_block, suite_dtype);
  } catch (const std::invalid_argument& error) {  // SuiteError too
    throw BadInput(error.what());
  }
}

}  // namespace optune::app
