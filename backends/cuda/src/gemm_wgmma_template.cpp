// The Hopper GEMM templates: C = A * B in bf16 or f16 on the warpgroup tensor cores
// (wgmma.mma_async, float32 accumulation), for compute capability 9.0 (their sm_90a cubins run
// there only), K and N in multiples of 8; the TMA one also in fp8 (e4m3 in, bf16 out, two scales,
// B given N x K: the catalog's gemm entry), K in multiples of 16. Two ways to feed them, one
// template each:
// - "gemm_tma.cuda" (kernels/gemm_tma.cu), the default there: a producer warpgroup copies each K
//   slice with the Tensor Memory Accelerator, mbarriers hand buffers to the consumer warpgroups;
//   knob `persistent` 1 launches one block (cluster) per SM, each walking tiles (the next tile's
//   copies overlap this one's stores); `split_k` 2 or 4 shares a tile's K among a cluster's blocks,
//   summed through distributed shared memory (short M: more blocks than tiles); `cluster_m` 2 pairs
//   blocks one above the other that multicast B to each other; `pingpong` 1 gives each of the two
//   consumers tiles of its own, one storing while the other computes; `tma_store` 1 writes C
//   through shared memory and TMA copies (whole lines, while the next tile runs); fp8's `promote_every` p adds
//   every p K slices' sums to float32 registers, 0 leaves the whole sum to the tensor cores.
// - "gemm_wgmma.cuda" (kernels/gemm_wgmma.cu): every thread copies with cp.async, block-wide
//   barriers between slices.
// Both tile C alike (wgmma_tile.hpp): the block's N tile (bn), warpgroups (wgs, each 64 x mi rows),
// the ring's depth (stages), the band of row tiles blocks walk (group_m); K slices 64 deep.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda_template.hpp"
#include "gemm_support.hpp"
#include "templates.hpp"
#include "wgmma_tile.hpp"

namespace optune::backends::cuda {
namespace {

namespace ss = search_space;
using kernels::DataType;

enum class Copies { kCpAsync, kTma };

class CudaWgmmaGemmTemplate final : public GemmTemplateBase {
 public:
  explicit CudaWgmmaGemmTemplate(Copies copies) : copies_(copies) {}
  std::string name() const override { return tma() ? "gemm_tma.cuda" : "gemm_wgmma.cuda"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::vector<DataType> dtypes() const override {
    if (tma()) return {DataType::kF16, DataType::kBF16, DataType::kE4M3};
    return {DataType::kF16, DataType::kBF16};
  }
  // Ahead of gemm.cuda's mma.sync where they apply; the TMA kernel first.
  int priority() const override { return tma() ? 2 : 1; }

  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    // The tensor maps' rows start on 16 bytes: K in multiples of 16 fp8 elements.
    const std::int64_t k_multiple = workload.dtype == DataType::kE4M3 ? 16 : 8;
    return device.nvidia_compute_capability() == 90 && s.K % k_multiple == 0 && s.N % 8 == 0;
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    if (!applies(workload, device))
      throw std::invalid_argument(fmt::format("{}: {} needs compute capability 9.0 and K and N in multiples of 8 "
                                              "(K of 16 in fp8)",
                                              name(), workload.key()));
    return tma() ? wgmma_space(s, device, /*producer_warpgroup=*/true, {2, 3, 4, 5, 6}, fp8(workload))
                 : wgmma_space(s, device, /*producer_warpgroup=*/false, {2, 3, 4, 5});
  }

  // Read at run time (the kernel's last argument; the launch's grid): configs that differ only in
  // them share a cubin.
  std::vector<std::string> run_time_knobs() const override {
    if (tma()) return {WgmmaTile::kGroupM, WgmmaTile::kPersistent};
    return {WgmmaTile::kGroupM};
  }

