// The "conv2d.cpu" template: conv2d as the register-tiled direct kernel (conv2d.hpp, and on a
// kept layout conv2d_nchwc.hpp / conv2d_nchwc_pointwise.hpp), on every layer of groups = 1: its
// knobs and constraints and its default config. What it shares with conv2d_gemm.cpu (candidate
// source, features, table rows) is in conv2d_template.hpp.
#include "conv2d_template.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

using namespace cpu_conv2d;

std::int64_t next_power_of_two(std::int64_t value) {
  std::int64_t p = 1;
  while (p < value) p *= 2;
  return p;
}

// A kept NCHW[b]c layout (layout_block b > 0) is the kernel's channel-blocked image itself:
// vectors of b lanes and input-channel blocks of b, nothing else to choose. A layer that reads
// NCHW into that layout (nchw_input) writes vectors of b lanes and copies its input into blocks
// of any size, as on NCHW.
void add_direct_knobs(ss::ConfigSpace& space, const DeviceInfo& device, const VectorUnit& unit,
                      const Workload& workload, bool pointwise) {
  const std::vector<std::string> block = {std::to_string(workload.layout_block)};
  const bool blocked_input = workload.input_layout_block() != kLayoutNchw;
  space.add(ss::ChoiceKnob{kAlgorithm, {kAlgorithmNames[0]}});
  space.add(ss::ChoiceKnob{kLanes, workload.layout_block != kLayoutNchw ? block : lane_names(unit)});
  space.add(ss::IntRangeKnob{kOcVectors, 1, 4, 1});
  space.add(ss::ChoiceKnob{kIcBlock, blocked_input ? block : kIcBlockNames});
  space.add(ss::IntRangeKnob{kOwBlock, 1, unit.registers == 32 ? 28 : 14, 1});
  space.add(ss::IntRangeKnob{kOhBlock, 1, pointwise ? 1 : 4, 1});
  space.add(ss::BoolKnob{kUnrollKw});
  space.add(ss::ChoiceKnob{kLoopOrder, kLoopOrderNames});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::ChoiceKnob{kParallel, kParallelNames});
  if (blocked_input) space.add(ss::ChoiceKnob{kIcChunk, kIcChunkNames});
}

void add_direct_constraints(ss::ConfigSpace& space, const Conv2dShape& shape, const VectorUnit& unit,
                            bool kept_layout) {
  const int registers = unit.registers;
  const std::int64_t P = shape.out_h(), Q = shape.out_w();
  space.add_constraint("the register tile, filter vectors and a broadcast fit the vector registers",
                       [registers](const ss::ConfigView& v) {
                         return tile_registers(v.integer(kOhBlock), v.integer(kOwBlock), v.integer(kOcVectors),
                                               parse_int(v.choice(kLanes))) <= registers;
                       });
  space.add_constraint("the output-channel block is not a whole vector past K",
                       [shape](const ss::ConfigView& v) {
                         return (v.integer(kOcVectors) - 1) * parse_int(v.choice(kLanes)) < shape.K;
                       });
  if (!kept_layout) {  // (on a kept layout ic_block is the layout's block, whatever C is)
    space.add_constraint("ic_block is not past the next power of two of C", [shape](const ss::ConfigView& v) {
      return parse_int(v.choice(kIcBlock)) <= next_power_of_two(shape.C);
    });
  }
  // A pointwise layer on a kept layout (strided or not) runs its tiles along the pixels of a
  // plane, whatever the image's width (conv2d_nchwc_pointwise.hpp).
  const bool pointwise = kept_layout && shape.R == 1 && shape.S == 1 && shape.pad == 0;
  space.add_constraint("the register tile is not past the output", [P, Q, pointwise](const ss::ConfigView& v) {
    return v.integer(kOwBlock) <= (pointwise ? P * Q : Q) && v.integer(kOhBlock) <= P;
  });
  if (pointwise) {
    const std::int64_t C = shape.C;
    space.add_constraint("ic_chunk is shorter than C (else it is one pass: all)", [C](const ss::ConfigView& v) {
      return ic_chunk_value(v.choice(kIcChunk)) < C;
    });
  } else if (kept_layout) {
    // (A chunk of all C channels is one pass over bands of rows, unlike "all": one pass, row items.)
    const std::int64_t C = shape.C;
    space.add_constraint("ic_chunk is not past C's padded channels", [C](const ss::ConfigView& v) {
      return ic_chunk_value(v.choice(kIcChunk)) <= round_up(C, parse_int(v.choice(kLanes)));
    });
  }
  // With one thread the split means nothing: keep one of the equivalent configs.
  space.add_constraint("one thread splits no loop (parallel = outer)", [](const ss::ConfigView& v) {
    return v.integer(kThreads) > 1 || v.choice(kParallel) == kParallelNames[0];
  });
}

