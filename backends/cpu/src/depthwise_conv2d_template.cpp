// The "depthwise_conv2d.cpu" template: the tuning space of the header-only CPU depthwise conv2d
// kernel (optune/kernels/cpu/depthwise_conv2d.hpp), its default config, candidate source,
// cost-model features and apply-best rows. The knobs map one to one onto DepthwiseConv2dConfig;
// two algorithms ("rows" on NCHW, "blocked" on NCHW[c]c), one per layer shape (uses_blocked);
// depthwise_conv2d_config_from_view() is the only place that reads them back.
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
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using cpu::DepthwiseAlgorithm;
using cpu::DepthwiseConv2dConfig;

// Knob names: stored in records (JSON by name), so they are a contract once released.
constexpr const char* kAlgorithm = "algorithm";   // rows or blocked, by the layer's shape
constexpr const char* kLanes = "lanes";
constexpr const char* kOwVectors = "ow_vectors";  // rows: register tile along the output width, in vectors
constexpr const char* kCVectors = "c_vectors";    // blocked: channel block, in vectors
constexpr const char* kOwBlock = "ow_block";      // blocked: register tile along the output width, in pixels
constexpr const char* kOhBlock = "oh_block";      // register tile along the output height, in rows
constexpr const char* kUnrollKw = "unroll_kw";
constexpr const char* kThreads = "threads";

const std::vector<std::string> kAlgorithmNames = {"rows", "blocked"};

int parse_int(const std::string& text) { return std::stoi(text); }

// Layers whose output rows are narrower than two vectors (7x7 and 14x14 outputs) take the
// channel-blocked algorithm: vectors along such rows would be mostly edge, and each plane too
// small to amortise its copy. Wider layers take the rows algorithm, with no layout transform.
// A layer on a kept NCHW[b]c layout is always blocked: that is its layout.
bool uses_blocked(const Workload& workload, const VectorUnit& unit) {
  return workload.layout_block != kLayoutNchw || workload.conv().out_w() < 2 * unit.lanes.back();
}

// The lanes a space offers: the layout's block on a kept layout, else every width the ISA has.
std::vector<std::string> lane_names(const Workload& workload, const VectorUnit& unit) {
  if (workload.layout_block != kLayoutNchw) return {std::to_string(workload.layout_block)};
  std::vector<std::string> lanes;
  for (int l : unit.lanes) lanes.push_back(std::to_string(l));
  return lanes;
}

// Accumulators, the weights and one input vector in flight.
std::int64_t rows_tile_registers(std::int64_t oh, std::int64_t ow_vectors) { return oh * ow_vectors + 2; }
std::int64_t blocked_tile_registers(std::int64_t oh, std::int64_t ow, std::int64_t c_vectors) {
  return oh * ow * c_vectors + c_vectors + 1;
}

void add_common_knobs(ss::ConfigSpace& space, const Workload& workload, const DeviceInfo& device,
                      const VectorUnit& unit) {
  space.add(ss::ChoiceKnob{kAlgorithm, {kAlgorithmNames[uses_blocked(workload, unit) ? 1 : 0]}});
  space.add(ss::ChoiceKnob{kLanes, lane_names(workload, unit)});
  space.add(ss::BoolKnob{kUnrollKw});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
}

void add_rows_space(ss::ConfigSpace& space, const Conv2dShape& shape, const VectorUnit& unit) {
  const int registers = unit.registers;
  const std::int64_t P = shape.out_h(), Q = shape.out_w();
  space.add(ss::IntRangeKnob{kOwVectors, 1, 8, 1});
  space.add(ss::IntRangeKnob{kOhBlock, 1, 8, 1});
  space.add_constraint("the register tile, a weight and an input vector fit the registers",
                       [registers](const ss::ConfigView& v) {
                         return rows_tile_registers(v.integer(kOhBlock), v.integer(kOwVectors)) <= registers;
                       });
  space.add_constraint("the register tile is not a whole vector past the output width or past its height",
                       [P, Q](const ss::ConfigView& v) {
                         return (v.integer(kOwVectors) - 1) * parse_int(v.choice(kLanes)) < Q &&
                                v.integer(kOhBlock) <= P;
                       });
}

void add_blocked_space(ss::ConfigSpace& space, const Conv2dShape& shape, const VectorUnit& unit) {
  const int registers = unit.registers;
  const std::int64_t P = shape.out_h(), Q = shape.out_w(), C = shape.C;
  space.add(ss::IntRangeKnob{kCVectors, 1, 4, 1});
  space.add(ss::IntRangeKnob{kOwBlock, 1, registers == 32 ? 28 : 14, 1});
  space.add(ss::IntRangeKnob{kOhBlock, 1, 4, 1});
  space.add_constraint("the register tile, filter vectors and an input vector fit the registers",
                       [registers](const ss::ConfigView& v) {
                         return blocked_tile_registers(v.integer(kOhBlock), v.integer(kOwBlock),
                                                       v.integer(kCVectors)) <= registers;
                       });
  space.add_constraint("the channel block is not a whole vector past C", [C](const ss::ConfigView& v) {
    return (v.integer(kCVectors) - 1) * parse_int(v.choice(kLanes)) < C;
  });
  space.add_constraint("the register tile is not past the output", [P, Q](const ss::ConfigView& v) {
    return v.integer(kOwBlock) <= Q && v.integer(kOhBlock) <= P;
  });
}

