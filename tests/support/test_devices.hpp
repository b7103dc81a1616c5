// CPU devices the template tests build spaces for without the hardware: an AVX2 x86 machine, the
// same with AVX-512, and an aarch64 NEON board.
#pragma once

#include "optune/kernels/device_info.hpp"

namespace optune::test_support {

inline kernels::DeviceInfo avx2_device(int cores) {
  kernels::DeviceInfo device;
  device.name = "test zen3";
  device.arch = "x86_64";
  device.cores = cores;
  device.isa = {"avx", "avx2", "fma", "sse4_2"};
  return device;
}

inline kernels::DeviceInfo avx512_device() {
  kernels::DeviceInfo device = avx2_device(16);
  device.isa.push_back("avx512f");
  return device;
}

inline kernels::DeviceInfo neon_device() {
  kernels::DeviceInfo device;
  device.arch = "aarch64";
  device.cores = 4;
  device.isa = {"neon"};
  return device;
}

}  // namespace optune::test_support
