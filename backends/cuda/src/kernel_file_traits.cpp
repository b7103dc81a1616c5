// The cuda backend's kernel files, in Kernel Tuner's terms: a CUDA C++ kernel (templated ones
// too: the entry is a name expression) launched over a grid of blocks, its expressions sized by
// the device's limits as cuDeviceGetAttribute reports them.
#include "templates.hpp"

namespace optune::backends::cuda {
namespace {

double attribute(const kernels::DeviceInfo& device, std::string_view name) {
  const auto found = device.attributes.find(name);
  return found == device.attributes.end() ? 0 : static_cast<double>(found->second);
}

double block_dim(const kernels::DeviceInfo& device, std::size_t dimension) {
  if (dimension >= device.max_work_item_sizes.size()) return 0;
  return static_cast<double>(device.max_work_item_sizes[dimension]);
}

}  // namespace

const kernels::KernelFileTraits& cuda_kernel_file_traits() {
  using kernels::DeviceInfo;
  static const kernels::KernelFileTraits traits{
      .backend = "cuda",
      .source_extensions = {".cu", ".cuh"},
      // CUDA's built-in variables and types: as -D macros they would break every build.
      .reserved_words = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3"},
      .device_limits =
          {
              // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
              {"max_threads_per_block", [](const DeviceInfo& d) { return static_cast<double>(d.max_work_group_size); }},
              // CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z (threads)
              {"max_block_dim_x", [](const DeviceInfo& d) { return block_dim(d, 0); }},
              {"max_block_dim_y", [](const DeviceInfo& d) { return block_dim(d, 1); }},
              {"max_block_dim_z", [](const DeviceInfo& d) { return block_dim(d, 2); }},
              // CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z (blocks)
              {"max_grid_dim_x", [](const DeviceInfo& d) { return attribute(d, "max_grid_dim_x"); }},
              {"max_grid_dim_y", [](const DeviceInfo& d) { return attribute(d, "max_grid_dim_y"); }},
              {"max_grid_dim_z", [](const DeviceInfo& d) { return attribute(d, "max_grid_dim_z"); }},
              // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (bytes a block may ask for)
              {"max_shared_memory_per_block", [](const DeviceInfo& d) { return static_cast<double>(d.local_mem_bytes); }},
              // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
              {"multiprocessor_count", [](const DeviceInfo& d) { return static_cast<double>(d.cores); }},
              // CU_DEVICE_ATTRIBUTE_WARP_SIZE
              {"warp_size", [](const DeviceInfo& d) { return attribute(d, "warp_size"); }},
              // 10 * major + minor: 90 on Hopper
              {"compute_capability", [](const DeviceInfo& d) { return static_cast<double>(d.nvidia_compute_capability()); }},
              // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE (bytes)
              {"l2_cache_size", [](const DeviceInfo& d) { return static_cast<double>(d.l2_bytes); }},
          },
      .launch = kernels::LaunchModel::kGridBlock,
      .work_group_limits =
          [](const DeviceInfo& d) {
            kernels::WorkGroupLimits limits;
            limits.max_size = static_cast<double>(d.max_work_group_size);
            for (std::size_t i = 0; i < 3; ++i) limits.max_per_dimension[i] = block_dim(d, i);
            limits.max_shared_memory = static_cast<double>(d.local_mem_bytes);
            return limits;
          },
      .template_entries = true,
      .header = {.device_name_note = " (cuDeviceGetName)", .build_options_note = "NVRTC's options"},
  };
  return traits;
}

}  // namespace optune::backends::cuda