std::vector<std::pair<std::string, double>> rows_features(const Workload& workload, const DeviceInfo& device,
                                                          const DepthwiseConv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const VectorUnit unit = vector_unit(device);
  const double P = static_cast<double>(s.out_h()), Q = static_cast<double>(s.out_w());
  const double tile_cols = c.ow_vectors * c.lanes;
  const double row_tiles = std::ceil(P / c.oh_block), col_tiles = std::ceil(Q / tile_cols);
  const double units = static_cast<double>(s.N * s.C);
  const double per_thread = std::ceil(units / c.threads);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double padded_rows = (row_tiles * c.oh_block - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  const double plane = 4.0 * padded_rows * (col_tiles * tile_cols * s.stride + (s.S - 1) * s.dilation);
  const double input_rows = (c.oh_block - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  return {
      {"register_use", static_cast<double>(rows_tile_registers(c.oh_block, c.ow_vectors)) / unit.registers},
      {"tile_input_over_l1", 4.0 * input_rows * s.stride * tile_cols / l1},
      {"block_plane_over_l2", plane / l2},
      {"channel_padding_waste", 0.0},
      {"edge_waste", 1.0 - P * Q / (row_tiles * c.oh_block * col_tiles * tile_cols)},
      {"load_imbalance", per_thread * c.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(c.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(workload.flops() / c.threads)},
      {"is_blocked", 0.0},
  };
}

std::vector<std::pair<std::string, double>> blocked_features(const Workload& workload, const DeviceInfo& device,
                                                             const DepthwiseConv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const VectorUnit unit = vector_unit(device);
  const double P = static_cast<double>(s.out_h()), Q = static_cast<double>(s.out_w());
  const double cb = c.c_vectors * c.lanes;
  const double blocks = std::ceil(s.C / cb);
  const double row_tiles = std::ceil(P / c.oh_block), col_tiles = std::ceil(Q / c.ow_block);
  const double units = s.N * blocks;
  const double per_thread = std::ceil(units / c.threads);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double plane = 4.0 * cb * (s.H + 2 * s.pad) * (s.W + 2 * s.pad);
  const double input_rows = (c.oh_block - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  const double input_cols = (c.ow_block - 1) * s.stride + (s.S - 1) * s.dilation + 1;
  return {
      {"register_use", static_cast<double>(blocked_tile_registers(c.oh_block, c.ow_block, c.c_vectors)) /
                           unit.registers},
      {"tile_input_over_l1", 4.0 * cb * input_rows * input_cols / l1},
      {"block_plane_over_l2", plane / l2},
      {"channel_padding_waste", 1.0 - s.C / (blocks * cb)},
      {"edge_waste", 1.0 - P * Q / (row_tiles * c.oh_block * col_tiles * c.ow_block)},
      {"load_imbalance", per_thread * c.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(c.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(workload.flops() / c.threads)},
      {"is_blocked", 1.0},
  };
}

// The blocked default's tile width: the widest of 8..4 pixels that divides the output's width, so
// that no column tile is partial (MobileNet's widths are multiples of 7: 7 pixels measured
// 0.95-1.15x oneDNN on its 14x14 and 7x7 layers, 8 pixels 0.84-0.87x); else 8, or the whole row.
std::int64_t blocked_default_ow_block(std::int64_t Q) {
  for (std::int64_t w = 8; w >= 4; --w) {
    if (Q % w == 0) return w;
  }
  return std::min<std::int64_t>(8, Q);
}

// An i8 layer's sums are exact in float32 while every partial sum is an integer below 2^24:
// taps x 255 x 128 < 2^24.
constexpr std::int64_t kMaxExactInt8Taps = ((std::int64_t{1} << 24) - 1) / (255 * 128);

class CpuDepthwiseConv2dTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "depthwise_conv2d.cpu"; }
  Op op() const override { return Op::kDepthwiseConv2d; }
  std::string_view backend() const override { return "cpu"; }
  // Every dtype on the float32 kernels, widened (conv_candidate_source): a depthwise layer reads
  // each input once per tap, so it is bound by memory, not by the width of its arithmetic.
  std::vector<DataType> dtypes() const override {
    return {DataType::kF32, DataType::kF16, DataType::kBF16, DataType::kI8};
  }
  std::vector<DataType> input_dtypes(const Workload& workload, const DeviceInfo& device) const override {
    if (workload.dtype != DataType::kI8) return {};
    return {int8_activations(device), DataType::kI8};
  }

  // One space per algorithm, picked by the layer's shape (uses_blocked): the knobs of one
  // algorithm mean nothing to the other.
  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const Conv2dShape& shape = workload.conv();
    if (workload.dtype == DataType::kI8 && shape.R * shape.S > kMaxExactInt8Taps) {
      throw std::invalid_argument("depthwise_conv2d.cpu: i8 sums in float32, exact for R * S <= " +
                                  std::to_string(kMaxExactInt8Taps) + " taps, not " + workload.key());
    }
    const VectorUnit unit = vector_unit(device);
    check_kept_layout("depthwise_conv2d.cpu", workload, unit);
    ss::ConfigSpace space;
    add_common_knobs(space, workload, device, unit);
    if (uses_blocked(workload, unit)) {
      add_blocked_space(space, shape, unit);
    } else {
      add_rows_space(space, shape, unit);
    }
    // An i8 record says which signedness its activations had (as gemm_int8.cpu's do).
    if (workload.dtype == DataType::kI8) add_activations_knob(space, device);
    return space;
  }

  // Untuned: widest vectors, filter width unrolled, all cores. Rows: a tile of 4 rows x 2
  // vectors (fewer on short outputs). Blocked: one vector of channels, 4-8 pixels of a row
  // (blocked_default_ow_block).
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    const Conv2dShape& shape = workload.conv();
    const VectorUnit unit = vector_unit(device);
    const std::int64_t lanes = workload.layout_block != kLayoutNchw ? workload.layout_block : unit.lanes.back();
    const std::int64_t threads = std::max(1, device.cores);
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
      if (find_option(space, knob, wanted, config) < 0) {
        throw std::logic_error(std::string("depthwise_conv2d.cpu: default has no option for ") + knob);
      }
    };
    set(kLanes, [&](const ss::ConfigView& v) { return parse_int(v.choice(kLanes)) == lanes; });
    set(kUnrollKw, [](const ss::ConfigView& v) { return v.flag(kUnrollKw); });
    set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
    if (uses_blocked(workload, unit)) {
      const std::int64_t ow_block = blocked_default_ow_block(shape.out_w());
      set(kCVectors, [](const ss::ConfigView& v) { return v.integer(kCVectors) == 1; });
      set(kOwBlock, [&](const ss::ConfigView& v) { return v.integer(kOwBlock) == ow_block; });
      set(kOhBlock, [](const ss::ConfigView& v) { return v.integer(kOhBlock) == 1; });
    } else {
      const std::int64_t ow_vectors = std::min<std::int64_t>(2, (shape.out_w() + lanes - 1) / lanes);
      const std::int64_t oh_block = std::min<std::int64_t>(4, shape.out_h());
      set(kOwVectors, [&](const ss::ConfigView& v) { return v.integer(kOwVectors) == ow_vectors; });
      set(kOhBlock, [&](const ss::ConfigView& v) { return v.integer(kOhBlock) == oh_block; });
    }
    if (const std::string why = space.first_violation(config); !why.empty()) {
      throw std::logic_error("depthwise_conv2d.cpu: default config breaks '" + why + "'");
    }
    return config;
  }

  // The same names for both algorithms (the cost model learns across a template's layers).
  std::vector<std::pair<std::string, double>> derived_features(
      const Workload& workload, const DeviceInfo& device,
      const ss::ConfigView& config) const override {
    const DepthwiseConv2dConfig c = cpu::depthwise_conv2d_config_from_view(config);
    return c.algorithm == DepthwiseAlgorithm::kBlocked ? blocked_features(workload, device, c)
                                                       : rows_features(workload, device, c);
  }

  // As conv2d.cpu: the filter is packed on the first call (a copy: the kernel reads the taps as
  // they are); the timed steady state is the padded plane copies plus the convolution.
  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const ss::ConfigView& config) const override {
    const DepthwiseConv2dConfig c = cpu::depthwise_conv2d_config_from_view(config);
    const cpu::Conv2dDims dims = cpu::conv2d_dims(workload);
    const std::string fixed_s = c.unroll_kw ? std::to_string(dims.S) : "0";
    return conv_candidate_source("depthwise_conv2d.cpu", "depthwise_conv2d", workload,
                                 operator_operands(workload, input_dtypes(workload, device)),
                                 cpu::conv2d_dims_literal(dims), cpu::depthwise_conv2d_config_literal(c), fixed_s);
  }

  std::vector<TableForm> table_forms() const override {
    const TableForm f32{"optune/kernels/cpu/tuned_conv2d.hpp",
                     "optune::kernels::cpu::TunedDepthwiseConv2d",
                     "optune::kernels::cpu::DepthwiseConv2dConfig", "kDepthwiseConv2d",
                     "N=1,C=128,H=56,W=56,R=3,S=3,stride=1,pad=1",
                     "// Depthwise conv2d (dims.K = dims.C), NCHW, f32, with the tuned config of the shape (else\n"
                     "// the default config). Returns whether a tuned config ran.\n"
                     "inline bool depthwise_conv2d(const kernels::cpu::Conv2dDims& dims, const float* input,\n"
                     "                             const float* filter, float* output) {\n"
                     "  return kernels::cpu::depthwise_conv2d_tuned<tuned::kDepthwiseConv2d,\n"
                     "                                              tuned::kDepthwiseConv2dDefault>(\n"
                     "      dims, input, filter, output);\n"
                     "}\n"
                     "// The same on a kept NCHW[Block]c layout (input and output), e.g. depthwise_conv2d_nchwc<8>.\n"
                     "template <int Block>\n"
                     "bool depthwise_conv2d_nchwc(const kernels::cpu::Conv2dDims& dims, const float* input,\n"
                     "                            const float* filter, float* output) {\n"
                     "  return kernels::cpu::depthwise_conv2d_nchwc_tuned<tuned::kDepthwiseConv2d,\n"
                     "                                                    tuned::kDepthwiseConv2dDefault, Block>(\n"
                     "      dims, input, filter, output);\n"
                     "}\n"};
    return {f32, widened_conv_form(f32, DataType::kF16, "kDepthwiseConv2dF16", "depthwise_conv2d"),
            widened_conv_form(f32, DataType::kBF16, "kDepthwiseConv2dBf16", "depthwise_conv2d"),
            widened_conv_form(f32, DataType::kI8, "kDepthwiseConv2dInt8", "depthwise_conv2d")};
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& config) const override {
    return "{" + cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ", " +
           config_literal(config) + ", " + std::to_string(workload.layout_block) + "}";
  }

  std::string table_range_row(const Workload& low, const Workload& high, const DeviceInfo&,
                              const ss::ConfigView& config) const override {
    return "{" + cpu::conv2d_dims_literal(cpu::conv2d_dims(low)) + ", " + config_literal(config) + ", " +
           std::to_string(low.layout_block) + ", " + cpu::conv2d_dims_literal(cpu::conv2d_dims(high)) + "}";
  }

  std::string config_literal(const ss::ConfigView& config) const override {
    return cpu::depthwise_conv2d_config_literal(cpu::depthwise_conv2d_config_from_view(config));
  }
};

}  // namespace

