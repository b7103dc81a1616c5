#include "dot_gemm_template.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "optune/kernels/cpu/candidate.hpp"
#include "template_support.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;

// Knob names: stored in records (JSON by name), so they are a contract once released.
constexpr const char* kTileMc = "tile_mc";
constexpr const char* kTileNc = "tile_nc";
constexpr const char* kTileKc = "tile_kc";
constexpr const char* kMr = "mr";
constexpr const char* kNr = "nr";
constexpr const char* kThreads = "threads";
constexpr const char* kPackA = "pack_a";

const std::vector<std::int64_t> kMcCandidates = {8, 12, 16, 24, 32, 48, 64, 72, 96, 120, 144, 192, 240, 288, 384, 576};
const std::vector<std::int64_t> kNcCandidates = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096};
const std::vector<std::int64_t> kKcCandidates = {16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 2048};

struct Blocking {
  std::int64_t mc, nc, kc, mr, nr, threads;
  bool pack_a;
};

Blocking blocking_of(const ss::ConfigView& v) {
  return {v.split_factor(kTileMc, 1), v.split_factor(kTileNc, 1), v.split_factor(kTileKc, 1),
          v.integer(kMr),             v.integer(kNr),             v.integer(kThreads),
          v.flag(kPackA)};
}

// Whether the block knob's value breaks no constraint that names it (the others may not be set yet).
bool valid_block(const ss::ConfigSpace& space, const ss::Config& config, const std::string& knob) {
  const std::string why = space.first_violation(config);
  if (why.empty()) return true;
  const std::string block_name = knob == kTileMc ? "MC" : knob == kTileNc ? "NC" : "KC";
  return why.find(block_name) == std::string::npos;
}

}  // namespace

ss::ConfigSpace DotGemmTemplate::space(const Workload& workload, const DeviceInfo& device) const {
  const GemmShape& shape = workload.gemm();
  const int registers = vector_unit(device).registers, vector_lanes = lanes(device);
  ss::ConfigSpace space;
  space.add(ss::SplitKnob{kTileMc, shape.M, 2, ss::SplitPolicy::kCandidates, kMcCandidates, 0});
  space.add(ss::SplitKnob{kTileNc, shape.N, 2, ss::SplitPolicy::kCandidates, kNcCandidates, 0});
  space.add(ss::SplitKnob{kTileKc, shape.K, 2, ss::SplitPolicy::kCandidates, kKcCandidates, 0});
  space.add(ss::IntRangeKnob{kMr, 1, max_mr(device), 1});
  space.add(ss::IntRangeKnob{kNr, vector_lanes, 4 * vector_lanes, vector_lanes});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::BoolKnob{kPackA});
  add_type_knobs(space, device);
  const bool in_place = reads_a_in_place(workload, device);
  space.add_constraint("A is read in place only where the kernel takes K's groups as they lie (pack_a off)",
                       [in_place](const ss::ConfigView& v) { return v.flag(kPackA) || in_place; });
  space.add_constraint("accumulators, a row of B and a broadcast fit the vector registers",
                       [registers, vector_lanes](const ss::ConfigView& v) {
                         const auto vectors = v.integer(kNr) / vector_lanes;
                         return v.integer(kMr) * vectors + vectors + 1 <= registers;
                       });
  space.add_constraint("MC is a multiple of mr and not far beyond M", [shape](const ss::ConfigView& v) {
    const auto mc = v.split_factor(kTileMc, 1), mr = v.integer(kMr);
    return mc % mr == 0 && block_fits(mc, shape.M, mr, 96);
  });
  space.add_constraint("NC is a multiple of nr and not far beyond N", [shape](const ss::ConfigView& v) {
    const auto nc = v.split_factor(kTileNc, 1), nr = v.integer(kNr);
    return nc % nr == 0 && block_fits(nc, shape.N, nr, 256);
  });
  space.add_constraint("KC is not far beyond K", [shape](const ss::ConfigView& v) {
    return block_fits(v.split_factor(kTileKc, 1), shape.K, 2, 128);
  });
  return space;
}

