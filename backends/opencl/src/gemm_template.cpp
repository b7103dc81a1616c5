// The "gemm.opencl" template: the tuning space of the OpenCL GEMM kernels for one workload and
// device, its default config and the launch of a candidate. Two kernels, each with a space of its
// own, picked by device and shape (as conv2d.cpu picks its algorithm: a knob of one kernel means
// nothing to the other, and a joint space would hold each config of one thousands of times):
// - kernels/opencl/gemm_mma.cl on NVIDIA devices of compute capability 8.0 and later when K and
//   N are multiples of 4: tensor cores in 3xTF32 (float32 accuracy), knob math = "tf32x3"; in
//   f16 and bf16 (math = "f16", "bf16": one tensor-core product, float32 sums) when K and N are
//   multiples of 8; in i8 (math = "i8": int32 sums, exact) when K is a multiple of 16 and N of 4;
// - kernels/opencl/gemm_dot4.cl for other i8 GEMMs whose K is a multiple of 4 on devices with a
//   packed dot product (NVIDIA's dp4a, cl_khr_integer_dot_product): four s8 values of K in a
//   word, math = "dot4" (gemm_dot4_space.hpp);
// - kernels/opencl/gemm.cl, float32 multiply-adds, everywhere else; its knobs follow CLBlast's
//   Xgemm parameters (lower case here). It also runs f16 and bf16 (A, B and C stored in the type,
//   converted as they are loaded and stored, float32 arithmetic and accumulation) and i8 (s8 A
//   and B widened to int as they are loaded, int32 arithmetic and C) on every device.
// Every space keeps to the device's work-group, work-item, local memory and vector limits, so a
// config over them is never proposed.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gemm_dot4_space.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using opencl::ceil_div;
using opencl::next_pow2;
using opencl::number;

// Knob names: stored in records, a contract once released.
constexpr const char* kMwg = "mwg";      // work-group tile in M
constexpr const char* kNwg = "nwg";      // work-group tile in N
constexpr const char* kKwg = "kwg";      // K block: one local-memory step
constexpr const char* kMdimc = "mdimc";  // work-items in M
constexpr const char* kNdimc = "ndimc";  // work-items in N
constexpr const char* kVwm = "vwm";      // vector width of local reads of A
constexpr const char* kVwn = "vwn";      // vector width of loads and stores along N
constexpr const char* kSa = "sa";        // A's K block in local memory
constexpr const char* kSb = "sb";        // B's K block in local memory
constexpr const char* kStrm = "strm";    // a work-item's rows strided over the tile
constexpr const char* kStrn = "strn";    // a work-item's columns strided over the tile
constexpr const char* kKwi = "kwi";      // K-loop unroll
constexpr const char* kDb = "db";        // double-buffered local memory: one barrier per K block
constexpr const char* kWlay = "wlay";    // 1: a warp of 32 work-items covers 8 x 4 of the grid, not a row
constexpr const char* kGsw = "gsw";      // bands of row tiles walked column by column (L2 reuse); 1: off
constexpr const char* kSplitk = "splitk";  // work-groups sharing a tile's K blocks, adding into C; 1: off
// The tensor-core kernel's own knobs (mwg, nwg, kwg and gsw mean what they mean above).
constexpr const char* kMath = "math";      // "tf32x3", "f16", "bf16", "i8": the arithmetic, named in every record
constexpr const char* kWm = "wm";          // a warp's tile in M (multiple of 16)
constexpr const char* kWn = "wn";          // a warp's tile in N (multiple of 8)
constexpr const char* kStages = "stages";  // K blocks in flight in local memory
constexpr const char* kLdsm = "ldsm";      // 1: A's fragments read with ldmatrix

// Accumulators per work-item: 128 (16 x 8) still fits NVIDIA's 255 registers with the operands
// and the next block's loads; more spills.
constexpr std::int64_t kMaxOutputsPerItem = 128;

struct GemmTile {
  std::int64_t mwg, nwg, kwg, mdimc, ndimc, vwm, vwn, sa, sb, strm, strn, kwi, db, wlay, gsw, splitk;
  explicit GemmTile(const ss::ConfigView& v)
      : mwg(number(v, kMwg)), nwg(number(v, kNwg)), kwg(number(v, kKwg)), mdimc(number(v, kMdimc)),
        ndimc(number(v, kNdimc)), vwm(number(v, kVwm)), vwn(number(v, kVwn)), sa(number(v, kSa)),
        sb(number(v, kSb)), strm(number(v, kStrm)), strn(number(v, kStrn)), kwi(number(v, kKwi)),
        db(number(v, kDb)), wlay(number(v, kWlay)), gsw(number(v, kGsw)), splitk(number(v, kSplitk)) {}
  // As gemm.cl lays them out: A's rows padded by max(4, vwm) floats, two buffers with db.
  std::int64_t local_bytes() const {
    return 4 * (1 + db) * kwg * (sa * (mwg + std::max<std::int64_t>(4, vwm)) + sb * nwg);
  }
  std::int64_t threads() const { return mdimc * ndimc; }
  std::int64_t outputs_per_item() const { return (mwg / mdimc) * (nwg / ndimc); }
};

