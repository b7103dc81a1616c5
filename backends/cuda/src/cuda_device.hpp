// CUDA devices as the tuner keys and shapes by them (kernels::DeviceInfo, the same on the host
// and in the worker, so their fingerprints agree), and the device a target names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "devices.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"

namespace optune::backends::cuda {

// DeviceInfo of a CUDA device: kind "cuda", isa {"sm_XY"} (its compute capability), cores = SMs,
// local_mem_bytes = the opt-in shared memory per block, work-group limits = block limits, and
// attributes (warp size, grid limits, registers, memory, clock).
kernels::DeviceInfo cuda_device_info(const CudaDeviceInfo& device);

// The ordinal of a target's spec: "" is 0, else digits. Throws std::invalid_argument
// "target: bad CUDA device 'x' (an ordinal: cuda:0)".
int cuda_ordinal(std::string_view spec);

// The device a target names. Throws std::invalid_argument naming what is missing: the driver
// (why it cannot be loaded), any device, or this ordinal (with the devices there are).
CudaDeviceInfo find_cuda_device(const kernels::Target& target);

}  // namespace optune::backends::cuda
