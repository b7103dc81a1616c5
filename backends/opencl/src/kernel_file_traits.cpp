// The opencl backend's kernel files: an OpenCL C kernel launched over an NDRange, its expressions
// sized by the device's CL_DEVICE_* limits.
#include "templates.hpp"

namespace optune::kernels {
namespace {

double work_item_size(const DeviceInfo& device, std::size_t dimension) {
  if (dimension >= device.max_work_item_sizes.size()) return 0;
  return static_cast<double>(device.max_work_item_sizes[dimension]);
}

}  // namespace

const KernelFileTraits& opencl_kernel_file_traits() {
  static const KernelFileTraits traits{
      .backend = "opencl",
      .source_extensions = {".cl"},
      // OpenCL C's address spaces: as -D macros they would break every build of the kernel.
      .reserved_words = {"kernel", "global", "local", "constant", "private"},
      .device_limits =
          {
              // CL_DEVICE_MAX_WORK_GROUP_SIZE (work-items)
              {"max_work_group_size", [](const DeviceInfo& d) { return static_cast<double>(d.max_work_group_size); }},
              // CL_DEVICE_LOCAL_MEM_SIZE (bytes)
              {"local_mem_size", [](const DeviceInfo& d) { return static_cast<double>(d.local_mem_bytes); }},
              // CL_DEVICE_MAX_COMPUTE_UNITS
              {"compute_units", [](const DeviceInfo& d) { return static_cast<double>(d.cores); }},
              // CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT (floats)
              {"vector_width_float", [](const DeviceInfo& d) { return static_cast<double>(d.preferred_vector_width); }},
              // CL_DEVICE_MAX_WORK_ITEM_SIZES, per dimension (work-items)
              {"max_work_item_size_0", [](const DeviceInfo& d) { return work_item_size(d, 0); }},
              {"max_work_item_size_1", [](const DeviceInfo& d) { return work_item_size(d, 1); }},
              {"max_work_item_size_2", [](const DeviceInfo& d) { return work_item_size(d, 2); }},
          },
      .launch = LaunchModel::kNDRange,
      .work_group_limits =
          [](const DeviceInfo& d) {
            WorkGroupLimits limits;
            limits.max_size = static_cast<double>(d.max_work_group_size);
            for (std::size_t i = 0; i < 3; ++i) limits.max_per_dimension[i] = work_item_size(d, i);
            return limits;
          },
      .header = {.device_name_note = " (CL_DEVICE_NAME)", .build_options_note = "clBuildProgram's options"},
  };
  return traits;
}

}  // namespace optune::kernels