ss::Config DotGemmTemplate::default_config(const Workload& workload, const DeviceInfo& device,
                                           const ss::ConfigSpace& space) const {
  ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
  const int mr = vector_unit(device).registers >= 16 ? 6 : 2, nr = 2 * lanes(device);
  auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
    if (find_option(space, knob, wanted, config) < 0)
      throw std::logic_error(name() + ": default has no option for " + knob);
  };
  set(kMr, [&](const ss::ConfigView& v) { return v.integer(kMr) == mr; });
  set(kNr, [&](const ss::ConfigView& v) { return v.integer(kNr) == nr; });
  set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == std::max(1, device.cores); });
  // A read in place where each thread's columns are few: every thread packs all of A for its own
  // columns, which on 3136 x 64 x 576 int8 (32 a thread) cost half the time; at 1024^3 (512 a
  // thread) packing is amortised and the packed panel's one stream reads faster than MR rows
  // (in place there was 0.83x). docs/performance/lowp-cpu-gemm.md.
  const std::int64_t columns_per_thread = workload.gemm().N / std::max(1, device.cores);
  const bool pack_a = !(reads_a_in_place(workload, device) && columns_per_thread <= 128);
  set(kPackA, [&](const ss::ConfigView& v) { return v.flag(kPackA) == pack_a; });
  // The largest valid block up to the preferred size, else the smallest valid one.
  auto block = [&](const char* knob, std::int64_t preferred) {
    const std::size_t k = space.knob_index(knob);
    std::int64_t best = -1, best_size = 0, smallest = -1, smallest_size = 0;
    for (std::uint64_t o = 0; o < space.option_count(k); ++o) {
      config.options[k] = static_cast<std::uint32_t>(o);
      if (!valid_block(space, config, knob)) continue;
      const std::int64_t size = ss::ConfigView(space, config).split_factor(knob, 1);
      if (size <= preferred && size > best_size) best = static_cast<std::int64_t>(o), best_size = size;
      if (smallest < 0 || size < smallest_size) smallest = static_cast<std::int64_t>(o), smallest_size = size;
    }
    if (best < 0) best = smallest;
    if (best < 0) throw std::logic_error(name() + ": default has no option for " + knob);
    config.options[k] = static_cast<std::uint32_t>(best);
  };
  block(kTileMc, 96);
  block(kTileNc, 512);
  block(kTileKc, 512);
  if (const std::string why = space.first_violation(config); !why.empty())
    throw std::logic_error(name() + ": default config breaks '" + why + "'");
  return config;
}

std::vector<std::pair<std::string, double>> DotGemmTemplate::derived_features(const Workload& workload,
                                                                              const DeviceInfo& device,
                                                                              const ss::ConfigView& view) const {
  const GemmShape& s = workload.gemm();
  const Blocking c = blocking_of(view);
  const double vectors = static_cast<double>(c.nr) / lanes(device), bytes = packed_bytes(device);
  const double kc = std::min<double>(static_cast<double>(c.kc), static_cast<double>(s.K));
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double tiles_m = std::ceil(double(s.M) / double(c.mr)), tiles_n = std::ceil(double(s.N) / double(c.nr));
  return {
      {"madd_per_load", double(c.mr) * vectors / (double(c.mr) + vectors)},
      {"register_use", (double(c.mr) * vectors + vectors + 1) / vector_unit(device).registers},
      {"b_micropanel_over_l1", bytes * kc * double(c.nr) / l1},
      {"a_block_over_l2", bytes * kc * double(std::min(c.mc, s.M)) / l2},
      {"edge_waste", 1.0 - double(s.M) * double(s.N) / (tiles_m * double(c.mr) * tiles_n * double(c.nr))},
      {"threads_per_core", double(c.threads) / std::max(1, device.cores)},
  };
}

std::string DotGemmTemplate::emit_source(const Workload& workload, const DeviceInfo& /*device*/,
                                         const ss::ConfigView& view) const {
  const GemmShape& s = workload.gemm();
  const Blocking c = blocking_of(view);
  const DotGemmKernel k = kernel();
  const std::vector<std::string> types = operand_types(view);
  const auto i = [](std::int64_t value) { return std::to_string(value); };
  const std::string config = "optune::kernels::cpu::" + k.config_type + "{.mc = " + i(c.mc) + ", .nc = " + i(c.nc) +
                             ", .kc = " + i(c.kc) + ", .mr = " + i(c.mr) + ", .nr = " + i(c.nr) +
                             ", .threads = " + i(c.threads) + ", .pack_a = " + (c.pack_a ? "true" : "false") + "}";
  return "// optune candidate of " + name() + " for " + workload.key() +
         "\n"
         "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
         "#include <cstdint>\n#include <optune/kernels/cpu/" + k.header + ">\n\n"
         "extern \"C\" void " + std::string(kCandidateSymbol) + "(const void* const* inputs, void* output) {\n"
         "  optune::kernels::cpu::" + k.function + "<" + config + ">(\n      " + i(s.M) + ", " + i(s.N) + ", " +
         i(s.K) + ", static_cast<const " + types[0] + "*>(inputs[0]), " + i(s.K) + ", static_cast<const " + types[1] +
         "*>(inputs[1]), " + i(s.N) + ", static_cast<" + types[2] + "*>(output), " + i(s.N) + ");\n}\n";
}

}  // namespace optune::kernels
