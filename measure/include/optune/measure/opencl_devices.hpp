// Lists the OpenCL devices of every installed platform (through the ICD loader), with the facts a
// template needs and the fingerprint stored with records. No platform installed: an empty list.
#pragma once

#include <vector>

#include "optune/kernels/device_info.hpp"

namespace optune::measure {

std::vector<kernels::DeviceInfo> list_opencl_devices();

}  // namespace optune::measure
