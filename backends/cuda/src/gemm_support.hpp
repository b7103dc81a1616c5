// What the CUDA GEMM templates share (gemm_template.cpp: mma.sync; gemm_wgmma_template.cpp:
// Hopper's wgmma): arithmetic on tile counts, the workload's defines, the rules every tile obeys.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuda_template.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::backends::cuda {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// The GEMM as the kernels read it: -DGEMM_M/N/K, and OPTUNE_F16 for f16, OPTUNE_E4M3 for fp8
// (else bf16).
inline std::vector<std::string> gemm_defines(const kernels::GemmShape& s, kernels::DataType dtype) {
  std::vector<std::string> defines = {fmt::format("-DGEMM_M={}", s.M), fmt::format("-DGEMM_N={}", s.N),
                                      fmt::format("-DGEMM_K={}", s.K)};
  if (dtype == kernels::DataType::kF16) defines.push_back("-DOPTUNE_F16");
  if (dtype == kernels::DataType::kE4M3) defines.push_back("-DOPTUNE_E4M3");
  return defines;
}

// A knob of the listed numeric values.
inline search_space::ValuesKnob knob(const char* name, std::vector<double> values) {
  return search_space::ValuesKnob{name, std::move(values)};
}

// A block tile not far beyond the matrix: at most the next power of two of M and N (64 at least).
inline bool tile_fits_shape(const kernels::GemmShape& s, std::int64_t bm, std::int64_t bn) {
  return bm <= std::max<std::int64_t>(64, next_pow2(s.M)) && bn <= std::max<std::int64_t>(64, next_pow2(s.N));
}

// A tile as the rules of add_tile_rules read it: C's rows and columns it covers (a cluster's, where
// blocks share one), the band of row tiles it is walked in, the block's shared memory.
struct TileExtent {
  std::int64_t rows, columns, group_m, shared_bytes;
};
// The rules every CUDA GEMM tile obeys: its shared memory within the device's, the tile not far
// beyond the matrix (tile_fits_shape), group_m only where there are row tiles to band.
void add_tile_rules(search_space::ConfigSpace& space, const kernels::GemmShape& shape,
                    const kernels::DeviceInfo& device,
                    std::function<TileExtent(const search_space::ConfigView&)> extent);

// The first of `preferred` (a config, or an array of them in order of preference) the space holds
// as valid, else the space's first valid config; throws std::invalid_argument "<template>: no
// valid config".
search_space::Config preferred_config(const search_space::ConfigSpace& space, const nlohmann::json& preferred,
                                      const std::string& template_name);

// A kernel of kernels/<file>.cu whose entry is named as the file: the knobs' -D defines, then the
// GEMM's (`shape` in `dtype`), launched as one row of `blocks` blocks of `threads` threads; the
// band of row tiles its blocks walk (group_m) is its last argument, read at run time.
CudaKernel gemm_kernel(const std::string& file, const std::vector<std::pair<const char*, std::int64_t>>& knobs,
                       std::int64_t group_m, const kernels::GemmShape& shape, kernels::DataType dtype, std::int64_t blocks,
                       std::int64_t threads, std::int64_t shared_bytes);

// emit_source of such a kernel: its options, launch and run-time arguments as comments, then the
// include of its file.
std::string gemm_source_text(const CudaKernel& kernel);

// A GEMM template of the backend's own kernels: what it emits follows from its kernel and launch.
class GemmTemplateBase : public CudaTemplate {
 public:
  std::string emit_source(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                          const search_space::ConfigView& config) const final {
    return gemm_source_text(cuda_kernel(workload, device, config));
  }
};

// The cost model's features every GEMM tile has: its intensity (bm x bn over bm + bn), the waves
// of `tiles` over the device's SMs, a thread's float accumulators and the block's shared memory.
std::vector<std::pair<std::string, double>> tile_features(std::int64_t bm, std::int64_t bn, std::int64_t tiles,
                                                          const kernels::DeviceInfo& device,
                                                          std::int64_t accumulators, std::int64_t shared_bytes);

}  // namespace optune::backends::cuda
