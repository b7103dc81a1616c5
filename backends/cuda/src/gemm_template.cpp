// The "gemm.cuda" template: C = A * B in bf16 or f16 on NVIDIA tensor cores (mma.sync m16n8k16,
// float32 accumulation; kernels/gemm_mma.cu), for devices of compute capability 8.0 and later.
// Its knobs are the block tile (bm x bn, bk deep), the warps that share it (wm x wn), the
// cp.async pipeline's depth (stages) and the band of row tiles blocks are walked in (group_m).
// The space keeps to the device's threads per block and shared memory, at most 128
// accumulators per thread, and tiles not far beyond the matrix.
#include <algorithm>
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
constexpr const char* kBm = "bm";            // block tile in M
constexpr const char* kBn = "bn";            // block tile in N
constexpr const char* kBk = "bk";            // K slice per pipeline stage
constexpr const char* kWm = "wm";            // warps along M
constexpr const char* kWn = "wn";            // warps along N
constexpr const char* kStages = "stages";    // K slices in flight in shared memory
constexpr const char* kGroupM = "group_m";   // row tiles per band of the block walk; 1: row by row

constexpr int kPadElements = 8;  // gemm_mma.cu's PAD: 16 bytes per shared-memory row
constexpr std::int64_t kMaxAccumulators = 128;

struct Tile {
  std::int64_t bm, bn, bk, wm, wn, stages, group_m;
  explicit Tile(const ss::ConfigView& v)
      : bm(std::int64_t(v.number(kBm))), bn(std::int64_t(v.number(kBn))), bk(std::int64_t(v.number(kBk))),
        wm(std::int64_t(v.number(kWm))), wn(std::int64_t(v.number(kWn))), stages(std::int64_t(v.number(kStages))),
        group_m(std::int64_t(v.number(kGroupM))) {}
  std::int64_t threads() const { return wm * wn * 32; }
  std::int64_t warp_m() const { return bm / wm; }
  std::int64_t warp_n() const { return bn / wn; }
  // A thread's floats: 4 of each of its warp's (warp_m / 16) x (warp_n / 8) mma tiles.
  std::int64_t accumulators() const { return (warp_m() / 16) * (warp_n() / 8) * 4; }
  std::int64_t shared_bytes() const { return stages * (bm * (bk + kPadElements) + bk * (bn + kPadElements)) * 2; }
};

class CudaGemmTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm.cuda"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::vector<DataType> dtypes() const override { return {DataType::kF16, DataType::kBF16}; }

  // 16-byte rows of chunks: K and N in multiples of 8 elements.
  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    return device.nvidia_compute_capability() >= 80 && s.K % 8 == 0 && s.N % 8 == 0;
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    if (!applies(workload, device))
      throw std::invalid_argument(fmt::format("gemm.cuda: {} needs compute capability 8.0 or later and K and N in "
                                              "multiples of 8",
                                              workload.key()));
    ss::ConfigSpace space;
    space.add(knob(kBm, {64, 128, 256}));
    space.add(knob(kBn, {64, 128, 256}));
    space.add(knob(kBk, {32, 64}));
    space.add(knob(kWm, {1, 2, 4}));
    space.add(knob(kWn, {1, 2, 4}));
    space.add(knob(kStages, {2, 3, 4, 5}));
    space.add(knob(kGroupM, {1, 8}));
    const double max_threads = double(device.max_work_group_size);
    space.add_constraint("warp tiles are multiples of 16 x 16", [](const ss::ConfigView& v) {
      const Tile t(v);
      return t.bm % t.wm == 0 && t.bn % t.wn == 0 && t.warp_m() % 16 == 0 && t.warp_n() % 16 == 0;
    });
    space.add_constraint("64 to 512 threads, within the device's block", [max_threads](const ss::ConfigView& v) {
      const Tile t(v);
      return t.threads() >= 64 && t.threads() <= 512 && (max_threads <= 0 || double(t.threads()) <= max_threads);
    });
    space.add_constraint("at most 128 accumulators per thread", [](const ss::ConfigView& v) {
      return Tile(v).accumulators() <= kMaxAccumulators;
    });
    add_tile_rules(space, s, device, [](const ss::ConfigView& v) {
      const Tile t(v);
      return TileExtent{t.bm, t.bn, t.group_m, t.shared_bytes()};
    });
    return space;
  }

  // Read at run time (the kernel's last argument; the launch's grid): configs that differ only in
  // them share a cubin.
  std::vector<std::string> run_time_knobs() const override { return {kGroupM}; }

  ss::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    const nlohmann::json preferred = {{kBm, 128}, {kBn, 128}, {kBk, 32}, {kWm, 2}, {kWn, 2}, {kStages, 4}, {kGroupM, 8}};
    return preferred_config(space, preferred, name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo&,
                         const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    return gemm_kernel("gemm_mma",
                       {{"BM", t.bm}, {"BN", t.bn}, {"BK", t.bk}, {"WM", t.wm}, {"WN", t.wn}, {"STAGES", t.stages}},
                       t.group_m, s, workload.dtype, ceil_div(s.M, t.bm) * ceil_div(s.N, t.bn), t.threads(), t.shared_bytes());
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    const double waste = double(ceil_div(s.M, t.bm) * t.bm * ceil_div(s.N, t.bn) * t.bn) / (double(s.M) * s.N) - 1;
    auto features = tile_features(t.bm, t.bn, ceil_div(s.M, t.bm) * ceil_div(s.N, t.bn), device, t.accumulators(),
                                  t.shared_bytes());
    features.insert(features.begin() + 2, {"tile.edge_waste", waste});  // names and order stay as recorded
    return features;
  }
};

}  // namespace

const kernels::KernelTemplate& gemm_template() {
  static const CudaGemmTemplate instance;
  return instance;
}

}  // namespace optune::backends::cuda