// Untuned direct kernel, TVM's x86 default in spirit: widest vectors, two vectors of output
// channels (one if K fits one), input channels in blocks of 8 (on an NCHW input, the largest
// power of two up to 8 that divides C, so no block carries zero channels: a 3-channel image in
// blocks of 1 ran ResNet's 7x7 first layer in 1.97 ms, in blocks of 4 in 2.70), the
// widest width tile the registers allow (6 on AVX2, 12 with 32 registers), one row, filter
// width unrolled, all cores on the fused loop. Pointwise layers on a kept layout (a GEMM over
// pixels) walk bands of pixels outermost, each band's input staying in cache across the output
// channels, split among the threads as whole bands where there are 4 per thread or more (a
// thread walks its bands in order: measured 1.3x faster than the fused split on MobileNet's pw1
// and pw2), else on the fused loop (a 14x14 plane is 3 bands); one reduction pass.
ss::Config direct_default(const Workload& workload, const DeviceInfo& device, const ss::ConfigSpace& space) {
  const Conv2dShape& shape = workload.conv();
  const VectorUnit unit = vector_unit(device);
  const int lanes = workload.layout_block != kLayoutNchw ? workload.layout_block : unit.lanes.back();
  // A first layer (an NCHW image into a kept layout) with 4 vectors of output channels or more
  // takes the hand-scheduled AVX2 tile of 3 pixels x 4 vectors (ResNet's 7x7: 1.74-1.84 ms
  // against 1.97 with 6 x 2; MobileNet's 3x3: 0.28 against 0.29).
  const bool fits_3x4 = lanes == 8 && unit.registers == 16 && shape.K >= 4 * lanes;
  const bool first_layer_3x4 = workload.nchw_input && fits_3x4;
  const bool pointwise = kept_pointwise(workload);
  // The other layers that read a kept layout (3x3 and wider filters) take that tile too, with
  // passes of 64 input channels over bands of rows: on ResNet-18's 3x3 layers 0.95-1.03x oneDNN's
  // primitive, against 0.78-0.97x with 6 x 2 and one pass (oneDNN's filter chunk likewise stays
  // in cache across a thread's rows). Planes of 7 columns (ResNet's layer4) take 4 pixels x 3
  // vectors instead (tiles of 4 + 3 columns, where 3 x 4 ends each row on one column): 1.17-1.25x
  // against 1.06-1.14x.
  const bool kept_taps = workload.input_layout_block() != kLayoutNchw && !pointwise && fits_3x4;
  const bool tile_4x3 = kept_taps && shape.out_w() == 7;
  const bool tile_3x4 = (first_layer_3x4 || kept_taps) && !tile_4x3;
  const std::int64_t oc_vectors = tile_3x4 ? 4 : tile_4x3 ? 3 : shape.K <= lanes ? 1 : 2;
  const std::int64_t ic_block =
      workload.input_layout_block() != kLayoutNchw ? lanes : std::min<std::int64_t>(8, shape.C & -shape.C);
  const std::int64_t widest = (unit.registers - oc_vectors - 1) / oc_vectors;
  // Rows cut into tiles of equal width, as wide as the registers allow: a short last tile costs
  // nearly a whole tile's loads of the filter. With 32 registers and two vectors of output
  // channels, 14 columns (2 x 14 on a 28-wide row) ran 1.29x faster than 12 (12 + 12 + 4) on
  // ResNet-18's 28^2 layer, 1.66x on 14^2, 1.09x on 56^2 (2-core Xeon, 2026-12-01,
  // docs/performance/cpu-conv.md). Pointwise layers on a kept layout walk pixels, not rows: 12.
  const std::int64_t even_width = ceil_div(shape.out_w(), ceil_div(shape.out_w(), widest));
  const std::int64_t ow_block = tile_3x4   ? 3
                                : tile_4x3 ? 4
                                : pointwise ? std::min<std::int64_t>({widest, 12, shape.out_w()})
                                            : even_width;
  const std::int64_t threads = std::max(1, device.cores);
  // Bands of whole tiles of at least 64 pixels, as the kernel walks them (kBandPixels).
  const std::int64_t bands = ceil_div(shape.out_h() * shape.out_w(), round_up(64, ow_block));
  // (A first layer's rows outermost: MobileNet's 3x3 one ran in 0.28 ms so, 0.40 with oc_outer.)
  const char* loop_order = pointwise || first_layer_3x4 ? "row_outer" : "oc_outer";
  // (A first layer's rows split in two static halves: MobileNet's ran in 0.27 ms so, 0.45 with the
  // fused loop's dynamic shares; ResNet's alike either way.)
  const bool fused = threads > 1 && !(pointwise && bands >= 4 * threads) && !first_layer_3x4;
  ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
  auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
    set_default(space, config, knob, wanted);
  };
  set(kLanes, [&](const ss::ConfigView& v) { return parse_int(v.choice(kLanes)) == lanes; });
  set(kOcVectors, [&](const ss::ConfigView& v) { return v.integer(kOcVectors) == oc_vectors; });
  set(kIcBlock, [&](const ss::ConfigView& v) { return parse_int(v.choice(kIcBlock)) == ic_block; });
  set(kOwBlock, [&](const ss::ConfigView& v) { return v.integer(kOwBlock) == ow_block; });
  set(kOhBlock, [](const ss::ConfigView& v) { return v.integer(kOhBlock) == 1; });
  set(kUnrollKw, [](const ss::ConfigView& v) { return v.flag(kUnrollKw); });
  set(kLoopOrder, [&](const ss::ConfigView& v) { return v.choice(kLoopOrder) == loop_order; });
  set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
  set(kParallel, [&](const ss::ConfigView& v) { return v.choice(kParallel) == (fused ? "fused" : "outer"); });
  if (workload.input_layout_block() != kLayoutNchw) {
    const std::int64_t padded_c = round_up(shape.C, lanes);
    const int chunk = !kept_taps ? 0 : padded_c >= 64 ? 64 : padded_c >= 32 ? 32 : 0;
    set(kIcChunk, [chunk](const ss::ConfigView& v) { return ic_chunk_value(v.choice(kIcChunk)) == chunk; });
  }
  return config;
}

