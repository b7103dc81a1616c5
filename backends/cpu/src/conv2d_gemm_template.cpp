// The "conv2d_gemm.cpu" template: conv2d as a GEMM on the GEMM kernel (conv2d_gemm.hpp), on NCHW
// layers with 1x1 filters or few input channels, where it is the default: its knobs and
// constraints and its default config. What it shares with conv2d.cpu (candidate source, features,
// table rows) is in conv2d_template.hpp.
#include "conv2d_template.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

using namespace cpu_conv2d;



void add_gemm_knobs(ss::ConfigSpace& space, const DeviceInfo& device, const VectorUnit& unit) {
  space.add(ss::ChoiceKnob{kAlgorithm, {kAlgorithmNames[1]}});
  space.add(ss::ChoiceKnob{kLanes, lane_names(unit)});
  space.add(ss::IntRangeKnob{kGemmMr, 1, unit.registers == 32 ? 16 : 12, 1});
  space.add(ss::IntRangeKnob{kGemmNr, 4, std::max(32, 4 * unit.lanes.back()), 4});
  space.add(ss::ChoiceKnob{kGemmMc, kGemmMcNames});
  space.add(ss::ChoiceKnob{kGemmNc, kGemmNcNames});
  space.add(ss::ChoiceKnob{kGemmKc, kGemmKcNames});
  space.add(ss::ChoiceKnob{kGemmUnrollK, kGemmUnrollNames});
  space.add(ss::ChoiceKnob{kGemmLoopOrder, kGemmLoopOrderNames});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::ChoiceKnob{kGemmParallelLoop, kGemmParallelNames});
}

constexpr std::int64_t kMinBlockLimitMc = 128, kMinBlockLimitNc = 256, kMinBlockLimitKc = 128;

void add_gemm_constraints(ss::ConfigSpace& space, const Conv2dShape& shape, const VectorUnit& unit) {
  const int registers = unit.registers;
  const GemmExtents g = gemm_extents(shape);
  space.add_constraint("gemm_nr is a multiple of lanes, at most 8 vectors", [](const ss::ConfigView& v) {
    const auto nr = v.integer(kGemmNr), lanes = static_cast<std::int64_t>(parse_int(v.choice(kLanes)));
    return nr % lanes == 0 && nr / lanes <= 8;
  });
  space.add_constraint("micro-tile accumulators, one row of B and a broadcast fit the vector registers",
                       [registers](const ss::ConfigView& v) {
                         const auto vectors = v.integer(kGemmNr) / parse_int(v.choice(kLanes));
                         return v.integer(kGemmMr) * vectors + vectors + 1 <= registers;
                       });
  space.add_constraint("gemm_mc is a multiple of gemm_mr and not far beyond K", [g](const ss::ConfigView& v) {
    const std::int64_t mc = parse_int(v.choice(kGemmMc)), mr = v.integer(kGemmMr);
    return mc % mr == 0 && block_fits(mc, g.M, mr, kMinBlockLimitMc);
  });
  space.add_constraint("gemm_nc is a multiple of gemm_nr and not far beyond P * Q", [g](const ss::ConfigView& v) {
    const std::int64_t nc = parse_int(v.choice(kGemmNc)), nr = v.integer(kGemmNr);
    return nc % nr == 0 && block_fits(nc, g.N, nr, kMinBlockLimitNc);
  });
  space.add_constraint("gemm_kc is not far beyond C * R * S", [g](const ss::ConfigView& v) {
    return block_fits(parse_int(v.choice(kGemmKc)), g.depth, 1, kMinBlockLimitKc);
  });
  space.add_constraint("one thread splits no loop (gemm_parallel_loop = jc)", [](const ss::ConfigView& v) {
    return v.integer(kThreads) > 1 || v.choice(kGemmParallelLoop) == kGemmParallelNames[0];
  });
}

