// The "conv2d.cpu" template: the tuning space of the header-only CPU conv2d kernel
// (optune/kernels/cpu/conv2d.hpp) for one workload and device, its default config, the
// candidate source that instantiates the kernel with a config, the features the cost model
// learns from, and the rows of `optune apply-best` tables. The knobs map one to one onto
// Conv2dConfig's fields; conv2d_config_from_view() is the only place that reads them back.
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
#include "optune/kernels/kernel_template.hpp"
#include "cpu_template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using cpu::Conv2dConfig;
using cpu::ConvLoopOrder;
using cpu::ConvParallel;

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

const std::vector<std::string> kIcBlockNames = {"1", "2", "4", "8", "16", "32", "64"};
const std::vector<std::string> kLoopOrderNames = {"oc_outer", "row_outer"};
const std::vector<std::string> kParallelNames = {"outer", "fused"};

int parse_int(const std::string& text) { return std::stoi(text); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t next_power_of_two(std::int64_t value) {
  std::int64_t p = 1;
  while (p < value) p *= 2;
  return p;
}

// Register tile accumulators, one filter vector per output-channel vector and a broadcast.
std::int64_t tile_registers(std::int64_t oh, std::int64_t ow, std::int64_t oc_vectors) {
  return oh * ow * oc_vectors + oc_vectors + 1;
}

void add_knobs(ss::ConfigSpace& space, const DeviceInfo& device, const VectorUnit& unit) {
  std::vector<std::string> lanes;
  for (int l : unit.lanes) lanes.push_back(std::to_string(l));
  space.add(ss::ChoiceKnob{kLanes, lanes});
  space.add(ss::IntRangeKnob{kOcVectors, 1, 4, 1});
  space.add(ss::ChoiceKnob{kIcBlock, kIcBlockNames});
  space.add(ss::IntRangeKnob{kOwBlock, 1, unit.registers == 32 ? 28 : 14, 1});
  space.add(ss::IntRangeKnob{kOhBlock, 1, 4, 1});
  space.add(ss::BoolKnob{kUnrollKw});
  space.add(ss::ChoiceKnob{kLoopOrder, kLoopOrderNames});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::ChoiceKnob{kParallel, kParallelNames});
}

void add_constraints(ss::ConfigSpace& space, const Conv2dShape& shape, const VectorUnit& unit) {
  const int registers = unit.registers;
  const std::int64_t P = shape.out_h(), Q = shape.out_w();
  space.add_constraint("the register tile, filter vectors and a broadcast fit the vector registers",
                       [registers](const ss::ConfigView& v) {
                         return tile_registers(v.integer(kOhBlock), v.integer(kOwBlock),
                                               v.integer(kOcVectors)) <= registers;
                       });
  space.add_constraint("the output-channel block is not a whole vector past K",
                       [shape](const ss::ConfigView& v) {
                         return (v.integer(kOcVectors) - 1) * parse_int(v.choice(kLanes)) < shape.K;
                       });
  space.add_constraint("ic_block is not past the next power of two of C",
                       [shape](const ss::ConfigView& v) {
                         return parse_int(v.choice(kIcBlock)) <= next_power_of_two(shape.C);
                       });
  space.add_constraint("the register tile is not past the output", [P, Q](const ss::ConfigView& v) {
    return v.integer(kOwBlock) <= Q && v.integer(kOhBlock) <= P;
  });
  // With one thread the split means nothing: keep one of the equivalent configs.
  space.add_constraint("one thread splits no loop (parallel = outer)", [](const ss::ConfigView& v) {
    return v.integer(kThreads) > 1 || v.choice(kParallel) == kParallelNames[0];
  });
}

