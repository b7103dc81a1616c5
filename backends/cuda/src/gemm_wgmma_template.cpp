// The "gemm_wgmma.cuda" template: C = A * B in bf16 or f16 on Hopper's warpgroup tensor cores
// (wgmma.mma_async, float32 accumulation; kernels/gemm_wgmma.cu), for compute capability 9.0
// (its sm_90a cubins run there only). On such a device it is the default GEMM template, ahead of
// gemm.cuda's mma.sync. Knobs: the block's N tile (bn), its warpgroups (wgs, each 64 x mi rows
// of the tile), the cp.async pipeline's depth (stages) and the band of row tiles blocks are
// walked in (group_m); K slices are 64 deep (one 128-byte swizzled row). The space keeps to the
// device's threads and shared memory and at most 128 accumulators per thread.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda_template.hpp"
#include "gemm_support.hpp"
#include "templates.hpp"

namespace optune::backends::cuda {
namespace {

namespace ss = search_space;
using kernels::DataType;

// Knob names: stored in records, a contract once released.
constexpr const char* kBn = "bn";            // block tile in N (one wgmma's N)
constexpr const char* kMi = "mi";            // 64-row tiles per warpgroup
constexpr const char* kWgs = "wgs";          // warpgroups (128 threads each) per block, along M
constexpr const char* kStages = "stages";    // K slices in flight in shared memory
constexpr const char* kGroupM = "group_m";   // row tiles per band of the block walk; 1: row by row

constexpr std::int64_t kSliceK = 64;         // gemm_wgmma.cu's BK
constexpr std::int64_t kAlignmentSlack = 1024;  // the swizzle atoms' 1024-byte alignment
constexpr std::int64_t kMaxAccumulators = 128;

struct Tile {
  std::int64_t bn, mi, wgs, stages, group_m;
  explicit Tile(const ss::ConfigView& v)
      : bn(std::int64_t(v.number(kBn))), mi(std::int64_t(v.number(kMi))), wgs(std::int64_t(v.number(kWgs))),
        stages(std::int64_t(v.number(kStages))), group_m(std::int64_t(v.number(kGroupM))) {}
  std::int64_t bm() const { return 64 * mi * wgs; }
  std::int64_t threads() const { return 128 * wgs; }
  std::int64_t accumulators() const { return mi * bn / 2; }
  // Each stage: the A tile (bm rows) and the B tile (bn columns) of 64 k in 128-byte rows.
  std::int64_t shared_bytes() const { return stages * (bm() + bn) * kSliceK * 2 + kAlignmentSlack; }
};

ss::ValuesKnob knob(const char* name, std::vector<double> values) { return ss::ValuesKnob{name, std::move(values)}; }

class CudaWgmmaGemmTemplate final : public CudaTemplate {
 public:
  std::string name() const override { return "gemm_wgmma.cuda"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::vector<DataType> dtypes() const override { return {DataType::kF16, DataType::kBF16}; }
  int priority() const override { return 1; }  // ahead of gemm.cuda where it applies

  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    return device.nvidia_compute_capability() == 90 && s.K % 8 == 0 && s.N % 8 == 0;
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    if (!applies(workload, device))
      throw std::invalid_argument(fmt::format("gemm_wgmma.cuda: {} needs compute capability 9.0 and K and N in "
                                              "multiples of 8",
                                              workload.key()));
    ss::ConfigSpace space;
    space.add(knob(kBn, {64, 128, 256}));
    space.add(knob(kMi, {1, 2}));
    space.add(knob(kWgs, {1, 2}));
    space.add(knob(kStages, {2, 3, 4, 5}));
    space.add(knob(kGroupM, {1, 8}));
    const double max_threads = double(device.max_work_group_size);
    const double shared_limit = double(device.local_mem_bytes);
    space.add_constraint("the block's threads fit the device", [max_threads](const ss::ConfigView& v) {
      return max_threads <= 0 || double(Tile(v).threads()) <= max_threads;
    });
    space.add_constraint("at most 128 accumulators per thread", [](const ss::ConfigView& v) {
      return Tile(v).accumulators() <= kMaxAccumulators;
    });
    space.add_constraint("shared memory fits the device", [shared_limit](const ss::ConfigView& v) {
      return shared_limit <= 0 || double(Tile(v).shared_bytes()) <= shared_limit;
    });
    space.add_constraint("tiles not far beyond the matrix", [s](const ss::ConfigView& v) {
      const Tile t(v);
      return tile_fits_shape(s, t.bm(), t.bn);
    });
    space.add_constraint("group_m is 1 unless there are row tiles to band", [s](const ss::ConfigView& v) {
      const Tile t(v);
      return t.group_m == 1 || ceil_div(s.M, t.bm()) > 1;
    });
    return space;
  }

  // 128 x 256 tiles in two warpgroups, three stages: the best of a first H100 sweep at 4096^3.
  ss::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    const nlohmann::json preferred = {{kBn, 256}, {kMi, 1}, {kWgs, 2}, {kStages, 3}, {kGroupM, 8}};
    return preferred_config(space, preferred, name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo&,
                         const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    return gemm_kernel("gemm_wgmma",
                       {{"BN", t.bn}, {"MI", t.mi}, {"WGS", t.wgs}, {"STAGES", t.stages}, {"GROUP_M", t.group_m}},
                       workload, ceil_div(s.M, t.bm()) * ceil_div(s.N, t.bn), t.threads(), t.shared_bytes());
  }

  std::string emit_source(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                          const ss::ConfigView& config) const override {
    return gemm_source_text(cuda_kernel(workload, device, config));
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    const double tiles = double(ceil_div(s.M, t.bm()) * ceil_div(s.N, t.bn));
    return {{"tile.intensity", double(t.bm() * t.bn) / double(t.bm() + t.bn)},
            {"tile.waves", tiles / std::max(1, device.cores)},
            {"thread.accumulators", double(t.accumulators())},
            {"block.shared_kib", double(t.shared_bytes()) / 1024}};
  }
};

}  // namespace

const kernels::KernelTemplate& gemm_wgmma_template() {
  static const CudaWgmmaGemmTemplate instance;
  return instance;
}

}  // namespace optune::backends::cuda