// The largest option of a block knob <= preferred that satisfies the constraints so far (else
// the smallest that does).
void set_block(const ss::ConfigSpace& space, ss::Config& config, const char* knob, std::int64_t preferred) {
  const std::size_t k = space.knob_index(knob);
  std::int64_t best = -1, fallback = -1;
  for (std::uint32_t o = 0; o < space.option_count(k); ++o) {
    config.options[k] = o;
    if (!space.is_valid(config)) continue;
    if (fallback < 0) fallback = o;
    if (parse_int(ss::ConfigView(space, config).choice(knob)) <= preferred) best = o;
  }
  if (best < 0 && fallback < 0) throw std::logic_error(std::string("conv2d.cpu: default has no option for ") + knob);
  config.options[k] = static_cast<std::uint32_t>(best >= 0 ? best : fallback);
}

// Untuned GEMM path, gemm.cpu's default: a 6 x (2 vectors) micro-tile, blocks MC 96, NC 1024,
// KC 256 (smaller for small layers), BLIS loop order; the threads split the output pixels, or
// the output channels where the pixels are too few to share (7x7 and 14x14 layers).
ss::Config gemm_default(const Conv2dShape& shape, const DeviceInfo& device, const ss::ConfigSpace& space) {
  const int lanes = vector_unit(device).lanes.back();
  const std::int64_t mr = 6, nr = 2 * lanes, threads = std::max(1, device.cores);
  const bool split_pixels = threads == 1 || ceil_div(gemm_extents(shape).N, nr) >= 8 * threads;
  // Start from a config that satisfies every constraint but the blocks, then fix the blocks.
  ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
  auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
    set_default(space, config, knob, wanted);
  };
  set(kLanes, [&](const ss::ConfigView& v) { return parse_int(v.choice(kLanes)) == lanes; });
  set(kGemmMr, [&](const ss::ConfigView& v) { return v.integer(kGemmMr) == mr; });
  set(kGemmNr, [&](const ss::ConfigView& v) { return v.integer(kGemmNr) == nr; });
  set(kGemmUnrollK, [](const ss::ConfigView& v) { return v.choice(kGemmUnrollK) == "4"; });
  set(kGemmLoopOrder, [](const ss::ConfigView& v) { return v.choice(kGemmLoopOrder) == "jc_pc_ic"; });
  set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
  set(kGemmParallelLoop, [&](const ss::ConfigView& v) { return v.choice(kGemmParallelLoop) == (split_pixels ? "jc" : "ic"); });
  set_block(space, config, kGemmMc, 96);
  set_block(space, config, kGemmNc, 1024);
  set_block(space, config, kGemmKc, 256);
  return config;
}

// The layer as a GEMM on the GEMM kernel. It applies to the layers uses_gemm() names, and there
// it outranks the direct kernel, so those layers' default stays the GEMM's.
class CpuConv2dGemmTemplate final : public CpuConv2dTemplate {
 public:
  std::string name() const override { return "conv2d_gemm.cpu"; }
  int priority() const override { return 10; }
  bool applies(const Workload& workload, const DeviceInfo&) const override {
    return workload.conv().groups == 1 && uses_gemm(workload);
  }
  bool reads_record(std::string_view template_name, const nlohmann::json& config) const override {
    return template_name == name() || is_old_gemm_record(template_name, config);
  }

 protected:
  void add_knobs(ss::ConfigSpace& space, const Workload& workload, const DeviceInfo& device,
                 const VectorUnit& unit) const override {
    if (!uses_gemm(workload)) {
      throw std::invalid_argument(name() + ": runs NCHW layers with a 1x1 filter or at most 4 input channels, not " +
                                  workload.key());
    }
    add_gemm_knobs(space, device, unit);
    add_gemm_constraints(space, workload.conv(), unit);
  }
  ss::Config algorithm_default(const Workload& workload, const DeviceInfo& device,
                               const ss::ConfigSpace& space) const override {
    return gemm_default(workload.conv(), device, space);
  }
};

}  // namespace

const KernelTemplate& cpu_conv2d_gemm_template() {
  static const CpuConv2dGemmTemplate instance;
  return instance;
}

}  // namespace optune::kernels
