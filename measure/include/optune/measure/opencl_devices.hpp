// Lists the OpenCL devices of every installed platform (through the ICD loader), with the facts a
// template needs and the fingerprint stored with records. No platform installed: an empty list.
// Also resolves an OpenCL target ("opencl", "opencl:<platform>:<device>", each by index or
// case-insensitive name substring) to one device.
#pragma once

#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"

namespace optune::measure {

std::vector<kernels::DeviceInfo> list_opencl_devices();

// The device an OpenCL target names; throws std::invalid_argument naming the target and the
// devices there are when none matches.
kernels::DeviceInfo find_opencl_device(const kernels::Target& target);

}  // namespace optune::measure
