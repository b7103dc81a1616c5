// The "gemm_3xtf32.cuda" template: C = A * B in float32 at float32's accuracy on Hopper's tensor
// cores (kernels/gemm_3xtf32.cu: each operand split into TF32 parts, three wgmma products per
// step), for compute capability 9.0, K and N in multiples of 4 (the tensor maps' 16-byte rows).
// Its knobs: the block's rows of C (bm, one wgmma's N), the consumer warpgroups (wgs) and their
// 64-column tiles (mi), the ring's depth (stages), the band of row tiles blocks walk (group_m),
// one block per SM walking tiles (persistent), and how many 32-deep K slices the tensor cores sum
// before the sums are added to float32 registers (promote_every 1, 2 or 4: summed over all of K
// in the tensor cores, the error grew 25-fold past cuBLAS FP32's, so float32's accuracy, the
// template's contract, keeps them out; the kernel's header has the figures).
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
constexpr const char* kBm = "bm";                        // C's rows of a block's tile (wgmma's N)
constexpr const char* kMi = "mi";                        // 64-column tiles per consumer warpgroup
constexpr const char* kWgs = "wgs";                      // consumer warpgroups, side by side in N
constexpr const char* kStages = "stages";                // K slices in flight in shared memory
constexpr const char* kGroupM = "group_m";               // row tiles per band of the block walk
constexpr const char* kPersistent = "persistent";        // 1: a block per SM walks tiles
constexpr const char* kPromoteEvery = "promote_every";   // slices summed by the tensor cores alone

constexpr std::int64_t kSliceFloats = 32;   // gemm_3xtf32.cu's BK: a 128-byte row of k
constexpr std::int64_t kBRowPadding = 8;    // floats after each of B's rows in shared memory
constexpr std::int64_t kMaxBoxSide = 256;   // a TMA box's side
constexpr std::int64_t kMaxAccumulators = 128;

struct Tile {
  std::int64_t bm, mi, wgs, stages, group_m, promote_every;
  bool persistent;
  explicit Tile(const ss::ConfigView& v)
      : bm(std::int64_t(v.number(kBm))), mi(std::int64_t(v.number(kMi))), wgs(std::int64_t(v.number(kWgs))),
        stages(std::int64_t(v.number(kStages))), group_m(std::int64_t(v.number(kGroupM))),
        promote_every(std::int64_t(v.number(kPromoteEvery))), persistent(v.number(kPersistent) != 0) {}
  std::int64_t bn() const { return 64 * mi * wgs; }
  std::int64_t threads() const { return 128 * (wgs + 1); }
  // A consumer thread's floats: BM / 2 per 64-column tile, and as many for the tensor cores' sums.
  std::int64_t accumulators() const { return mi * bm; }
  // A's big and small parts (bm rows of 128 bytes each), B's 32 padded rows, per stage; the
  // swizzle atoms' 1024-byte alignment; three 8-byte mbarriers per stage.
  std::int64_t shared_bytes() const {
    return stages * (2 * bm * 128 + kSliceFloats * (bn() + kBRowPadding) * 4) + 1024 + 3 * stages * 8;
  }
  std::int64_t tiles(const kernels::GemmShape& s) const { return ceil_div(s.M, bm) * ceil_div(s.N, bn()); }
};

