// gemm.opencl's space for int8 GEMMs on packed quads (kernels/gemm_dot4.cl): four s8 values of K
// in one word, multiplied by dp4a on NVIDIA and by cl_khr_integer_dot_product where a device has
// it (widened where neither is: the kernel's portable path).
#pragma once

#include <cstdint>
#include <string>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels::opencl {

inline constexpr const char* kDot4Math = "dot4";  // the `math` knob's one option in this space

// i8 workloads whose K is a multiple of 4, on devices with a packed dot product: NVIDIA's dp4a
// (compute capability 6.1 and later) or cl_khr_integer_dot_product (the device's isa lists it).
// Elsewhere gemm.cl's widened int8 has the larger space.
bool takes_dot4(const Workload& workload, const DeviceInfo& device);

// A config of the space, as gemm_dot4.cl lays it out (the member names of gemm.opencl's other
// tiles, for their shared cost-model features).
struct Dot4Tile {
  std::int64_t mwg, nwg, kwg, mdimc, ndimc, gsw, splitk = 1;
  explicit Dot4Tile(const search_space::ConfigView& v);
  std::int64_t threads() const { return mdimc * ndimc; }
  std::int64_t outputs_per_item() const { return (mwg / mdimc) * (nwg / ndimc); }
  std::int64_t local_bytes() const { return 4 * (kwg / 4) * ((mwg + 1) + (nwg + 1)); }
};

search_space::ConfigSpace dot4_space(const Workload& workload, const DeviceInfo& device);
search_space::Config dot4_default(const Workload& workload, const DeviceInfo& device,
                                  const search_space::ConfigSpace& space, const std::string& template_name);
OpenCLKernel dot4_kernel(const Workload& workload, const search_space::ConfigView& config);

}  // namespace optune::kernels::opencl
