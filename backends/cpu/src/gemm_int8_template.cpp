// The "gemm_int8.cpu" template: i8 GEMM workloads (int32 accumulation and output) on the
// header-only kernel optune/kernels/cpu/gemm_int8.hpp. On x86 it reads activations as u8 (what
// VNNI's vpdpbusd multiplies, and oneDNN's u8s8s32 matmul takes), elsewhere as s8; weights are s8.
// The knobs map one to one onto GemmInt8Config's fields.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

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
// The activations' signedness, one option per device (u8 on x86, s8 elsewhere): every record says
// which ran.
constexpr const char* kActivations = "activations";

const std::vector<std::int64_t> kMcCandidates = {8, 12, 16, 24, 32, 48, 64, 72, 96, 120, 144, 192, 240, 288, 384, 576};
const std::vector<std::int64_t> kNcCandidates = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096};
const std::vector<std::int64_t> kKcCandidates = {16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 2048};

struct Int8Config {
  std::int64_t mc, nc, kc, mr, nr, threads;
};

Int8Config config_from_view(const ss::ConfigView& v) {
  return {v.split_factor(kTileMc, 1), v.split_factor(kTileNc, 1), v.split_factor(kTileKc, 1),
          v.integer(kMr),             v.integer(kNr),             v.integer(kThreads)};
}

bool is_x86(const DeviceInfo& device) { return device.arch == "x86_64" || device.has_isa("avx2"); }

// Whether candidates compile to gemm_int8.hpp's VNNI path (u8 activations, as x86 runs them, and
// vpdpbusd on zmm registers): micro-tiles are then whole 16-lane int32 vectors, 32 registers deep.
bool runs_vnni(const DeviceInfo& device) {
  return is_x86(device) && device.has_isa("avx512_vnni") && device.has_isa("avx512bw");
}
// The int32 lanes of the accumulating vector on the device's path (gemm_int8_lanes in the header).
int int32_lanes(const DeviceInfo& device) { return runs_vnni(device) ? 16 : 8; }

// A block no larger than twice the extent rounded to its unit (or a floor for small extents):
// larger ones compute nothing more.
bool block_fits(std::int64_t block, std::int64_t extent, std::int64_t unit, std::int64_t floor) {
  return block <= std::max(2 * ((extent + unit - 1) / unit * unit), floor);
}

class CpuGemmInt8Template final : public KernelTemplate {
 public:
  std::string name() const override { return "gemm_int8.cpu"; }
  Op op() const override { return Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }
  std::vector<DataType> dtypes() const override { return {DataType::kI8}; }