class Cuda3xTf32GemmTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm_3xtf32.cuda"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::vector<DataType> dtypes() const override { return {DataType::kF32}; }

  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    return device.nvidia_compute_capability() == 90 && s.K % 4 == 0 && s.N % 4 == 0;
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    if (!applies(workload, device))
      throw std::invalid_argument(
          fmt::format("{}: {} needs compute capability 9.0 and K and N in multiples of 4", name(), workload.key()));
    ss::ConfigSpace space;
    space.add(knob(kBm, {64, 128}));  // 256: 256 accumulators a thread
    space.add(knob(kMi, {1, 2}));
    space.add(knob(kWgs, {1, 2}));
    space.add(knob(kStages, {2, 3, 4, 5, 6}));
    space.add(knob(kGroupM, {1, 8}));
    space.add(knob(kPersistent, {0, 1}));
    space.add(knob(kPromoteEvery, {1, 2, 4}));
    const double max_threads = double(device.max_work_group_size);
    const int sms = device.cores;
    space.add_constraint("the block's threads fit the device", [max_threads](const ss::ConfigView& v) {
      return max_threads <= 0 || double(Tile(v).threads()) <= max_threads;
    });
    space.add_constraint("at most 128 accumulators per thread",
                         [](const ss::ConfigView& v) { return Tile(v).accumulators() <= kMaxAccumulators; });
    space.add_constraint("B's padded rows fit a TMA box", [](const ss::ConfigView& v) {
      return Tile(v).bn() + kBRowPadding <= kMaxBoxSide;
    });
    add_tile_rules(space, s, device, [](const ss::ConfigView& v) {
      const Tile t(v);
      return TileExtent{t.bm, t.bn(), t.group_m, t.shared_bytes()};
    });
    space.add_constraint("persistent only where tiles outnumber the SMs", [s, sms](const ss::ConfigView& v) {
      const Tile t(v);
      return !t.persistent || t.tiles(s) > sms;
    });
    return space;
  }

  // 128 x 128 tiles of two consumer warpgroups, four stages, sums promoted every two slices: the
  // best promoted config at 4096^3 on an H200 (error 5.9e-7, cuBLAS FP32's 1.15e-6).
  // Read at run time (the kernel's last argument; the launch's grid): configs that differ only in
  // them share a cubin.
  std::vector<std::string> run_time_knobs() const override { return {kGroupM, kPersistent}; }

  ss::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    const nlohmann::json preferred = nlohmann::json::array(
        {{{kBm, 128}, {kMi, 1}, {kWgs, 2}, {kStages, 4}, {kGroupM, 8}, {kPersistent, 0}, {kPromoteEvery, 2}},
         {{kBm, 128}, {kMi, 1}, {kWgs, 2}, {kStages, 4}, {kGroupM, 1}, {kPersistent, 0}, {kPromoteEvery, 2}},
         {{kBm, 64}, {kMi, 1}, {kWgs, 1}, {kStages, 4}, {kGroupM, 1}, {kPersistent, 0}, {kPromoteEvery, 2}}});
    return preferred_config(space, preferred, name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                         const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    const std::int64_t blocks = t.persistent ? std::min<std::int64_t>(t.tiles(s), device.cores) : t.tiles(s);
    CudaKernel kernel = gemm_kernel("gemm_3xtf32",
                                    {{"BM", t.bm}, {"MI", t.mi}, {"WGS", t.wgs}, {"STAGES", t.stages},
                                     {"PROMOTE_EVERY", t.promote_every}},
                                    t.group_m, s, workload.dtype, blocks, t.threads(), t.shared_bytes());
    // A (M x K): a 128-byte row of k by the block's rows, swizzled for wgmma; B (K x N): the
    // block's columns and 8 more (the padding, zeros past N) by a slice's 32 rows of k.
    kernel.tensor_maps = {
        matrix_map(0, DataType::kF32, s.M, s.K, t.bm, kSliceFloats, CU_TENSOR_MAP_SWIZZLE_128B),
        matrix_map(1, DataType::kF32, s.K, s.N, kSliceFloats, t.bn() + kBRowPadding, CU_TENSOR_MAP_SWIZZLE_NONE)};
    return kernel;
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    return tile_features(t.bm, t.bn(), t.tiles(s), device, t.accumulators(), t.shared_bytes());
  }
};

}  // namespace

const kernels::KernelTemplate& gemm_3xtf32_template() {
  static const Cuda3xTf32GemmTemplate instance;
  return instance;
}

}  // namespace optune::backends::cuda