// The tensor-core kernel's tile, as gemm_mma.cl lays it out.
struct MmaTile {
  std::int64_t mwg, nwg, kwg, wm, wn, stages, ldsm, gsw, splitk;
  std::int64_t element_bytes;  // of A and B in local memory: 4 (3xTF32), 2 (f16, bf16), 1 (i8)
  explicit MmaTile(const ss::ConfigView& v)
      : mwg(number(v, kMwg)), nwg(number(v, kNwg)), kwg(number(v, kKwg)), wm(number(v, kWm)), wn(number(v, kWn)),
        stages(number(v, kStages)), ldsm(number(v, kLdsm)), gsw(number(v, kGsw)), splitk(number(v, kSplitk)),
        element_bytes(v.choice(kMath) == "tf32x3" ? 4 : v.choice(kMath) == "i8" ? 1 : 2) {}
  // Rows of A padded by 16 bytes, rows of B by 8 elements, or in i8 B transposed, its rows (of
  // K) padded as A's (gemm_mma.cl's LDA_S, LDB_S, LDBT_S), per stage.
  std::int64_t local_bytes() const {
    const std::int64_t pad = 16 / element_bytes;
    const std::int64_t b = element_bytes == 1 ? nwg * (kwg + pad) : kwg * (nwg + 8);
    return element_bytes * stages * (mwg * (kwg + pad) + b);
  }
  std::int64_t threads() const { return (mwg / wm) * (nwg / wn) * 32; }
  std::int64_t outputs_per_item() const { return wm * wn / 32; }
};

// Tensor cores through inline PTX: mma.sync on TF32 and cp.async need sm_80. Rows of A (K long)
// or of B (N long) that are no multiple of 4 floats are copied element by element (A_ROWS16 = 0,
// B_ROWS16 = 0), each operand on its own.
bool uses_tensor_cores(const DeviceInfo& device) {
  return device.nvidia_compute_capability() >= 80;
}

// A band as tall as the grid is the plain order again.
bool bands_row_tiles(const GemmShape& s, const ss::ConfigView& v) {
  return number(v, kGsw) == 1 || number(v, kGsw) < ceil_div(s.M, number(v, kMwg));
}

const std::vector<std::int64_t> kSplitkOptions = {1, 2, 3, 4, 6, 8, 12, 16};

// Split-K: the knob, read as no split from records written before it, and its constraint. A
// split pays for its partial tiles' round trip through memory only where the tiles alone leave the
// compute units short (fewer than two work-groups each), and every split gets K blocks to do.
void add_splitk_knob(ss::ConfigSpace& space) {
  space.add(opencl::number_knob(kSplitk, kSplitkOptions));
  space.read_missing_as(kSplitk, "1");
}

bool splits_k_usefully(const GemmShape& s, const DeviceInfo& device, std::int64_t mwg, std::int64_t nwg,
                       std::int64_t kwg, std::int64_t splitk) {
  if (splitk == 1) return true;
  const std::int64_t tiles = ceil_div(s.M, mwg) * ceil_div(s.N, nwg);
  const std::int64_t blocks = ceil_div(s.K, kwg);
  return tiles < 2 * std::max(1, device.cores) && ceil_div(blocks, ceil_div(blocks, splitk)) == splitk;
}

bool splits_k_usefully(const GemmShape& s, const DeviceInfo& device, const ss::ConfigView& v) {
  return splits_k_usefully(s, device, number(v, kMwg), number(v, kNwg), number(v, kKwg), number(v, kSplitk));
}

// What a split of a default config must give: a K range at least `min_depth` deep per
// work-group, and the work-groups per compute unit it aims at (fill_the_device).
struct SplitRule {
  std::int64_t min_depth;
  double wanted_per_unit;
};
constexpr SplitRule kFloat32Splits{96, 2.5};
constexpr SplitRule kSixteenBitSplits{3 * 96, 1.4};
constexpr SplitRule kInt8Splits{6 * 96, 0.7};

