// Turning a front end's text (op, shape, target, file paths) into the typed parts a tuning run
// works on: the task of one workload on one device, the database, a suite. Every error of the
// user's input is BadInput.
#pragma once

#include <memory>
#include <string>

#include "optune/db/database.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/scheduling/suite.hpp"

namespace optune::app {

// The task of one (op, shape, target) on this machine's device.
// `workload` given: that workload instead of parsing op and shape (suite entries).
// `device` given: that (remote) device instead of this machine's.
// `template_name` given: that template (of the op and the target's backend) instead of the
// default one, the applicable template of highest priority.
std::shared_ptr<measure::MeasureTask> make_task(const std::string& op, const std::string& shape,
                                                const std::string& target,
                                                const kernels::Workload* workload = nullptr,
                                                const kernels::DeviceInfo* device = nullptr,
                                                const std::string& template_name = "");

// The same on a parsed target and a device already found: no target text is read and no device
// detected again (a run's plan makes every task of the run from one of each).
std::shared_ptr<measure::MeasureTask> make_task(const kernels::Workload& workload, const kernels::Target& target,
                                                const kernels::DeviceInfo& device,
                                                const std::string& template_name = "");

// The target a front end's text names (backends::parse_target); BadInput for one that no backend runs.
kernels::Target parse_target_option(const std::string& target);
// The devices a tune's target names (backends::parse_targets): one, or several GPUs ("cuda:all",
// "cuda:0,1"); BadInput for a malformed list, another backend's, or several devices with `remote`
// (a server measures on its own device).
std::vector<kernels::Target> parse_spread_targets(const std::string& target, bool remote);
// BadInput where a device of `spread` after the first is of another model than `first` (the
// first's, detected already): their records would mix two devices. Detects each of them.
void check_one_model(const std::vector<kernels::Target>& spread, const kernels::DeviceInfo& first);

// This machine's device of a target (the backend's detection: OpenCL platforms load, the CUDA
// driver starts); BadInput where the backend says the target is malformed.
kernels::DeviceInfo find_device_option(const kernels::Target& target);

// BadInput when the kernel file cannot be read or runs on another backend than the target's: said
// before any device is looked for.
void check_kernel_backend(const std::string& kernel_file, const kernels::Target& target);

// The task of a user's kernel file (kernels/kernel_file.hpp) at `shape` (its extents, "N=1024,M=512";
// "" for the file's own) on a target of the file's backend; the task owns the file's template.
std::shared_ptr<measure::MeasureTask> make_kernel_task(const std::string& kernel_file, const std::string& shape,
                                                       const std::string& target,
                                                       const kernels::DeviceInfo* device = nullptr);

std::shared_ptr<measure::MeasureTask> make_kernel_task(const std::string& kernel_file, const std::string& shape,
                                                       const kernels::Target& target, const kernels::DeviceInfo& device);

// The task of a suite's or job's entry: its operator workload, or its kernel file.
std::shared_ptr<measure::MeasureTask> make_entry_task(const tuner::SuiteEntry& entry, const std::string& target,
                                                      const kernels::DeviceInfo* device = nullptr);
std::shared_ptr<measure::MeasureTask> make_entry_task(const tuner::SuiteEntry& entry, const kernels::Target& target,
                                                      const kernels::DeviceInfo& device);

db::Database open_database(const std::string& path, db::Database::Mode mode);

// The suite of a file, with `layout` (a layout name; empty: the file's own) replacing its
// suite-level layout, and `dtype` (a dtype name; empty: the file's own) its suite-level dtype.
tuner::Suite load_suite_option(const std::string& path, const std::string& layout, const std::string& dtype = "");

}  // namespace optune::app
