// The CPU conv2d templates: "conv2d.cpu" (the direct kernel) and "conv2d_gemm.cpu" (the layer as a
// GEMM), both tuning the header-only CPU conv2d kernel (optune/kernels/cpu/conv2d.hpp): each
// one's space for a workload and device, its default config, the candidate source that
// instantiates the kernel with a config, the features the cost model learns from, and the rows of
// `optune apply-best` tables. The knobs map one to one onto Conv2dConfig's fields;
// conv2d_config_from_view() is the only place that reads them back.
//
// "conv2d.cpu" has the register-tiled direct kernel's knobs (lanes, oc_vectors, ic_block,
// ow_block, oh_block, unroll_kw, loop_order, threads, parallel; on layers that read a kept layout
// also ic_chunk) and applies to every layer; "conv2d_gemm.cpu" has the GEMM kernel's (lanes,
// threads and the gemm_* knobs of its blocks, micro-tile, unroll, loop order and parallel loop)
// and applies to the layers uses_gemm() names, where it is the default. Both keep the one-option
// knob `algorithm`, so a config says which kernel it runs, as the records of the single
// "conv2d.cpu" template, which carried both algorithms, did (those with algorithm "gemm" are read
// as conv2d_gemm.cpu's: reads_record).
// Two templates rather than both algorithms in one space: a knob of one algorithm means nothing
// to the other, and a joint space would hold each config of one algorithm thousands of times.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/conv2d_config_view.hpp"
#include "optune/kernels/cpu/gemm_config_view.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using cpu::Conv2dConfig;
using cpu::ConvAlgorithm;
using cpu::ConvLoopOrder;
using cpu::ConvParallel;
using cpu::GemmConfig;

// Knob names: stored in records (JSON by name), so they are a contract once released.
constexpr const char* kLanes = "lanes";
constexpr const char* kOcVectors = "oc_vectors";  // output-channel block, in vectors
constexpr const char* kIcBlock = "ic_block";      // c of the NCHW[c]c input layout
constexpr const char* kOwBlock = "ow_block";      // register tile along the output width
constexpr const char* kOhBlock = "oh_block";      // register tile along the output height
constexpr const char* kUnrollKw = "unroll_kw";
constexpr const char* kLoopOrder = "loop_order";
constexpr const char* kThreads = "threads";
constexpr const char* kParallel = "parallel";
constexpr const char* kAlgorithm = "algorithm";
// Input channels per reduction pass ("all": one pass, rows as items). Only in the spaces of
// layers that read a kept layout, the kernels that read it (conv2d_nchwc.hpp: passes over bands of
// rows; conv2d_nchwc_pointwise.hpp: passes over bands of pixels), so that the other spaces, and
// the records tuned in them, stay as they were.
constexpr const char* kIcChunk = "ic_chunk";
// The GEMM path's knobs (GemmConfig's fields; lanes and threads are shared).
constexpr const char* kGemmMr = "gemm_mr";  // micro-tile rows: output channels
constexpr const char* kGemmNr = "gemm_nr";  // micro-tile columns: output pixels (multiple of lanes)
constexpr const char* kGemmMc = "gemm_mc";  // output channels per cache block
constexpr const char* kGemmNc = "gemm_nc";  // output pixels per cache block
constexpr const char* kGemmKc = "gemm_kc";  // depth (C * R * S) per cache block
constexpr const char* kGemmUnrollK = "gemm_unroll_k";
constexpr const char* kGemmLoopOrder = "gemm_loop_order";
constexpr const char* kGemmParallelLoop = "gemm_parallel_loop";

const std::vector<std::string> kIcBlockNames = {"1", "2", "4", "8", "16", "32", "64"};
const std::vector<std::string> kLoopOrderNames = {"oc_outer", "row_outer"};
const std::vector<std::string> kParallelNames = {"outer", "fused"};
const std::vector<std::string> kAlgorithmNames = {"direct", "gemm"};
const std::vector<std::string> kIcChunkNames = {"all", "32", "64", "128", "256"};
const std::vector<std::string> kGemmMcNames = {"16",  "24",  "32",  "48",  "64",  "72",  "96",  "120",
                                               "128", "144", "192", "240", "256", "288", "384", "512"};