// `min_kwg`: the smallest K block of the kernel (one tensor-core step of 16 in 16-bit types).
bool tiles_fit_shape(const GemmShape& s, const ss::ConfigView& v, std::int64_t min_kwg = 8) {
  return number(v, kMwg) <= std::max<std::int64_t>(16, next_pow2(s.M)) &&
         number(v, kNwg) <= std::max<std::int64_t>(16, next_pow2(s.N)) &&
         number(v, kKwg) <= std::max<std::int64_t>(min_kwg, next_pow2(s.K));
}

// The arithmetic of gemm_mma.cl for a dtype, its `math` knob: 3xTF32 for float32; f16, bf16 and
// i8 one tensor-core product each.
std::string mma_math(DataType dtype) {
  if (dtype == DataType::kF16) return "f16";
  if (dtype == DataType::kBF16) return "bf16";
  if (dtype == DataType::kI8) return "i8";
  return "tf32x3";
}

// The depth of one tensor-core product of gemm_mma.cl: 8 (3xTF32), 16 (f16, bf16), 32 (i8).
std::int64_t mma_k_step(DataType dtype) {
  if (dtype == DataType::kI8) return 32;
  return dtype == DataType::kF32 ? 8 : 16;
}

ss::ConfigSpace tensor_core_space(const Workload& workload, const DeviceInfo& device,
                                  const opencl::DeviceLimits& limits) {
  const GemmShape& s = workload.gemm();
  // 16-bit and 8-bit types: K blocks of whole tensor-core steps and warp tiles of whole pairs of
  // 8-column tiles (ldmatrix reads B's fragments two tiles at a time).
  const bool narrow = workload.dtype != DataType::kF32;
  const std::int64_t k_step = mma_k_step(workload.dtype);
  ss::ConfigSpace space;
  space.add(ss::ChoiceKnob{kMath, {mma_math(workload.dtype)}});
  opencl::add_activations_knob(space, workload);
  // 16-wide tiles and 8-wide warp tiles: small M and N still make work-groups for every SM. K
  // blocks of 64 and 128: a small tile's K loop is a chain of copy latencies (one block per
  // barrier), and longer blocks make it shorter.
  space.add(opencl::number_knob(kMwg, {16, 32, 64, 128, 256}));
  space.add(opencl::number_knob(kNwg, {16, 32, 64, 128, 256}));
  std::vector<std::int64_t> kwgs;
  for (std::int64_t kwg : {8, 16, 32, 64, 128})
    if (kwg >= k_step) kwgs.push_back(kwg);
  space.add(opencl::number_knob(kKwg, kwgs));
  space.add(opencl::number_knob(kWm, {16, 32, 64}));
  space.add(opencl::number_knob(kWn, narrow ? std::vector<std::int64_t>{16, 32, 64}
                                             : std::vector<std::int64_t>{8, 16, 32, 64}));
  space.add(opencl::number_knob(kStages, {2, 3, 4}));
  space.add(opencl::number_knob(kLdsm, {0, 1}));
  space.add(opencl::number_knob(kGsw, {1, 4, 8, 16}));
  add_splitk_knob(space);
  space.add_constraint("mwg is a multiple of wm, nwg of wn", [](const ss::ConfigView& v) {
    const MmaTile t(v);
    return t.mwg % t.wm == 0 && t.nwg % t.wn == 0;
  });
  space.add_constraint("the work-group fits the device", [limits](const ss::ConfigView& v) {
    return limits.fits_work_group(MmaTile(v).threads(), 1, 1);
  });
  space.add_constraint("local memory use fits the device", [limits](const ss::ConfigView& v) {
    return MmaTile(v).local_bytes() <= limits.local_mem_bytes;
  });
  space.add_constraint("at most 128 accumulators per work-item", [](const ss::ConfigView& v) {
    return MmaTile(v).outputs_per_item() <= kMaxOutputsPerItem;
  });
  space.add_constraint("gsw is 1 unless it bands the row tiles", [s](const ss::ConfigView& v) { return bands_row_tiles(s, v); });
  space.add_constraint("tiles not far beyond the matrix",
                       [s, k_step](const ss::ConfigView& v) { return tiles_fit_shape(s, v, k_step); });
  space.add_constraint("splitk only where tiles are few, every split with work",
                       [s, device](const ss::ConfigView& v) { return splits_k_usefully(s, device, v); });
  return space;
}

