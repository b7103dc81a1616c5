// Descriptions a front end shows as they are: a template's space for a workload and target, and
// this machine's devices, as JSON (`optune space/devices --format json`, optune.space(),
// optune.devices()).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "optune/measure/measure_input.hpp"

namespace optune::app {

// {workload, template, target, device, size, valid_share_estimate, knobs, default_config}.
// `kernel_file` given: that user kernel's space at `shape` (its extents; "" the file's own), not op's.
nlohmann::json describe_space(const std::string& op, const std::string& shape, const std::string& target,
                              const std::string& kernel_file = "");

// [{target, id, fingerprint}] for this machine's CPU and each OpenCL device.
nlohmann::json describe_devices();

// Each registered backend with this machine's devices of it, for `optune devices`' table:
// {backend, devices: [{name (platform / name where it has a platform), id, details}]}, a backend
// with no device here listed with none.
nlohmann::json list_backend_devices();

// The unit a task's records count their work in: GFLOP/s, or a kernel file's own (GB/s, runs/s).
std::string throughput_unit(const measure::MeasureTask& task);

// For help texts: the operators ("gemm, conv2d, depthwise_conv2d") and the forms of a target that
// the registered backends read ("cpu, cpu:<triple>, opencl, ...").
std::string operator_names();
std::string target_forms();

}  // namespace optune::app