  // cp.async: 128 x 256 tiles in two warpgroups, three stages, the best of a first H100 sweep at
  // 4096^3. TMA: tma_preferred_configs() (wgmma_tile.hpp). fp8, accumulating in float32 (twice the
  // registers): 128 x 128 tiles of two warpgroups, persistent, else of one, as CUTLASS's fp8 default;
  // promoted every 2 slices (256 deep), not every one as CUTLASS: 1-7% faster at 2048^3 to 8192^3
  // on an H200 with the same error against the float64 reference (cuda-gemm.md, 2026-11-30).
  ss::Config default_config(const kernels::Workload& workload, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    using T = WgmmaTile;
    if (!tma())
      return preferred_config(space, {{T::kBn, 256}, {T::kMi, 1}, {T::kWgs, 2}, {T::kStages, 3}, {T::kGroupM, 8}},
                              name());
    if (fp8(workload)) {
      const nlohmann::json preferred = nlohmann::json::array(
          {{{T::kBn, 128}, {T::kMi, 1}, {T::kWgs, 2}, {T::kStages, 5}, {T::kGroupM, 8}, {T::kPersistent, 1},
            {T::kSplitK, 1}, {T::kClusterM, 1}, {T::kPingpong, 0}, {T::kTmaStore, 1}, {T::kPromoteEvery, 2}},
           {{T::kBn, 128}, {T::kMi, 1}, {T::kWgs, 1}, {T::kStages, 6}, {T::kGroupM, 1}, {T::kPersistent, 0},
            {T::kSplitK, 1}, {T::kClusterM, 1}, {T::kPingpong, 0}, {T::kTmaStore, 1}, {T::kPromoteEvery, 2}}});
      return preferred_config(space, preferred, name());
    }
    return preferred_config(space, tma_preferred_configs(), name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                         const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const WgmmaTile t(config, tma());
    if (!tma()) return gemm_kernel("gemm_wgmma", t.defines(device.cores), t.group_m, s, workload.dtype, t.tiles(s), t.threads(), t.shared_bytes());
    CudaKernel kernel =
        gemm_kernel("gemm_tma", t.defines(device.cores), t.group_m, s, workload.dtype, t.blocks(s, device.cores), t.threads(), t.shared_bytes());
    // A (M x K): boxes of a 128-byte row of k by the block's rows; B (K x N): slabs of 64 n by a
    // 64-deep slice; fp8's B (N x K): as A, the block's columns (a multicast pair's half each).
    const std::int64_t slice = 128 / std::int64_t(kernels::data_type_bytes(workload.dtype));
    kernel.tensor_maps = {matrix_map(0, workload.dtype, s.M, s.K, t.bm(), slice, CU_TENSOR_MAP_SWIZZLE_128B),
                          fp8(workload) ? matrix_map(1, workload.dtype, s.N, s.K, t.bn / t.cluster_m, slice, CU_TENSOR_MAP_SWIZZLE_128B)
                                        : matrix_map(1, workload.dtype, s.K, s.N, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B)};
    // C, argument 2 (fp8: 4, after the scales), where TMA copies store it.
    if (t.tma_store) kernel.tensor_maps.push_back(store_map(fp8(workload) ? 4 : 2, workload.dtype, s));
    return kernel;
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const WgmmaTile t(config, tma());
    return tma() ? wgmma_tma_features(t, workload.gemm(), device) : wgmma_features(t, workload.gemm(), device);
  }

 private:
  bool tma() const { return copies_ == Copies::kTma; }
  static bool fp8(const kernels::Workload& workload) { return workload.dtype == DataType::kE4M3; }
  Copies copies_;
};

}  // namespace

const kernels::KernelTemplate& gemm_wgmma_template() {
  static const CudaWgmmaGemmTemplate instance(Copies::kCpAsync);
  return instance;
}

const kernels::KernelTemplate& gemm_tma_template() {
  static const CudaWgmmaGemmTemplate instance(Copies::kTma);
  return instance;
}

}  // namespace optune::backends::cuda