const std::vector<std::string> kGemmNcNames = {"32",  "64",   "128",  "192",  "256",  "384",
                                               "512", "768",  "1024", "1536", "2048", "4096"};
const std::vector<std::string> kGemmKcNames = {"16",  "32",  "64",  "96",  "128", "160",
                                               "192", "256", "320", "384", "512", "768", "1024"};
const std::vector<std::string> kGemmUnrollNames = {"1", "2", "4", "8"};
// The names of gemm.cpu's loop_order and parallel_loop knobs, in LoopOrder / ParallelLoop order.
const std::vector<std::string> kGemmLoopOrderNames = {"jc_pc_ic", "pc_jc_ic", "ic_pc_jc"};
const std::vector<std::string> kGemmParallelNames = {"jc", "ic", "jr"};

int parse_int(const std::string& text) { return std::stoi(text); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// The layers that run as GEMMs: 1x1 filters (pointwise and strided downsample layers: no taps
// for a direct kernel's register tile to reuse, and at stride 1 the image is the GEMM's B as it
// is), and layers with few input channels (a network's first layer on the RGB image, e.g.
// ResNet's 7x7 stem: the direct kernel would pad 3 channels to a block of 4 or more, and the
// GEMM's reduction C * R * S = 147 is long enough for its micro-kernel).
// A layer on a kept NCHW[b]c layout always runs direct: that kernel reads the layout as it is,
// while the GEMM path would need its columns packed from it.
bool uses_gemm(const Workload& workload) {
  const Conv2dShape& shape = workload.conv();
  return workload.layout_block == kLayoutNchw && ((shape.R == 1 && shape.S == 1) || shape.C <= 4);
}

// The GEMM path's view of a layer: out[M = K][N = P * Q] = filter[M][depth = C * R * S] x columns.
struct GemmExtents {
  std::int64_t M, N, depth;
};
GemmExtents gemm_extents(const Conv2dShape& s) { return {s.K, s.out_h() * s.out_w(), s.C * s.R * s.S}; }

// A cache block is "absurd" past twice the (micro-tile rounded) extent, with a floor so that
// small layers keep a few options (as gemm.cpu).
bool block_fits(std::int64_t block, std::int64_t extent, std::int64_t unit, std::int64_t floor) {
  return block <= std::max(2 * round_up(extent, unit), floor);
}

std::int64_t next_power_of_two(std::int64_t value) {
  std::int64_t p = 1;
  while (p < value) p *= 2;
  return p;
}

// Register tile accumulators, one filter vector per output-channel vector and a broadcast; the
// hand-scheduled AVX2 tile of 3 pixels x 4 vectors of 8 (conv_tap_avx2_3x4 in conv2d.hpp) holds
// its 3 broadcasts and one filter vector instead.
std::int64_t tile_registers(std::int64_t oh, std::int64_t ow, std::int64_t oc_vectors, std::int64_t lanes) {
  if (lanes == 8 && oc_vectors == 4 && oh * ow == 3) return 12 + 3 + 1;
  return oh * ow * oc_vectors + oc_vectors + 1;
}

// A 1x1 layer without padding that reads a kept layout: conv2d_nchwc runs it as a GEMM over the
// pixels of a plane (conv2d_nchwc_pointwise.hpp), strided ones on a compacted copy. Its tiles are
// runs of pixels, so oh_block means nothing there (fixed to 1), and it has the ic_chunk knob.
bool kept_pointwise(const Workload& workload) {
  const Conv2dShape& s = workload.conv();
  return workload.input_layout_block() != kLayoutNchw && s.R == 1 && s.S == 1 && s.pad == 0;
}

int ic_chunk_value(const std::string& name) { return name == kIcChunkNames[0] ? 0 : parse_int(name); }

std::vector<std::string> lane_names(const VectorUnit& unit) {
  std::vector<std::string> lanes;
  for (int l : unit.lanes) lanes.push_back(std::to_string(l));
  return lanes;
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


// Sets `knob` of `config` to the first option that satisfies `wanted`, or throws.
void set_default(const ss::ConfigSpace& space, ss::Config& config, const char* knob,
                 const std::function<bool(const ss::ConfigView&)>& wanted) {
  if (find_option(space, knob, wanted, config) < 0) {
    throw std::logic_error(std::string("conv2d.cpu: default has no option for ") + knob);
  }
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
  const std::int64_t ow_block = tile_3x4 ? 3 : tile_4x3 ? 4 : std::min<std::int64_t>({widest, 12, shape.out_w()});
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

std::vector<std::pair<std::string, double>> direct_features(const Workload& workload, const DeviceInfo& device,
                                                            const Conv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const VectorUnit unit = vector_unit(device);
  const double P = static_cast<double>(s.out_h()), Q = static_cast<double>(s.out_w());
  const double ob = c.oc_vectors * c.lanes, pixels = c.oh_block * c.ow_block;
  const double padded_c = static_cast<double>(ceil_div(s.C, c.ic_block) * c.ic_block);
  const double pass_c = c.ic_chunk > 0 ? std::min<double>(c.ic_chunk, padded_c) : padded_c;  // one reduction pass
  const double padded_k = static_cast<double>(ceil_div(s.K, static_cast<std::int64_t>(ob))) * ob;
  const double row_tiles = std::ceil(P / c.oh_block), col_tiles = std::ceil(Q / c.ow_block);
  // On a kept layout a row's last tile computes only the columns left (conv2d_nchwc.hpp).
  const bool kept_direct = workload.input_layout_block() != kLayoutNchw && !kept_pointwise(workload);
  const double computed_cols = kept_direct ? Q : col_tiles * c.ow_block;
  const double flops = workload.flops();
  const double oc_blocks = padded_k / ob;
  const double outer = s.N * (c.loop_order == ConvLoopOrder::kOcOuter ? oc_blocks : row_tiles);
  const double inner = c.loop_order == ConvLoopOrder::kOcOuter ? row_tiles : oc_blocks;
  const double units = c.parallel == ConvParallel::kOuter ? outer : outer * inner;
  const double per_thread = std::ceil(units / c.threads);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double input_rows = (c.oh_block - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  const double input_cols = (c.ow_block - 1) * s.stride + (s.S - 1) * s.dilation + 1;
  return {
      {"fma_per_load", pixels * c.oc_vectors / (pixels + c.oc_vectors)},
      {"register_use", static_cast<double>(tile_registers(c.oh_block, c.ow_block, c.oc_vectors, c.lanes)) /
                           unit.registers},
      {"filter_block_over_l2", 4.0 * pass_c * s.R * s.S * ob / l2},
      {"tile_input_over_l1", 4.0 * c.ic_block * input_rows * input_cols / l1},
      {"channel_padding_waste", 1.0 - static_cast<double>(s.C) / padded_c},
      {"edge_waste", 1.0 - P * Q * static_cast<double>(s.K) / (row_tiles * c.oh_block * computed_cols * padded_k)},
      {"transform_floats_per_flop", s.N * padded_c * (s.H + 2 * s.pad) * (s.W + 2 * s.pad) / flops},
      {"load_imbalance", per_thread * c.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(c.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(flops / c.threads)},
      {"is_gemm", 0.0},
  };
}

std::vector<std::pair<std::string, double>> gemm_features(const Workload& workload, const DeviceInfo& device,
                                                          const Conv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const GemmConfig g = cpu::conv2d_gemm_config(c);
  const GemmExtents e = gemm_extents(s);
  const VectorUnit unit = vector_unit(device);
  const double M = static_cast<double>(e.M), N = static_cast<double>(e.N), depth = static_cast<double>(e.depth);
  const double flops = workload.flops(), vectors = static_cast<double>(g.nr) / g.lanes;
  const double mc = std::min<double>(g.mc, round_up(e.M, g.mr)), kc = std::min<double>(g.kc, depth);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double tiles_m = std::ceil(M / g.mr), tiles_n = std::ceil(N / g.nr);
  const double units = g.parallel == cpu::ParallelLoop::kIc ? tiles_m : tiles_n;
  const double per_thread = std::ceil(units / g.threads);
  // B (the columns) is packed from the image once per row block with ic_pc_jc, else once.
  const double b_packs = g.loop_order == cpu::LoopOrder::kIcPcJc ? std::ceil(M / mc) : 1.0;
  return {
      {"fma_per_load", g.mr * vectors / (g.mr + vectors)},
      {"register_use", (g.mr * vectors + vectors + 1) / unit.registers},
      {"filter_block_over_l2", 4.0 * mc * kc / l2},
      {"tile_input_over_l1", 4.0 * kc * (g.mr + g.nr) / l1},
      {"channel_padding_waste", 1.0 - M / (tiles_m * g.mr)},
      {"edge_waste", 1.0 - M * N / (tiles_m * g.mr * tiles_n * g.nr)},
      {"transform_floats_per_flop", depth * N * b_packs / flops},
      {"load_imbalance", per_thread * g.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(g.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(flops / g.threads)},
      {"is_gemm", 1.0},
  };
}

// What conv2d.cpu and conv2d_gemm.cpu share: the op, the kernel header they instantiate (one
// Conv2dConfig whose `algorithm` says which kernel runs), and so the candidate source, the
// features and one apply-best table, kConv2d, whose rows may come from either template.
class CpuConv2dTemplate : public KernelTemplate {
 public:
  Op op() const override { return Op::kConv2d; }
  std::string_view backend() const override { return "cpu"; }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const Conv2dShape& shape = workload.conv();
    if (shape.groups != 1) {
      throw std::invalid_argument(name() + ": groups = " + std::to_string(shape.groups) +
                                  " is not supported (groups = 1; depthwise is its own op)");
    }
    const VectorUnit unit = vector_unit(device);
    check_kept_layout(name(), workload, unit);
    ss::ConfigSpace space;
    add_knobs(space, workload, device, unit);
    return space;
  }

  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    ss::Config config = algorithm_default(workload, device, space);
    if (const std::string why = space.first_violation(config); !why.empty()) {
      throw std::logic_error(name() + ": default config breaks '" + why + "'");
    }
    return config;
  }

 protected:
  virtual void add_knobs(ss::ConfigSpace& space, const Workload& workload, const DeviceInfo& device,
                         const VectorUnit& unit) const = 0;
  virtual ss::Config algorithm_default(const Workload& workload, const DeviceInfo& device,
                                       const ss::ConfigSpace& space) const = 0;

  // Both templates were one, "conv2d.cpu", whose records name the algorithm in the knob
  // `algorithm`: a record of that name is the gemm template's when the knob says "gemm".
  static bool is_old_gemm_record(std::string_view template_name, const nlohmann::json& config) {
    return template_name == kDirectName && config.is_object() && config.value(kAlgorithm, "") == kAlgorithmNames[1];
  }
  static constexpr const char* kDirectName = "conv2d.cpu";

 public:
  // The same names for both algorithms (the cost model learns across the layers of a
  // template): register-tile intensity, footprints against the caches, layout, packing and
  // padding overheads, edge waste and load balance.
  std::vector<std::pair<std::string, double>> derived_features(
      const Workload& workload, const DeviceInfo& device,
      const ss::ConfigView& config) const override {
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    return c.algorithm == ConvAlgorithm::kGemm ? gemm_features(workload, device, c)
                                               : direct_features(workload, device, c);
  }

  // What is timed and what is packed once: conv_candidate_source.
  std::string emit_source(const Workload& workload, const DeviceInfo&,
                          const ss::ConfigView& config) const override {
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    const cpu::Conv2dDims dims = cpu::conv2d_dims(workload);
    // The filter width (when unrolled) and the stride as constants of the kernel.
    const std::string fixed_s = c.unroll_kw ? std::to_string(dims.S) : "0";
    return conv_candidate_source(name(), "conv2d", workload, cpu::conv2d_dims_literal(dims),
                                 cpu::conv2d_config_literal(c), fixed_s + ", " + std::to_string(dims.stride));
  }

  std::optional<TableForm> table_form() const override {
    return TableForm{"optune/kernels/cpu/tuned_conv2d.hpp", "optune::kernels::cpu::TunedConv2d",
                     "optune::kernels::cpu::Conv2dConfig", "kConv2d",
                     "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
                     "// NCHW output = conv2d(NCHW input, OIHW filter), f32, with the tuned config of the shape\n"
                     "// (else the default config). Returns whether a tuned config ran.\n"
                     "inline bool conv2d(const kernels::cpu::Conv2dDims& dims, const float* input,\n"
                     "                   const float* filter, float* output) {\n"
                     "  return kernels::cpu::conv2d_tuned<tuned::kConv2d, tuned::kConv2dDefault>(dims, input,\n"
                     "                                                                          filter, output);\n"
                     "}\n"
                     "// The same on a kept NCHW[Block]c layout (input and output), e.g. conv2d_nchwc<8>.\n"
                     "template <int Block>\n"
                     "bool conv2d_nchwc(const kernels::cpu::Conv2dDims& dims, const float* input, const float* filter,\n"
                     "                  float* output) {\n"
                     "  return kernels::cpu::conv2d_nchwc_tuned<tuned::kConv2d, tuned::kConv2dDefault, Block>(\n"
                     "      dims, input, filter, output);\n"
                     "}\n"
                     "// A network's first layer: NCHW input (the image), NCHW[Block]c output.\n"
                     "template <int Block>\n"
                     "bool conv2d_nchw_to_nchwc(const kernels::cpu::Conv2dDims& dims, const float* input,\n"
                     "                          const float* filter, float* output) {\n"
                     "  return kernels::cpu::conv2d_nchw_to_nchwc_tuned<tuned::kConv2d, tuned::kConv2dDefault, Block>(\n"
                     "      dims, input, filter, output);\n"
                     "}\n"};
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& config) const override {
    return "{" + cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ", " + config_literal(config) + ", " +
           std::to_string(workload.layout_block) + (workload.nchw_input ? ", true" : "") + "}";
  }

  std::string config_literal(const ss::ConfigView& config) const override {
    return cpu::conv2d_config_literal(cpu::conv2d_config_from_view(config));
  }
};

// The register-tiled direct kernel: every layer of groups = 1, NCHW or a kept NCHW[b]c layout.
// Its name is the one the single template had, so records of direct configs read as before.
class CpuConv2dDirectTemplate final : public CpuConv2dTemplate {
 public:
  std::string name() const override { return kDirectName; }
  int priority() const override { return 0; }
  bool reads_record(std::string_view template_name, const nlohmann::json& config) const override {
    return template_name == kDirectName && !is_old_gemm_record(template_name, config);
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

const KernelTemplate& cpu_conv2d_template() {
  static const CpuConv2dDirectTemplate instance;
  return instance;
}

const KernelTemplate& cpu_conv2d_gemm_template() {
  static const CpuConv2dGemmTemplate instance;
  return instance;
}

namespace cpu {

Conv2dConfig conv2d_config_from_view(const search_space::ConfigView& v) {
  Conv2dConfig c;
  c.lanes = parse_int(v.choice(kLanes));
  c.threads = static_cast<int>(v.integer(kThreads));
  if (v.choice(kAlgorithm) == kAlgorithmNames[1]) {
    c.algorithm = ConvAlgorithm::kGemm;
    c.gemm.mr = static_cast<int>(v.integer(kGemmMr));
    c.gemm.nr = static_cast<int>(v.integer(kGemmNr));
    c.gemm.mc = parse_int(v.choice(kGemmMc));
    c.gemm.nc = parse_int(v.choice(kGemmNc));
    c.gemm.kc = parse_int(v.choice(kGemmKc));
    c.gemm.unroll = parse_int(v.choice(kGemmUnrollK));
    const auto& orders = kGemmLoopOrderNames;
    c.gemm.loop_order = static_cast<cpu::LoopOrder>(std::find(orders.begin(), orders.end(), v.choice(kGemmLoopOrder)) -
                                                    orders.begin());
    const auto& loops = kGemmParallelNames;
    c.gemm.parallel = static_cast<cpu::ParallelLoop>(
        std::find(loops.begin(), loops.end(), v.choice(kGemmParallelLoop)) - loops.begin());
    c.gemm = conv2d_gemm_config(c);
    return c;
  }
  c.oc_vectors = static_cast<int>(v.integer(kOcVectors));
  c.ic_block = parse_int(v.choice(kIcBlock));
  c.ow_block = static_cast<int>(v.integer(kOwBlock));
  c.oh_block = static_cast<int>(v.integer(kOhBlock));
  c.unroll_kw = v.flag(kUnrollKw);
  const auto order = std::find(kLoopOrderNames.begin(), kLoopOrderNames.end(), v.choice(kLoopOrder));
  c.loop_order = static_cast<ConvLoopOrder>(order - kLoopOrderNames.begin());
  const auto parallel = std::find(kParallelNames.begin(), kParallelNames.end(), v.choice(kParallel));
  c.parallel = static_cast<ConvParallel>(parallel - kParallelNames.begin());
  if (v.has(kIcChunk)) c.ic_chunk = ic_chunk_value(v.choice(kIcChunk));
  return c;
}

std::string conv2d_config_literal(const Conv2dConfig& c) {
  static const char* const kOrders[] = {"kOcOuter", "kRowOuter"};
  static const char* const kSplits[] = {"kOuter", "kFused"};
  auto i = [](int x) { return std::to_string(x); };
  if (c.algorithm == ConvAlgorithm::kGemm) {  // the direct kernel's fields keep their defaults
    return "optune::kernels::cpu::Conv2dConfig{.lanes = " + i(c.lanes) + ", .threads = " + i(c.threads) +
           ", .algorithm = optune::kernels::cpu::ConvAlgorithm::kGemm, .gemm = " +
           gemm_config_literal(conv2d_gemm_config(c)) + "}";
  }
  return "optune::kernels::cpu::Conv2dConfig{.lanes = " + i(c.lanes) +
         ", .oc_vectors = " + i(c.oc_vectors) + ", .ic_block = " + i(c.ic_block) +
         ", .ow_block = " + i(c.ow_block) + ", .oh_block = " + i(c.oh_block) +
         ", .unroll_kw = " + (c.unroll_kw ? "true" : "false") +
         ", .loop_order = optune::kernels::cpu::ConvLoopOrder::" +
         kOrders[static_cast<int>(c.loop_order)] + ", .threads = " + i(c.threads) +
         ", .parallel = optune::kernels::cpu::ConvParallel::" + kSplits[static_cast<int>(c.parallel)] +
         (c.ic_chunk > 0 ? ", .ic_chunk = " + i(c.ic_chunk) : "") + "}";
}

Conv2dDims conv2d_dims(const Workload& workload) {
  const Conv2dShape& s = workload.conv();
  const std::int64_t K = workload.op == Op::kDepthwiseConv2d ? s.C : s.K;
  return Conv2dDims{s.N, s.C, s.H, s.W, K, s.R, s.S, s.stride, s.pad, s.dilation};
}

std::string conv2d_dims_literal(const Conv2dDims& d) {
  auto i = [](std::int64_t x) { return std::to_string(x); };
  return "optune::kernels::cpu::Conv2dDims{.N = " + i(d.N) + ", .C = " + i(d.C) + ", .H = " +
         i(d.H) + ", .W = " + i(d.W) + ", .K = " + i(d.K) + ", .R = " + i(d.R) + ", .S = " +
         i(d.S) + ", .stride = " + i(d.stride) + ", .pad = " + i(d.pad) +
         ", .dilation = " + i(d.dilation) + "}";
}

}  // namespace cpu
}  // namespace optune::kernels
