// Descriptions a front end shows as they are: a template's space for a workload and target, and
// this machine's devices, as JSON (`optune space/devices --format json`, optune.space(),
// optune.devices()).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace optune::app {

// {workload, template, target, device, size, valid_share_estimate, knobs, default_config}.
// `kernel_file` given: that user kernel's space at `shape` (its extents; "" the file's own), not op's.
nlohmann::json describe_space(const std::string& op, const std::string& shape, const std::string& target,
                              const std::string& kernel_file = "");

// [{target, id, fingerprint}] for this machine's CPU and each OpenCL device.
nlohmann::json describe_devices();

}  // namespace optune::app
