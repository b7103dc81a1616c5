#include "gemm_support.hpp"

#include <algorithm>
#include <stdexcept>

namespace optune::backends::cuda {

void add_tile_rules(search_space::ConfigSpace& space, const kernels::GemmShape& s, const kernels::DeviceInfo& device,
                    std::function<TileExtent(const search_space::ConfigView&)> extent) {
  const double shared_limit = double(device.local_mem_bytes);
  space.add_constraint("shared memory fits the device", [shared_limit, extent](const search_space::ConfigView& v) {
    return shared_limit <= 0 || double(extent(v).shared_bytes) <= shared_limit;
  });
  space.add_constraint("tiles not far beyond the matrix", [s, extent](const search_space::ConfigView& v) {
    const TileExtent t = extent(v);
    return tile_fits_shape(s, t.rows, t.columns);
  });
  space.add_constraint("group_m is 1 unless there are row tiles to band", [s, extent](const search_space::ConfigView& v) {
    const TileExtent t = extent(v);
    return t.group_m == 1 || ceil_div(s.M, t.rows) > 1;
  });
}

search_space::Config preferred_config(const search_space::ConfigSpace& space, const nlohmann::json& preferred,
                                      const std::string& template_name) {
  for (const nlohmann::json& choice : preferred.is_array() ? preferred : nlohmann::json::array({preferred})) {
    const search_space::Config config = space.from_json(choice);
    if (space.is_valid(config)) return config;
  }
  for (std::uint64_t i = 0; i < space.size(); ++i)
    if (space.is_valid(space.from_index(i))) return space.from_index(i);
  throw std::invalid_argument(template_name + ": no valid config");
}

CudaKernel gemm_kernel(const std::string& file, const std::vector<std::pair<const char*, std::int64_t>>& knobs,
                       std::int64_t group_m,
                       const kernels::GemmShape& shape, kernels::DataType dtype, std::int64_t blocks,
                       std::int64_t threads, std::int64_t shared_bytes) {
  CudaKernel kernel;
  kernel.source_file = file + ".cu";
  kernel.program_name = kernel.source_file;
  for (const auto& [name, value] : knobs) kernel.options.push_back(fmt::format("-D{}={}", name, value));
  for (auto& define : gemm_defines(shape, dtype)) kernel.options.push_back(std::move(define));
  kernel.run_time_arguments = {static_cast<std::int32_t>(group_m)};
  kernel.entry = file;
  kernel.launch.dimensions = 1;
  kernel.launch.global = {blocks, 1, 1};
  kernel.launch.local = {threads, 1, 1};
  kernel.launch.shared_memory_bytes = shared_bytes;
  return kernel;
}

std::string gemm_source_text(const CudaKernel& kernel) {
  return fmt::format("// NVRTC options: {}\n// grid {} blocks of {} threads, {} bytes of shared memory\n"
                     "// run-time arguments after the tensor maps: {}\n#include \"{}\"\n",
                     fmt::join(kernel.options, " "), kernel.launch.global[0], kernel.launch.local[0],
                     kernel.launch.shared_memory_bytes, fmt::join(kernel.run_time_arguments, " "),
                     kernel.source_file);
}

std::vector<std::pair<std::string, double>> tile_features(std::int64_t bm, std::int64_t bn, std::int64_t tiles,
                                                          const kernels::DeviceInfo& device,
                                                          std::int64_t accumulators, std::int64_t shared_bytes) {
  return {{"tile.intensity", double(bm * bn) / double(bm + bn)},
          {"tile.waves", double(tiles) / std::max(1, device.cores)},
          {"thread.accumulators", double(accumulators)},
          {"block.shared_kib", double(shared_bytes) / 1024}};
}

}  // namespace optune::backends::cuda