// The register-tiled direct kernel: every layer of groups = 1, NCHW or a kept NCHW[b]c layout.
// Its name is the one the single template had, so records of direct configs read as before.
class CpuConv2dDirectTemplate final : public CpuConv2dTemplate {
 public:
  std::string name() const override { return kDirectName; }
  int priority() const override { return 0; }
  bool reads_record(std::string_view template_name, const nlohmann::json& config) const override {
    return template_name == kDirectName && !is_old_gemm_record(template_name, config);
  }
  // The threads, loop order and split are passed at run time (Conv2dConfig::run_time_schedule):
  // a candidate compiles its register tile and blocking, and every config that differs from it
  // in its schedule alone runs on the same object.
  std::vector<std::string> run_time_knobs() const override { return {kThreads, kLoopOrder, kParallel}; }
  std::vector<long long> run_time_knob_values(const Workload&, const DeviceInfo&,
                                              const ss::ConfigView& config) const override {
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    return {c.threads, static_cast<long long>(c.loop_order), static_cast<long long>(c.parallel)};
  }

 protected:
  void add_knobs(ss::ConfigSpace& space, const Workload& workload, const DeviceInfo& device,
                 const VectorUnit& unit) const override {
    add_direct_knobs(space, device, unit, workload, kept_pointwise(workload));
    add_direct_constraints(space, workload.conv(), unit, workload.input_layout_block() != kLayoutNchw);
  }
  ss::Config algorithm_default(const Workload& workload, const DeviceInfo& device,
                               const ss::ConfigSpace& space) const override {
    return direct_default(workload, device, space);
  }
};

}  // namespace

const KernelTemplate& cpu_conv2d_template() {
  static const CpuConv2dDirectTemplate instance;
  return instance;
}

}  // namespace optune::kernels