class OpenCLGemmTemplate final : public opencl::TemplateBase {
 public:
  std::string name() const override { return "gemm.opencl"; }
  Op op() const override { return Op::kGemm; }
  std::vector<DataType> dtypes() const override { return opencl::storage_dtypes(); }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const GemmShape& s = workload.gemm();
    const opencl::DeviceLimits limits = opencl::device_limits(device);
    if (tensor_cores_for(workload, device)) return tensor_core_space(workload, device, limits);
    if (opencl::takes_dot4(workload, device)) return opencl::dot4_space(workload, device);
    ss::ConfigSpace space;
    opencl::add_activations_knob(space, workload);
    space.add(opencl::number_knob(kMwg, {16, 32, 64, 128, 256}));
    space.add(opencl::number_knob(kNwg, {16, 32, 64, 128, 256}));
    space.add(opencl::number_knob(kKwg, {8, 16, 32}));
    space.add(opencl::number_knob(kMdimc, {4, 8, 16, 32}));
    space.add(opencl::number_knob(kNdimc, {4, 8, 16, 32}));
    space.add(opencl::number_knob(kVwm, opencl::vector_widths(limits, 8)));
    space.add(opencl::number_knob(kVwn, opencl::vector_widths(limits, 8)));
    space.add(opencl::number_knob(kSa, {0, 1}));
    space.add(opencl::number_knob(kSb, {0, 1}));
    space.add(opencl::number_knob(kStrm, {0, 1}));
    space.add(opencl::number_knob(kStrn, {0, 1}));
    space.add(opencl::number_knob(kKwi, {1, 2, 4, 8}));
    space.add(opencl::number_knob(kDb, {0, 1}));
    space.add(opencl::number_knob(kWlay, {0, 1}));
    space.add(opencl::number_knob(kGsw, {1, 4, 8, 16}));
    add_splitk_knob(space);

