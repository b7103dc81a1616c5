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
    auto pow2_at_least = [](std::int64_t x) {
      std::int64_t p = 1;
      while (p < x) p *= 2;
      return p;
    };
    return number(v, kMwg) <= std::max<std::int64_t>(16, pow2_at_least(s.M)) &&
           number(v, kNwg) <= std::max<std::int64_t>(16, pow2_at_least(s.N)) &&
           number(v, kKwg) <= std::max<std::int64_t>(16, pow2_at_least(s.K));
  });
  return space;
}

// 8 x 8 sums per work-item in 128 x 128 tiles where those give every compute unit a work-group,
// else the largest smaller tile that does, else the tile that gives the most work-groups.
ss::Config dot4_default(const Workload& workload, const DeviceInfo& device, const ss::ConfigSpace& space,
                        const std::string& template_name) {
  const GemmShape& s = workload.gemm();
  auto preference = [](const char* tile, const char* kwg, const char* dim, const char* gsw) {
    return Preference{{kMath, kDot4Math}, {kMwg, tile}, {kNwg, tile}, {kKwg, kwg},
                      {kMdimc, dim},      {kNdimc, dim}, {kGsw, gsw}};
  };
  const std::vector<std::pair<std::int64_t, Preference>> by_tile = {
      {128, preference("128", "32", "16", "8")}, {128, preference("128", "32", "16", "1")},
      {64, preference("64", "32", "8", "1")},    {32, preference("32", "32", "8", "1")},
      {16, preference("16", "16", "4", "1")}};
  std::vector<Preference> ordered;
  for (const auto& [tile, p] : by_tile)
    if (ceil_div(s.M, tile) * ceil_div(s.N, tile) >= std::max(device.cores, 1)) ordered.push_back(p);
  for (auto it = by_tile.rbegin(); it != by_tile.rend(); ++it) ordered.push_back(it->second);
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