class CpuConv2dTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "conv2d.cpu"; }
  Op op() const override { return Op::kConv2d; }
  Backend backend() const override { return Backend::kCpu; }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const Conv2dShape& shape = workload.conv();
    if (shape.groups != 1) {
      throw std::invalid_argument("conv2d.cpu: groups = " + std::to_string(shape.groups) +
                                  " is not supported (groups = 1; depthwise is its own op)");
    }
    const VectorUnit unit = vector_unit(device);
    ss::ConfigSpace space;
    add_knobs(space, device, unit);
    add_constraints(space, shape, unit);
    return space;
  }

  // Untuned, TVM's x86 default in spirit: widest vectors, two vectors of output channels (one
  // if K fits one), input channels in blocks of 8 (fewer for narrow inputs), the widest width
  // tile the registers allow (6 on AVX2, 12 with 32 registers), one row, filter width unrolled,
  // all cores on the fused loop.
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    const Conv2dShape& shape = workload.conv();
    const VectorUnit unit = vector_unit(device);
    const int lanes = unit.lanes.back();
    const std::int64_t oc_vectors = shape.K <= lanes ? 1 : 2;
    const std::int64_t ic_block = std::min<std::int64_t>(8, next_power_of_two(shape.C));
    const std::int64_t widest = (unit.registers - oc_vectors - 1) / oc_vectors;
    const std::int64_t ow_block = std::min<std::int64_t>({widest, 12, shape.out_w()});
    const std::int64_t threads = std::max(1, device.cores);
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
      if (find_option(space, knob, wanted, config) < 0) {
        throw std::logic_error(std::string("conv2d.cpu: default has no option for ") + knob);
      }
    };
    set(kLanes, [&](const ss::ConfigView& v) { return parse_int(v.choice(kLanes)) == lanes; });
    set(kOcVectors, [&](const ss::ConfigView& v) { return v.integer(kOcVectors) == oc_vectors; });
    set(kIcBlock, [&](const ss::ConfigView& v) { return parse_int(v.choice(kIcBlock)) == ic_block; });
    set(kOwBlock, [&](const ss::ConfigView& v) { return v.integer(kOwBlock) == ow_block; });
    set(kOhBlock, [](const ss::ConfigView& v) { return v.integer(kOhBlock) == 1; });
    set(kUnrollKw, [](const ss::ConfigView& v) { return v.flag(kUnrollKw); });
    set(kLoopOrder, [](const ss::ConfigView& v) { return v.choice(kLoopOrder) == "oc_outer"; });
    set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
    set(kParallel, [&](const ss::ConfigView& v) {
      return v.choice(kParallel) == (threads > 1 ? "fused" : "outer");
    });
    if (const std::string why = space.first_violation(config); !why.empty()) {
      throw std::logic_error("conv2d.cpu: default config breaks '" + why + "'");
    }
    return config;
  }

  // Register-tile intensity, footprints against the caches, layout and padding overheads, edge
  // waste and load balance.
  std::vector<std::pair<std::string, double>> derived_features(
      const Workload& workload, const DeviceInfo& device,
      const ss::ConfigView& config) const override {
    const Conv2dShape& s = workload.conv();
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    const VectorUnit unit = vector_unit(device);
    const double P = static_cast<double>(s.out_h()), Q = static_cast<double>(s.out_w());
    const double ob = c.oc_vectors * c.lanes, pixels = c.oh_block * c.ow_block;
    const double padded_c = static_cast<double>(ceil_div(s.C, c.ic_block) * c.ic_block);
    const double padded_k = static_cast<double>(ceil_div(s.K, static_cast<std::int64_t>(ob))) * ob;
    const double row_tiles = std::ceil(P / c.oh_block), col_tiles = std::ceil(Q / c.ow_block);
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
        {"register_use", static_cast<double>(tile_registers(c.oh_block, c.ow_block, c.oc_vectors)) /
                             unit.registers},
        {"filter_block_over_l2", 4.0 * padded_c * s.R * s.S * ob / l2},
        {"tile_input_over_l1", 4.0 * c.ic_block * input_rows * input_cols / l1},
        {"channel_padding_waste", 1.0 - static_cast<double>(s.C) / padded_c},
        {"edge_waste", 1.0 - P * Q * static_cast<double>(s.K) /
                                 (row_tiles * c.oh_block * col_tiles * c.ow_block * padded_k)},
        {"transform_floats_per_flop", s.N * padded_c * (s.H + 2 * s.pad) * (s.W + 2 * s.pad) / flops},
        {"load_imbalance", per_thread * c.threads / units - 1.0},
        {"threads_per_core", static_cast<double>(c.threads) / std::max(1, device.cores)},
        {"log2_flops_per_thread", std::log2(flops / c.threads)},
    };
  }

  // The filter is packed on the first call and again only when the filter pointer changes:
  // weights are constants of an inference (TVM and oneDNN also prepare them outside the timed
  // call), so the steady state the runner times is the input transform plus the convolution.
  std::string emit_source(const Workload& workload, const DeviceInfo&,
                          const ss::ConfigView& config) const override {
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    const cpu::Conv2dDims dims = cpu::conv2d_dims(workload);
    const std::string fixed_s = c.unroll_kw ? std::to_string(dims.S) : "0";
    return "// optune candidate of conv2d.cpu for " + workload.key() +
           "\n"
           "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
           "#include <optune/kernels/cpu/conv2d.hpp>\n\n"
           "namespace {\n"
           "constexpr auto kDims = " + cpu::conv2d_dims_literal(dims) + ";\n"
           "constexpr auto kConfig = " + cpu::conv2d_config_literal(c) + ";\n"
           "}  // namespace\n\n"
           "extern \"C\" void " + std::string(kCandidateSymbol) +
           "(const float* const* inputs, float* output) {\n"
           "  using namespace optune::kernels::cpu;\n"
           "  static AlignedBuffer packed;\n"
           "  static const float* packed_from = nullptr;\n"
           "  if (packed_from != inputs[1]) {\n"
           "    conv2d_pack_filter<kConfig>(kDims, inputs[1], "
           "packed.reserve(conv2d_packed_filter_size<kConfig>(kDims)));\n"
           "    packed_from = inputs[1];\n"
           "  }\n"
           "  conv2d_packed<kConfig, " + fixed_s + ">(kDims, inputs[0], packed.data(), output);\n"
           "}\n";
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
                     "}\n"};
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& config) const override {
    return "{" + cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ", " +
           config_literal(config) + "}";
  }

  std::string config_literal(const ss::ConfigView& config) const override {
    return cpu::conv2d_config_literal(cpu::conv2d_config_from_view(config));
  }
};

}  // namespace