    space.add_constraint("the work-group fits the device", [limits](const ss::ConfigView& v) {
      return limits.fits_work_group(number(v, kNdimc), number(v, kMdimc), 1);
    });
    space.add_constraint("local memory use fits the device", [limits](const ss::ConfigView& v) {
      return GemmTile(v).local_bytes() <= limits.local_mem_bytes;
    });
    space.add_constraint("mwg is a multiple of mdimc * vwm, nwg of ndimc * vwn", [](const ss::ConfigView& v) {
      const GemmTile t(v);
      return t.mwg % (t.mdimc * t.vwm) == 0 && t.nwg % (t.ndimc * t.vwn) == 0;
    });
    space.add_constraint("at most 128 accumulators per work-item", [](const ss::ConfigView& v) {
      return GemmTile(v).outputs_per_item() <= kMaxOutputsPerItem;
    });
    // gemm.cl gives every work-item the same number of values of each local tile to load.
    space.add_constraint("local tiles split evenly over the work-items", [](const ss::ConfigView& v) {
      const GemmTile t(v);
      return (t.sa == 0 || t.mwg * t.kwg % t.threads() == 0) && (t.sb == 0 || t.nwg * t.kwg % t.threads() == 0);
    });
    space.add_constraint("wlay needs ndimc a multiple of 8, mdimc of 4", [](const ss::ConfigView& v) {
      const GemmTile t(v);
      return t.wlay == 0 || (t.ndimc % 8 == 0 && t.mdimc % 4 == 0);
    });
    space.add_constraint("db only with a local tile", [](const ss::ConfigView& v) {
      return number(v, kDb) == 0 || number(v, kSa) == 1 || number(v, kSb) == 1;
    });
    space.add_constraint("kwi divides kwg", [](const ss::ConfigView& v) {
      return number(v, kKwg) % number(v, kKwi) == 0;
    });
    // vwm only shapes local reads of A: without sa, its values are the same kernel.
    space.add_constraint("vwm is 1 unless sa", [](const ss::ConfigView& v) {
      return number(v, kSa) == 1 || number(v, kVwm) == 1;
    });
    space.add_constraint("gsw is 1 unless it bands the row tiles", [s](const ss::ConfigView& v) { return bands_row_tiles(s, v); });
    space.add_constraint("tiles not far beyond the matrix", [s](const ss::ConfigView& v) { return tiles_fit_shape(s, v); });
    space.add_constraint("splitk only where tiles are few, every split with work",
                         [s, device](const ss::ConfigView& v) { return splits_k_usefully(s, device, v); });
    return space;
  }

  // A generic GPU kernel: 128 x 256 tiles of 16 x 16 work-items (8 x 16 outputs each, strided by
  // float4 so neighbours read neighbouring local addresses), both operands in local memory, K
  // blocks of 8 (the best tuned config at 2048 and 4096 on an H100); smaller tiles where the shape
  // leaves the device's compute units idle (fill_the_device) or the device wants them.
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    if (tensor_cores_for(workload, device)) return tensor_core_default(workload, device, space);
    if (opencl::takes_dot4(workload, device)) return opencl::dot4_default(workload, device, space, name());
    auto preference = [](const char* mwg, const char* nwg, const char* kwg, const char* dim, const char* vw,
                         const char* db) {
      return opencl::Preference{{kMwg, mwg}, {kNwg, nwg}, {kKwg, kwg}, {kMdimc, dim}, {kNdimc, dim},
                                {kVwm, vw},  {kVwn, vw},  {kSa, "1"}, {kSb, "1"},   {kStrm, "1"},
                                {kStrn, "1"}, {kKwi, "8"}, {kDb, db}, {kWlay, "0"}, {kGsw, "1"}, {kSplitk, "1"}};
    };
    return opencl::preferred_config(space,
                                    fill_the_device(workload.gemm(), device,
                                                    {preference("128", "256", "8", "16", "4", "0"),
                                                     preference("128", "128", "16", "16", "4", "1"),
                                                     preference("64", "64", "16", "8", "4", "1"),
                                                     preference("32", "32", "16", "8", "4", "0"),
                                                     preference("32", "32", "16", "8", "2", "0"),
                                                     preference("16", "16", "16", "4", "1", "0")}),
                                    name());
  }

  // The tensor-core kernel's default: 128 x 128 tiles of four warps of 64 x 64, K blocks of 8 in
  // four stages, scalar fragment reads of A, bands of 8 row tiles: the best config tuned at 2048
  // and 4096 on an H200 (64.9 and 66.6 TFLOP/s; 58.0 and 60.5 with ldmatrix and no bands). Smaller
  // tiles where the shape leaves compute units idle: 32 x 32 and 16 x 16 are the configs tuned on
  // an H100 for M = 3-450 with N = K = 768 (docs/performance/logs/opencl_h100_held_out_shapes.log);
  // 64 x 64 in K blocks of 32, two stages and ldmatrix is the one tuned for BERT's GEMMs at M = 128
  // and 512, 4-16% faster than three stages of 16 without ldmatrix on 7 of 8 such shapes (not 1000^3).
  // 16-bit types: the configs tuned on an H200 in f16 and bf16 (40 trials each; the same best in
  // both): at 4096^3 128 x 128 tiles of eight 64 x 32 warps in K blocks of 32, two stages (275
  // TFLOP/s, 268 for float32's tile in blocks of 16); at 128 x 768 x 3072 64 x 64 tiles of eight
  // 16 x 32 warps split 8 ways, 1.45 work-groups per SM (45 TFLOP/s; split 16 as float32's rule
  // gives: 34, 27 with two stages; 12: 39). A split is worth its pipeline's fill only over a
  // deeper K range than in 3xTF32, which does three products per step, and fewer work-groups
  // fill the device: kSixteenBitSplits (docs/performance/logs/opencl_h200_lowp_2026-11-30.log).
  ss::Config tensor_core_default(const Workload& workload, const DeviceInfo& device, const ss::ConfigSpace& space) const {
    const GemmShape& s = workload.gemm();
    const std::string math = mma_math(workload.dtype);
    auto preference = [&math](const char* mwg, const char* nwg, const char* kwg, const char* wm, const char* wn,
                              const char* stages, const char* ldsm, const char* gsw) {
      return opencl::Preference{{kMath, math}, {kMwg, mwg},       {kNwg, nwg},  {kKwg, kwg}, {kWm, wm},
                                {kWn, wn},     {kStages, stages}, {kLdsm, ldsm}, {kGsw, gsw}, {kSplitk, "1"}};
    };
    // i8: the configs tuned on an H200 (40 trials each): at 4096^3 128 x 64 tiles of 64 x 32 warps
    // in K blocks of 64, two stages, bands of 4 (341 TOP/s; 247 for 128 x 128); at 128 x 768 x
    // 3072 64 x 64 tiles of 32 x 32 warps in four stages split 4 ways, 0.73 work-groups per SM
    // (46 TOP/s; 40 split 8 ways): a split must be deeper still than in 16-bit types (kInt8Splits).
    std::vector<opencl::Preference> preferences;
    SplitRule splits = kFloat32Splits;
    if (math == "i8") {
      preferences = {preference("128", "64", "64", "64", "32", "2", "1", "4"),
                     preference("128", "64", "64", "64", "32", "2", "1", "1"),
                     preference("64", "64", "64", "32", "32", "4", "1", "1"),
                     preference("32", "32", "64", "16", "16", "4", "1", "1"),
                     preference("16", "16", "128", "16", "16", "4", "1", "1")};
      splits = kInt8Splits;
    } else if (math != "tf32x3") {
      preferences = {preference("128", "128", "32", "64", "32", "2", "1", "1"),
                     preference("128", "128", "16", "64", "64", "4", "1", "8"),
                     preference("64", "64", "32", "16", "32", "4", "1", "1"),
                     preference("32", "32", "32", "16", "16", "4", "1", "1"),
                     preference("16", "16", "64", "16", "16", "4", "1", "1")};
      splits = kSixteenBitSplits;
    } else {
      preferences = {preference("128", "128", "8", "64", "64", "4", "0", "8"),
                     preference("128", "128", "8", "64", "64", "4", "0", "1"),
                     preference("64", "64", "32", "32", "32", "2", "1", "1"),
                     preference("32", "32", "32", "16", "16", "4", "1", "1"),
                     preference("32", "32", "16", "16", "16", "2", "0", "1"),
                     preference("16", "16", "64", "16", "8", "4", "1", "1")};
    }
    return opencl::preferred_config(space, fill_the_device(s, device, preferences, splits), name());
  }

  // Orders tile preferences (largest first) for the shape. The largest tile comes first where it
  // alone gives every compute unit a work-group (2048 and up on an H100's 132 SMs). Otherwise a
  // tile of at most 64 x 64 that fits the shape (no taller than M, no wider than N, each rounded
  // up to 16; below 32 x 32 only where nothing larger fits) comes first with K split (at most 16
  // ways, each split at least 96 deep and given K blocks): the largest such tile whose splits reach
  // 2.5 work-groups per unit, split for the most even load (work-groups per unit over that
  // rounded up; the fewest splits within 0.02 of the best), else the largest whose most splits
  // reach one per unit; then the rest by the work-groups they give, most first.
  // Splits cost only a round trip of the partial tiles (split_k.cl). The configs tuned on an H100
  // for BERT's GEMMs at M = 32-512, 1000^3 and 1023 x 769 x 2049 were 32 x 32 to 64 x 64 tiles
  // giving 2.9 work-groups per SM (384) where they could, 12.6 (1664) for 1023 x 769 x 2049, whose
  // 208 tiles leave 2 or 4 splits unevenly spread; split 128 x 128 tiles were slower (short K
  // ranges fill and drain their four-stage pipeline), and 16 x 16 tiles split to 2.9 per SM 7%
  // slower than 32 x 32 split to 1.5 at 32 x 768 x 768
  // (docs/performance/logs/opencl_h100_default_rule_probe_2026-11-26.log).
  static std::vector<opencl::Preference> fill_the_device(const GemmShape& s, const DeviceInfo& device,
                                                         const std::vector<opencl::Preference>& preferences,
                                                         SplitRule rule = kFloat32Splits) {
    constexpr std::int64_t kMaxSplit = 16, kLargestSplitTile = 64 * 64, kSmallTile = 32 * 32;
    constexpr double kEvenEnough = 0.02;  // see above
    const std::int64_t units = std::max(device.cores, 1);
    auto extent = [](const opencl::Preference& preference, const char* name) -> std::int64_t {
      for (const auto& [knob, value] : preference)
        if (knob == name) return std::stoll(value);
      return std::int64_t{1};
    };
    auto tiles = [&](const opencl::Preference& p) {
      return ceil_div(s.M, extent(p, kMwg)) * ceil_div(s.N, extent(p, kNwg));
    };
    auto area = [&](const opencl::Preference& p) { return extent(p, kMwg) * extent(p, kNwg); };
    auto with_split = [](opencl::Preference preference, std::int64_t split) {
      for (auto& [knob, value] : preference)
        if (knob == kSplitk) value = std::to_string(split);
      return preference;
    };
    if (tiles(preferences.front()) >= units) return preferences;
    // The splits a tile may take: options of the space (splits_k_usefully) deep enough.
    auto splits_of = [&](const opencl::Preference& p) {
      std::vector<std::int64_t> splits;
      for (std::int64_t option : kSplitkOptions)
        if (option == 1 || (option <= std::min(s.K / rule.min_depth, kMaxSplit) &&
                            splits_k_usefully(s, device, extent(p, kMwg), extent(p, kNwg), extent(p, kKwg), option)))
          splits.push_back(option);
      return splits;
    };
    // The most even split of those that reach the wanted work-groups per unit, 0 where none does.
    auto even_split = [&](const opencl::Preference& p) {
      auto evenness = [&](std::int64_t split) {
        const double per_unit = double(tiles(p) * split) / double(units);
        return per_unit / std::ceil(per_unit);
      };
      double best = 0;
      for (std::int64_t split : splits_of(p))
        if (tiles(p) * split >= rule.wanted_per_unit * units) best = std::max(best, evenness(split));
      for (std::int64_t split : splits_of(p))
        if (tiles(p) * split >= rule.wanted_per_unit * units && evenness(split) >= best - kEvenEnough) return split;
      return std::int64_t{0};
    };
    auto fits = [&](const opencl::Preference& p) {
      return area(p) <= kLargestSplitTile && extent(p, kMwg) <= ceil_div(s.M, 16) * 16 &&
             extent(p, kNwg) <= ceil_div(s.N, 16) * 16;
    };
    std::vector<opencl::Preference> candidates;
    for (const auto& preference : preferences)
      if (fits(preference)) candidates.push_back(preference);
    if (std::any_of(candidates.begin(), candidates.end(), [&](const auto& p) { return area(p) >= kSmallTile; }))
      std::erase_if(candidates, [&](const auto& p) { return area(p) < kSmallTile; });
    std::vector<opencl::Preference> ordered;
    for (const auto& preference : candidates)
      if (const std::int64_t split = even_split(preference); split > 0) {
        ordered.push_back(with_split(preference, split));
        break;
      }
    if (ordered.empty())
      for (const auto& preference : candidates)
        if (const std::int64_t most = splits_of(preference).back(); tiles(preference) * most >= units) {
          ordered.push_back(with_split(preference, most));
          break;
        }
    std::vector<opencl::Preference> rest(preferences);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](const opencl::Preference& a, const opencl::Preference& b) { return tiles(a) > tiles(b); });
    ordered.insert(ordered.end(), rest.begin(), rest.end());
    return ordered;
  }

  OpenCLKernel opencl_kernel(const Workload& workload, const DeviceInfo& device,
                                            const ss::ConfigView& config) const override {
    const GemmShape& s = workload.gemm();
    if (is_dot4(config)) return opencl::dot4_kernel(workload, config);
    if (config.has(kMath)) return tensor_core_kernel(workload, MmaTile(config), device);
    const GemmTile t(config);
    OpenCLKernel kernel;
    kernel.source_file = "gemm.cl";
    kernel.kernel_name = "optune_gemm";
    kernel.build_options = build_options_of({
        {"M", s.M}, {"N", s.N}, {"K", s.K}, {"MWG", t.mwg}, {"NWG", t.nwg}, {"KWG", t.kwg},
        {"MDIMC", t.mdimc}, {"NDIMC", t.ndimc}, {"VWM", t.vwm}, {"VWN", t.vwn}, {"SA", t.sa},
        {"SB", t.sb}, {"STRM", t.strm}, {"STRN", t.strn}, {"KWI", t.kwi}, {"DB", t.db}, {"WLAY", t.wlay}, {"GSW", t.gsw},
        {"EDGE_M", s.M % t.mwg != 0}, {"EDGE_N", s.N % t.nwg != 0}, {"EDGE_K", s.K % t.kwg != 0}},
        t.splitk, device);
    kernel.build_options += opencl::storage_option(workload.dtype);
    kernel.dimensions = 2;
    kernel.global_size = {static_cast<std::size_t>(ceil_div(s.N, t.nwg) * t.ndimc),
                          static_cast<std::size_t>(ceil_div(s.M, t.mwg) * t.mdimc), 1};
    kernel.local_size = {static_cast<std::size_t>(t.ndimc), static_cast<std::size_t>(t.mdimc), 1};
    split_k(kernel, s, t.mwg, t.nwg, t.mdimc * t.ndimc, t.splitk);
    return kernel;
  }

  static bool is_dot4(const ss::ConfigView& config) {
    return config.has(kMath) && config.choice(kMath) == opencl::kDot4Math;
  }

  // The tensor-core kernel computes float32 (3xTF32), and f16 and bf16 where rows of A and B are
  // whole 16-byte pieces (cp.async copies no less than 4 bytes, and 2-byte elements at an odd
  // offset would need another copy path).
  static bool tensor_cores_for(const Workload& workload, const DeviceInfo& device) {
    if (!uses_tensor_cores(device)) return false;
    if (workload.dtype == DataType::kF32) return true;
    const GemmShape& s = workload.gemm();
    if (workload.dtype == DataType::kI8) return s.K % 16 == 0 && s.N % 4 == 0;
    return (workload.dtype == DataType::kF16 || workload.dtype == DataType::kBF16) && s.K % 8 == 0 && s.N % 8 == 0;
  }

  // -D options with SPLITK only where it splits, so a config without a split builds the very
  // program it did before the knob. With a split, NVIDIA devices of sm_70 and later count the
  // splits with one acquire-release atomic instead of two fences around a plain one (split_k.cl;
  // 3-5% faster on the H100's small GEMMs, docs/performance/logs/opencl_h100_split_acq_rel_2026-11-25.log).
  static std::string build_options_of(std::vector<std::pair<std::string, std::int64_t>> defines,
                                      std::int64_t splitk, const DeviceInfo& device) {
    if (splitk > 1) {
      defines.emplace_back("SPLITK", splitk);
      if (device.nvidia_compute_capability() >= 70) defines.emplace_back("SPLIT_ACQREL", 1);
    }
    return opencl::build_options(defines);
  }

  // The splits of an mwg x nwg tile along dimension 2, with split_k.cl's scratch: a counter per
  // work-item of every tile (padded to 4) and every split's partial tile.
  static void split_k(OpenCLKernel& kernel, const GemmShape& s, std::int64_t mwg, std::int64_t nwg,
                      std::int64_t items, std::int64_t splitk) {
    if (splitk == 1) return;
    kernel.dimensions = 3;
    kernel.global_size[2] = static_cast<std::size_t>(splitk);
    const std::int64_t tiles = ceil_div(s.M, mwg) * ceil_div(s.N, nwg);
    kernel.scratch_bytes =
        static_cast<std::size_t>(4 * (ceil_div(tiles * items, 4) * 4 + tiles * splitk * mwg * nwg));
  }

  static OpenCLKernel tensor_core_kernel(const Workload& workload, const MmaTile& t, const DeviceInfo& device) {
    const GemmShape& s = workload.gemm();
    OpenCLKernel kernel;
    kernel.source_file = "gemm_mma.cl";
    kernel.kernel_name = "optune_gemm_mma";
    kernel.build_options = build_options_of({{"M", s.M}, {"N", s.N}, {"K", s.K}, {"MWG", t.mwg}, {"NWG", t.nwg},
                                             {"KWG", t.kwg}, {"WM", t.wm}, {"WN", t.wn}, {"STAGES", t.stages},
                                             {"LDSM", t.ldsm}, {"GSW", t.gsw}, {"EDGE_M", s.M % t.mwg != 0},
                                             {"EDGE_N", s.N % t.nwg != 0}, {"EDGE_K", s.K % t.kwg != 0},
                                             {"A_ROWS16", s.K % 4 == 0}, {"B_ROWS16", s.N % 4 == 0}},
                                            t.splitk, device) +
                           opencl::storage_option(workload.dtype);
    kernel.dimensions = 2;
    kernel.global_size = {static_cast<std::size_t>(ceil_div(s.N, t.nwg) * t.threads()),
                          static_cast<std::size_t>(ceil_div(s.M, t.mwg)), 1};
    kernel.local_size = {static_cast<std::size_t>(t.threads()), 1, 1};
    split_k(kernel, s, t.mwg, t.nwg, t.threads(), t.splitk);
    return kernel;
  }

  std::vector<TableForm> table_forms() const override {
    return opencl::table_forms({"kGemm", "M=1024,N=1024,K=1024", "gemm", "C[M,N] = A[M,K] * B[K,N], row-major,",
                                "std::int64_t M, std::int64_t N, std::int64_t K, cl_mem A, cl_mem B, cl_mem C",
                                "M, N, K, A, B, C"});
  }

  // Occupancy, register and local-memory pressure, reuse per loaded value and edge waste.
  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    const GemmShape& s = workload.gemm();
    const opencl::DeviceLimits limits = opencl::device_limits(device);
    // The same names for both kernels; each reads its own tile.
    auto features = [&](const auto& t) -> std::vector<std::pair<std::string, double>> {
      const double tiles = double(ceil_div(s.M, t.mwg)) * double(ceil_div(s.N, t.nwg));
      const double groups = tiles * double(t.splitk);
      return {
          {"work_items_per_group", double(t.threads())},
          {"outputs_per_item", double(t.outputs_per_item())},
          {"flops_per_loaded_value", 2.0 * t.mwg * t.nwg / double(t.mwg + t.nwg)},
          {"local_mem_share", double(t.local_bytes()) / double(limits.local_mem_bytes)},
          {"groups_per_compute_unit", groups / std::max(1, device.cores)},
          {"band_rows", double(t.gsw)},
          {"edge_waste", 1.0 - double(s.M) * double(s.N) / (tiles * t.mwg * t.nwg)},
          {"k_per_group", double(s.K) / double(t.splitk)},
      };
    };
    if (is_dot4(config)) return features(opencl::Dot4Tile(config));
    if (config.has(kMath)) return features(MmaTile(config));
    return features(GemmTile(config));
  }
};

}  // namespace

bool opencl_gemm_uses_tensor_cores(const Workload& workload, const DeviceInfo& device) {
  return OpenCLGemmTemplate::tensor_cores_for(workload, device);
}

const OpenCLTemplate& opencl_gemm_template() {
  static const OpenCLGemmTemplate instance;
  return instance;
}

}  // namespace optune::kernels
