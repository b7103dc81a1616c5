// Lists the OpenCL devices of every installed platform (through the ICD loader), with the facts a
// template needs and the fingerprint stored with records. No platform installed: an empty list.
// Also resolves an OpenCL target ("opencl", "opencl:<platform>:<device>", each by index or
// case-insensitive name substring) to one device.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"

namespace optune::measure {

std::vector<kernels::DeviceInfo> list_opencl_devices();

// An OpenCL target's spec: "<platform>[:<device>]", each an index or a case-insensitive name
// substring; "" is the first device, ":<device>" a device of the first platform. The platform is
// written without ':' (the first ':' after it starts the device).
struct OpenCLSelector {
  std::string platform;  // "" the first
  std::string device;    // "" the first
  std::string spec() const;  // canonical: parse_opencl_spec(spec()) == *this
};
// Throws std::invalid_argument "target: ..." for an empty device or platform.
OpenCLSelector parse_opencl_spec(std::string_view spec);

// The device an OpenCL target names; throws std::invalid_argument naming the target and the
// devices there are when none matches.
kernels::DeviceInfo find_opencl_device(const kernels::Target& target);

}  // namespace optune::measure
