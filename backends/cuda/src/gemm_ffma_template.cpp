// The "gemm_ffma.cuda" template: C = A * B in float32 with FP32 FMA on the CUDA cores
// (kernels/gemm_ffma.cu), the arithmetic of cuBLAS FP32 with TF32 off, for compute capability 8.0
// and later (cp.async), K and N in multiples of 4. On Hopper gemm_3xtf32.cuda (tensor cores at
// float32's accuracy) stays the default; this one is the f32 template of the GPUs before it and the
// plain peer of both. Knobs: the block tile (bm x bn, bk deep), a thread's register tile (tm x tn),
// the cp.async pipeline's depth (stages) and the band of row tiles blocks walk (group_m). The space
// keeps to 64-512 threads whose registers fit an SM (an estimate: tm tn accumulators, 4 (tm + tn)
// operands and 24 more a thread), the device's shared memory, and tiles not far beyond the matrix.
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
constexpr const char* kTm = "tm";            // a thread's rows of C
constexpr const char* kTn = "tn";            // a thread's columns of C (groups of 4)
constexpr const char* kStages = "stages";    // K slices in flight in shared memory
constexpr const char* kGroupM = "group_m";   // row tiles per band of the block walk; 1: row by row

constexpr std::int64_t kRegistersPerSm = 65536;
constexpr std::int64_t kOtherRegisters = 24;  // addresses, indices, the loop's

struct Tile {
  std::int64_t bm, bn, bk, tm, tn, stages, group_m;
  explicit Tile(const ss::ConfigView& v)
      : bm(std::int64_t(v.number(kBm))), bn(std::int64_t(v.number(kBn))), bk(std::int64_t(v.number(kBk))),
        tm(std::int64_t(v.number(kTm))), tn(std::int64_t(v.number(kTn))), stages(std::int64_t(v.number(kStages))),
        group_m(std::int64_t(v.number(kGroupM))) {}
  std::int64_t threads() const { return (bm / tm) * (bn / tn); }
  std::int64_t registers() const { return tm * tn + 4 * (tm + tn) + kOtherRegisters; }
  // A's rows padded by 4 floats (gemm_ffma.cu's A_STRIDE), B's not.
  std::int64_t shared_bytes() const { return stages * (bm * (bk + 4) + bk * bn) * 4; }
  std::int64_t tiles(const kernels::GemmShape& s) const { return ceil_div(s.M, bm) * ceil_div(s.N, bn); }
};

class CudaFfmaGemmTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm_ffma.cuda"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::vector<DataType> dtypes() const override { return {DataType::kF32}; }
  int priority() const override { return -1; }  // below gemm_3xtf32.cuda where both apply

  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    return device.nvidia_compute_capability() >= 80 && s.K % 4 == 0 && s.N % 4 == 0;
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& s = workload.gemm();
    if (!applies(workload, device))
      throw std::invalid_argument(fmt::format("{}: {} needs compute capability 8.0 or later and K and N in "
                                              "multiples of 4",
                                              name(), workload.key()));
    ss::ConfigSpace space;
    space.add(knob(kBm, {32, 64, 128, 256}));
    space.add(knob(kBn, {32, 64, 128, 256}));
    space.add(knob(kBk, {8, 16, 32}));
    space.add(knob(kTm, {4, 8}));
    space.add(knob(kTn, {4, 8}));
    space.add(knob(kStages, {2, 3, 4}));
    space.add(knob(kGroupM, {1, 8}));
    const double max_threads = double(device.max_work_group_size);
    space.add_constraint("64 to 512 threads, within the device's block", [max_threads](const ss::ConfigView& v) {
      const Tile t(v);
      return t.threads() >= 64 && t.threads() <= 512 && (max_threads <= 0 || double(t.threads()) <= max_threads);
    });
    space.add_constraint("the block's registers fit an SM", [](const ss::ConfigView& v) {
      const Tile t(v);
      return t.threads() * t.registers() <= kRegistersPerSm;
    });
    add_tile_rules(space, s, device, [](const ss::ConfigView& v) {
      const Tile t(v);
      return TileExtent{t.bm, t.bn, t.group_m, t.shared_bytes()};
    });
    return space;
  }

  // 128 x 128 tiles of 8 x 8 a thread (256 threads), 16-deep slices three stages deep: the classic
  // SGEMM shape; smaller ones where the matrix is.
  // Read at run time (the kernel's last argument; the launch's grid): configs that differ only in
  // them share a cubin.
  std::vector<std::string> run_time_knobs() const override { return {kGroupM}; }

  ss::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    const nlohmann::json preferred = nlohmann::json::array(
        {{{kBm, 128}, {kBn, 128}, {kBk, 16}, {kTm, 8}, {kTn, 8}, {kStages, 3}, {kGroupM, 8}},
         {{kBm, 64}, {kBn, 64}, {kBk, 16}, {kTm, 4}, {kTn, 4}, {kStages, 3}, {kGroupM, 1}}});
    return preferred_config(space, preferred, name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo&,
                         const ss::ConfigView& config) const override {
    const auto& s = workload.gemm();
    const Tile t(config);
    return gemm_kernel("gemm_ffma",
                       {{"BM", t.bm}, {"BN", t.bn}, {"BK", t.bk}, {"TM", t.tm}, {"TN", t.tn}, {"STAGES", t.stages}},
                       t.group_m, s, workload.dtype, t.tiles(s), t.threads(), t.shared_bytes());
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const Tile t(config);
    auto features = tile_features(t.bm, t.bn, t.tiles(workload.gemm()), device, t.tm * t.tn, t.shared_bytes());
    features.emplace_back("thread.tile", double(t.tm * t.tn));
    return features;
  }
};

}  // namespace

const kernels::KernelTemplate& gemm_ffma_template() {
  static const CudaFfmaGemmTemplate instance;
  return instance;
}

}  // namespace optune::backends::cuda