const KernelTemplate& cpu_conv2d_template() {
  static const CpuConv2dTemplate instance;
  return instance;
}

namespace cpu {

Conv2dConfig conv2d_config_from_view(const search_space::ConfigView& v) {
  Conv2dConfig c;
  c.lanes = parse_int(v.choice(kLanes));
  c.oc_vectors = static_cast<int>(v.integer(kOcVectors));
  c.ic_block = parse_int(v.choice(kIcBlock));
  c.ow_block = static_cast<int>(v.integer(kOwBlock));
  c.oh_block = static_cast<int>(v.integer(kOhBlock));
  c.unroll_kw = v.flag(kUnrollKw);
  const auto order = std::find(kLoopOrderNames.begin(), kLoopOrderNames.end(), v.choice(kLoopOrder));
  c.loop_order = static_cast<ConvLoopOrder>(order - kLoopOrderNames.begin());
  c.threads = static_cast<int>(v.integer(kThreads));
  const auto parallel = std::find(kParallelNames.begin(), kParallelNames.end(), v.choice(kParallel));
  c.parallel = static_cast<ConvParallel>(parallel - kParallelNames.begin());
  return c;
}

std::string conv2d_config_literal(const Conv2dConfig& c) {
  static const char* const kOrders[] = {"kOcOuter", "kRowOuter"};
  static const char* const kSplits[] = {"kOuter", "kFused"};
  auto i = [](int x) { return std::to_string(x); };
  return "optune::kernels::cpu::Conv2dConfig{.lanes = " + i(c.lanes) +
         ", .oc_vectors = " + i(c.oc_vectors) + ", .ic_block = " + i(c.ic_block) +
         ", .ow_block = " + i(c.ow_block) + ", .oh_block = " + i(c.oh_block) +
         ", .unroll_kw = " + (c.unroll_kw ? "true" : "false") +
         ", .loop_order = optune::kernels::cpu::ConvLoopOrder::" +
         kOrders[static_cast<int>(c.loop_order)] + ", .threads = " + i(c.threads) +
         ", .parallel = optune::kernels::cpu::ConvParallel::" +
         kSplits[static_cast<int>(c.parallel)] + "}";
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