  std::vector<DataType> input_dtypes(const Workload& /*workload*/, const DeviceInfo& device) const override {
    return {is_x86(device) ? DataType::kU8 : DataType::kI8, DataType::kI8};
  }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const GemmShape& shape = workload.gemm();
    const int registers = vector_unit(device).registers, lanes = int32_lanes(device);
    ss::ConfigSpace space;
    space.add(ss::SplitKnob{kTileMc, shape.M, 2, ss::SplitPolicy::kCandidates, kMcCandidates, 0});
    space.add(ss::SplitKnob{kTileNc, shape.N, 2, ss::SplitPolicy::kCandidates, kNcCandidates, 0});
    space.add(ss::SplitKnob{kTileKc, shape.K, 2, ss::SplitPolicy::kCandidates, kKcCandidates, 0});
    space.add(ss::IntRangeKnob{kMr, 1, runs_vnni(device) ? 14 : 12, 1});
    space.add(ss::IntRangeKnob{kNr, lanes, 4 * lanes, lanes});
    space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
    space.add(ss::ChoiceKnob{kActivations, {is_x86(device) ? "u8" : "s8"}});
    space.add_constraint("accumulators, a row of B and a broadcast fit the vector registers",
                         [registers, lanes](const ss::ConfigView& v) {
                           const auto vectors = v.integer(kNr) / lanes;
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

  // Untuned: 6 x 16 micro-tiles (two int32 vectors, 15 of AVX2's 16 registers; with VNNI 6 x 32, two
  // zmm), MC 96, NC 512 and KC 512 where the shape has them (else the nearest blocks that fit), all
  // cores.
  ss::Config default_config(const Workload& /*workload*/, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    const int mr = vector_unit(device).registers >= 16 ? 6 : 2;
    auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
      if (find_option(space, knob, wanted, config) < 0)
        throw std::logic_error(std::string("gemm_int8.cpu: default has no option for ") + knob);
    };
    set(kMr, [&](const ss::ConfigView& v) { return v.integer(kMr) == mr; });
    const int nr = 2 * int32_lanes(device);
    set(kNr, [nr](const ss::ConfigView& v) { return v.integer(kNr) == nr; });
    set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == std::max(1, device.cores); });
    // The largest valid block up to the preferred size, else the smallest valid one.
    auto block = [&](const char* knob, std::int64_t preferred) {
      const std::size_t k = space.knob_index(knob);
      std::int64_t best = -1, best_size = 0, smallest = -1, smallest_size = 0;
      for (std::uint64_t o = 0; o < space.option_count(k); ++o) {
        config.options[k] = static_cast<std::uint32_t>(o);
        const ss::ConfigView view(space, config);
        if (!valid_block(space, config, knob)) continue;
        const std::int64_t size = view.split_factor(knob, 1);
        if (size <= preferred && size > best_size) best = static_cast<std::int64_t>(o), best_size = size;
        if (smallest < 0 || size < smallest_size) smallest = static_cast<std::int64_t>(o), smallest_size = size;
      }
      if (best < 0) best = smallest;
      if (best < 0) throw std::logic_error(std::string("gemm_int8.cpu: default has no option for ") + knob);
      config.options[k] = static_cast<std::uint32_t>(best);
    };
    block(kTileMc, 96);
    block(kTileNc, 512);
    block(kTileKc, 512);
    if (const std::string why = space.first_violation(config); !why.empty())
      throw std::logic_error("gemm_int8.cpu: default config breaks '" + why + "'");
    return config;
  }

  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const ss::ConfigView& view) const override {
    const GemmShape& s = workload.gemm();
    const Int8Config c = config_from_view(view);
    const double vectors = static_cast<double>(c.nr) / int32_lanes(device);
    const double packed_bytes = runs_vnni(device) ? 1 : 2;  // per packed element: bytes, or widened pairs
    const double kc = std::min<double>(static_cast<double>(c.kc), static_cast<double>(s.K));
    const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
    const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
    const double tiles_m = std::ceil(double(s.M) / double(c.mr)), tiles_n = std::ceil(double(s.N) / double(c.nr));
    return {
        {"madd_per_load", double(c.mr) * vectors / (double(c.mr) + vectors)},
        {"register_use", (double(c.mr) * vectors + vectors + 1) / vector_unit(device).registers},
        {"b_micropanel_over_l1", packed_bytes * kc * double(c.nr) / l1},
        {"a_block_over_l2", packed_bytes * kc * double(std::min(c.mc, s.M)) / l2},
        {"edge_waste", 1.0 - double(s.M) * double(s.N) / (tiles_m * double(c.mr) * tiles_n * double(c.nr))},
        {"threads_per_core", double(c.threads) / std::max(1, device.cores)},
    };
  }

  std::string emit_source(const Workload& workload, const DeviceInfo& /*device*/,
                          const ss::ConfigView& view) const override {
    const GemmShape& s = workload.gemm();
    const Int8Config c = config_from_view(view);
    const std::string a_type = view.choice(kActivations) == "u8" ? "std::uint8_t" : "std::int8_t";
    const auto i = [](std::int64_t value) { return std::to_string(value); };
    const std::string config = "optune::kernels::cpu::GemmInt8Config{.mc = " + i(c.mc) + ", .nc = " + i(c.nc) +
                               ", .kc = " + i(c.kc) + ", .mr = " + i(c.mr) + ", .nr = " + i(c.nr) +
                               ", .threads = " + i(c.threads) + "}";
    return "// optune candidate of gemm_int8.cpu for " + workload.key() +
           "\n"
           "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
           "#include <cstdint>\n#include <optune/kernels/cpu/gemm_int8.hpp>\n\n"
           "extern \"C\" void " + std::string(kCandidateSymbol) + "(const void* const* inputs, void* output) {\n"
           "  optune::kernels::cpu::gemm_int8<" + config + ">(\n      " + i(s.M) + ", " + i(s.N) + ", " + i(s.K) +
           ", static_cast<const " + a_type + "*>(inputs[0]), " + i(s.K) +
           ", static_cast<const std::int8_t*>(inputs[1]), " + i(s.N) + ", static_cast<std::int32_t*>(output), " +
           i(s.N) + ");\n}\n";
  }

 private:
  // Whether the block knob's value breaks no constraint that names it (the others may not be set yet).
  static bool valid_block(const ss::ConfigSpace& space, const ss::Config& config, const char* knob) {
    const std::string why = space.first_violation(config);
    const std::string name(knob);
    if (why.empty()) return true;
    const bool about_knob = (name == kTileMc && why.find("MC") != std::string::npos) ||
                            (name == kTileNc && why.find("NC") != std::string::npos) ||
                            (name == kTileKc && why.find("KC") != std::string::npos);
    return !about_knob;
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_int8_template() {
  static const CpuGemmInt8Template kernel_template;
  return kernel_template;
}

}  // namespace optune::kernels
