// The cpu backend's kernel files: a C++ extern "C" entry called once on the host, its expressions
// sized by the caches, cores and SIMD width of the machine.
#include "templates.hpp"

namespace optune::kernels {

const KernelFileTraits& cpu_kernel_file_traits() {
  static const KernelFileTraits traits{
      .backend = "cpu",
      .source_extensions = {".cpp", ".cc", ".cxx"},
      .reserved_words = {},
      .device_limits =
          {
              {"cores", [](const DeviceInfo& d) { return static_cast<double>(d.cores); }},  // available to the process
              {"l1_bytes", [](const DeviceInfo& d) { return static_cast<double>(d.l1d_bytes); }},  // data caches
              {"l2_bytes", [](const DeviceInfo& d) { return static_cast<double>(d.l2_bytes); }},
              {"l3_bytes", [](const DeviceInfo& d) { return static_cast<double>(d.l3_bytes); }},  // 0: none
              // float32 lanes of the widest SIMD vector the kernel should use
              {"simd_lanes", [](const DeviceInfo& d) { return static_cast<double>(d.simd_f32_lanes()); }},
          },
      .launch = LaunchModel::kCall,
      .header = {.device_name_note = "", .build_options_note = "the compiler's, for the shared object"},
  };
  return traits;
}

}  // namespace optune::kernels