const KernelTemplate& cpu_depthwise_conv2d_template() {
  static const CpuDepthwiseConv2dTemplate instance;
  return instance;
}

namespace cpu {

DepthwiseConv2dConfig depthwise_conv2d_config_from_view(const search_space::ConfigView& v) {
  DepthwiseConv2dConfig c;
  c.lanes = parse_int(v.choice(kLanes));
  if (v.choice(kAlgorithm) == kAlgorithmNames[1]) {
    c.algorithm = DepthwiseAlgorithm::kBlocked;
    c.c_vectors = static_cast<int>(v.integer(kCVectors));
    c.ow_block = static_cast<int>(v.integer(kOwBlock));
  } else {
    c.ow_vectors = static_cast<int>(v.integer(kOwVectors));
  }
  c.oh_block = static_cast<int>(v.integer(kOhBlock));
  c.unroll_kw = v.flag(kUnrollKw);
  c.threads = static_cast<int>(v.integer(kThreads));
  return c;
}

std::string depthwise_conv2d_config_literal(const DepthwiseConv2dConfig& c) {
  auto i = [](int x) { return std::to_string(x); };
  if (c.algorithm == DepthwiseAlgorithm::kBlocked) {
    return "optune::kernels::cpu::DepthwiseConv2dConfig{.lanes = " + i(c.lanes) + ", .oh_block = " + i(c.oh_block) +
           ", .unroll_kw = " + (c.unroll_kw ? "true" : "false") + ", .threads = " + i(c.threads) +
           ", .algorithm = optune::kernels::cpu::DepthwiseAlgorithm::kBlocked, .c_vectors = " + i(c.c_vectors) +
           ", .ow_block = " + i(c.ow_block) + "}";
  }
  return "optune::kernels::cpu::DepthwiseConv2dConfig{.lanes = " + i(c.lanes) +
         ", .ow_vectors = " + i(c.ow_vectors) +
         ", .oh_block = " + i(c.oh_block) + ", .unroll_kw = " + (c.unroll_kw ? "true" : "false") +
         ", .threads = " + i(c.threads) + "}";
}

}  // namespace cpu
}  // namespace optune::kernels
