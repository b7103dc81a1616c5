// Detects this machine's CPU (model, usable cores, ISA flags, cache sizes) from /proc and /sys.
#pragma once

#include "optune/kernels/device_info.hpp"

namespace optune::measure {

kernels::DeviceInfo detect_local_cpu();

}  // namespace optune::measure
