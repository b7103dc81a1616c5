#include "gemm_dot4_space.hpp"

#include <algorithm>
#include <vector>

#include "template_support.hpp"

namespace optune::kernels::opencl {

namespace ss = search_space;

namespace {

// Knob names, shared with gemm.opencl's other spaces where they mean the same.
constexpr const char* kMath = "math";
constexpr const char* kMwg = "mwg";
constexpr const char* kNwg = "nwg";
constexpr const char* kKwg = "kwg";
constexpr const char* kMdimc = "mdimc";
constexpr const char* kNdimc = "ndimc";
constexpr const char* kGsw = "gsw";

// Sums per work-item: 64 (8 x 8) int32 accumulators with the words of A and B they read keep
// well inside NVIDIA's 255 registers.
constexpr std::int64_t kMaxOutputsPerItem = 64;

}  // namespace

bool takes_dot4(const Workload& workload, const DeviceInfo& device) {
  const bool packed_dot = device.nvidia_compute_capability() >= 61 || device.has_isa(kIntegerDotProductIsa);
  return packed_dot && workload.op == Op::kGemm && workload.dtype == DataType::kI8 && workload.gemm().K % 4 == 0;
}

Dot4Tile::Dot4Tile(const ss::ConfigView& v)
    : mwg(number(v, kMwg)), nwg(number(v, kNwg)), kwg(number(v, kKwg)), mdimc(number(v, kMdimc)),
      ndimc(number(v, kNdimc)), gsw(number(v, kGsw)) {}

ss::ConfigSpace dot4_space(const Workload& workload, const DeviceInfo& device) {
  const GemmShape& s = workload.gemm();
  const DeviceLimits limits = device_limits(device);
  ss::ConfigSpace space;
  space.add(ss::ChoiceKnob{kMath, {kDot4Math}});
  add_activations_knob(space, workload);
  space.add(number_knob(kMwg, {16, 32, 64, 128}));
  space.add(number_knob(kNwg, {16, 32, 64, 128}));
  space.add(number_knob(kKwg, {16, 32, 64}));
  space.add(number_knob(kMdimc, {4, 8, 16, 32}));
  space.add(number_knob(kNdimc, {4, 8, 16, 32}));
  space.add(number_knob(kGsw, {1, 4, 8, 16}));
  space.add_constraint("the work-group fits the device", [limits](const ss::ConfigView& v) {
    const Dot4Tile t(v);
    return limits.fits_work_group(t.ndimc, t.mdimc, 1);
  });
  space.add_constraint("mwg is a multiple of mdimc, nwg of ndimc", [](const ss::ConfigView& v) {
    const Dot4Tile t(v);
    return t.mwg % t.mdimc == 0 && t.nwg % t.ndimc == 0;
  });
  space.add_constraint("at most 64 sums per work-item", [](const ss::ConfigView& v) {
    return Dot4Tile(v).outputs_per_item() <= kMaxOutputsPerItem;
  });
  space.add_constraint("local memory use fits the device", [limits](const ss::ConfigView& v) {
    return Dot4Tile(v).local_bytes() <= limits.local_mem_bytes;
  });
  space.add_constraint("gsw is 1 unless it bands the row tiles", [s](const ss::ConfigView& v) {
    return number(v, kGsw) == 1 || number(v, kGsw) < ceil_div(s.M, number(v, kMwg));
  });
  space.add_constraint("tiles not far beyond the matrix", [s](const ss::ConfigView& v) {
    return number(v, kMwg) <= std::max<std::int64_t>(16, next_pow2(s.M)) &&
           number(v, kNwg) <= std::max<std::int64_t>(16, next_pow2(s.N)) &&
           number(v, kKwg) <= std::max<std::int64_t>(16, next_pow2(s.K));
  });
  return space;
}

// Work-groups of 256 work-items: the configs tuned on an H200 (docs/performance/opencl-gpu.md),
// 128 x 128 tiles of 8 x 8 sums per work-item at 4096^3 (1.01x of the best), 64 x 64 of 2 x 8 at
// 1000^3, 32 x 16 of 1 x 2 at 127 x 508 x 1020. The first that gives every compute unit a
// work-group, else the one that gives the most (groups of 16 work-items, the smallest tiles'
// alternative, ran 1.6-3.2x slower than these).
ss::Config dot4_default(const Workload& workload, const DeviceInfo& device, const ss::ConfigSpace& space,
                        const std::string& template_name) {
  const GemmShape& s = workload.gemm();
  struct Candidate {
    std::int64_t mwg, nwg;
    Preference preference;
  };
  auto candidate = [](std::int64_t mwg, std::int64_t nwg, const char* mdimc, const char* ndimc) {
    return Candidate{mwg, nwg,
                     Preference{{kMath, kDot4Math}, {kMwg, std::to_string(mwg)}, {kNwg, std::to_string(nwg)},
                                {kKwg, "32"}, {kMdimc, mdimc}, {kNdimc, ndimc}, {kGsw, "1"}}};
  };
  const std::vector<Candidate> candidates = {candidate(128, 128, "16", "16"), candidate(64, 64, "32", "8"),
                                             candidate(32, 32, "16", "16"), candidate(32, 16, "32", "8")};
  auto groups = [&](const Candidate& c) { return ceil_div(s.M, c.mwg) * ceil_div(s.N, c.nwg); };
  std::vector<Preference> ordered;
  for (const Candidate& c : candidates)
    if (groups(c) >= std::max(device.cores, 1)) ordered.push_back(c.preference);
  std::vector<Candidate> by_groups(candidates);
  std::stable_sort(by_groups.begin(), by_groups.end(),
                   [&](const Candidate& a, const Candidate& b) { return groups(a) > groups(b); });
  for (const Candidate& c : by_groups) ordered.push_back(c.preference);
  return preferred_config(space, ordered, template_name);
}

OpenCLKernel dot4_kernel(const Workload& workload, const ss::ConfigView& config) {
  const GemmShape& s = workload.gemm();
  const Dot4Tile t(config);
  OpenCLKernel kernel;
  kernel.source_file = "gemm_dot4.cl";
  kernel.kernel_name = "optune_gemm_dot4";
  kernel.build_options = build_options({{"M", s.M}, {"N", s.N}, {"K", s.K}, {"MWG", t.mwg}, {"NWG", t.nwg},
                                        {"KWG", t.kwg}, {"MDIMC", t.mdimc}, {"NDIMC", t.ndimc}, {"GSW", t.gsw},
                                        {"EDGE_M", s.M % t.mwg != 0}, {"EDGE_N", s.N % t.nwg != 0},
                                        {"EDGE_K", s.K % t.kwg != 0}});
  kernel.dimensions = 2;
  kernel.global_size = {static_cast<std::size_t>(ceil_div(s.N, t.nwg) * t.ndimc),
                        static_cast<std::size_t>(ceil_div(s.M, t.mwg) * t.mdimc), 1};
  kernel.local_size = {static_cast<std::size_t>(t.ndimc), static_cast<std::size_t>(t.mdimc), 1};
  return kernel;
}

}  // namespace optune::kernels::opencl
