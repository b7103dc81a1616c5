// What the CPU conv2d templates share (conv2d_template.cpp, conv2d_direct_template.cpp,
// conv2d_gemm_template.cpp): the knob names, stored in records, the helpers both spaces and
// defaults use, and the base class that instantiates the one kernel header both tune
// (optune/kernels/cpu/conv2d.hpp, whose Conv2dConfig names the algorithm).
//
// "conv2d.cpu" is the register-tiled direct kernel (lanes, oc_vectors, ic_block, ow_block,
// oh_block, unroll_kw, loop_order, threads, parallel; on layers that read a kept layout also
// ic_chunk) and applies to every layer; "conv2d_gemm.cpu" runs the layer as a GEMM (lanes, threads
// and the gemm_* knobs of its blocks, micro-tile, unroll, loop order and parallel loop) and applies
// to the layers uses_gemm() names, where it is the default. Both keep the one-option knob
// `algorithm`, so a config says which kernel it runs, as the records of the single "conv2d.cpu"
// template, which carried both algorithms, did (those with algorithm "gemm" are read as
// conv2d_gemm.cpu's: reads_record).
// Two templates rather than both algorithms in one space: a knob of one algorithm means nothing
// to the other, and a joint space would hold each config of one algorithm thousands of times.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/conv2d_config_view.hpp"
#include "optune/kernels/cpu/gemm_config_view.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "template_support.hpp"

namespace optune::kernels::cpu_conv2d {

namespace ss = search_space;
using cpu::Conv2dConfig;
using cpu::ConvAlgorithm;
using cpu::ConvLoopOrder;
using cpu::ConvParallel;
using cpu::GemmConfig;

// Knob names: stored in records (JSON by name), so they are a contract once released.
inline constexpr const char* kLanes = "lanes";
inline constexpr const char* kOcVectors = "oc_vectors";  // output-channel block, in vectors
inline constexpr const char* kIcBlock = "ic_block";      // c of the NCHW[c]c input layout
inline constexpr const char* kOwBlock = "ow_block";      // register tile along the output width
inline constexpr const char* kOhBlock = "oh_block";      // register tile along the output height
inline constexpr const char* kUnrollKw = "unroll_kw";
inline constexpr const char* kLoopOrder = "loop_order";
inline constexpr const char* kThreads = "threads";
inline constexpr const char* kParallel = "parallel";
inline constexpr const char* kAlgorithm = "algorithm";
// Input channels per reduction pass ("all": one pass, rows as items). Only in the spaces of
// layers that read a kept layout, the kernels that read it (conv2d_nchwc.hpp: passes over bands of
// rows; conv2d_nchwc_pointwise.hpp: passes over bands of pixels), so that the other spaces, and
// the records tuned in them, stay as they were.
inline constexpr const char* kIcChunk = "ic_chunk";
// The GEMM path's knobs (GemmConfig's fields; lanes and threads are shared).
inline constexpr const char* kGemmMr = "gemm_mr";  // micro-tile rows: output channels
inline constexpr const char* kGemmNr = "gemm_nr";  // micro-tile columns: output pixels (multiple of lanes)
inline constexpr const char* kGemmMc = "gemm_mc";  // output channels per cache block
inline constexpr const char* kGemmNc = "gemm_nc";  // output pixels per cache block
inline constexpr const char* kGemmKc = "gemm_kc";  // depth (C * R * S) per cache block
inline constexpr const char* kGemmUnrollK = "gemm_unroll_k";
inline constexpr const char* kGemmLoopOrder = "gemm_loop_order";
inline constexpr const char* kGemmParallelLoop = "gemm_parallel_loop";

inline const std::vector<std::string> kIcBlockNames = {"1", "2", "4", "8", "16", "32", "64"};
inline const std::vector<std::string> kLoopOrderNames = {"oc_outer", "row_outer"};
inline const std::vector<std::string> kParallelNames = {"outer", "fused"};
inline const std::vector<std::string> kAlgorithmNames = {"direct", "gemm"};
inline const std::vector<std::string> kIcChunkNames = {"all", "32", "64", "128", "256"};
inline const std::vector<std::string> kGemmMcNames = {"16",  "24",  "32",  "48",  "64",  "72",  "96",  "120",
                                               "128", "144", "192", "240", "256", "288", "384", "512"};
inline const std::vector<std::string> kGemmNcNames = {"32",  "64",   "128",  "192",  "256",  "384",
                                               "512", "768",  "1024", "1536", "2048", "4096"};
inline const std::vector<std::string> kGemmKcNames = {"16",  "32",  "64",  "96",  "128", "160",
                                               "192", "256", "320", "384", "512", "768", "1024"};
inline const std::vector<std::string> kGemmUnrollNames = {"1", "2", "4", "8"};
// The names of gemm.cpu's loop_order and parallel_loop knobs, in LoopOrder / ParallelLoop order.
inline const std::vector<std::string> kGemmLoopOrderNames = {"jc_pc_ic", "pc_jc_ic", "ic_pc_jc"};
inline const std::vector<std::string> kGemmParallelNames = {"jc", "ic", "jr"};

inline int parse_int(const std::string& text) { return std::stoi(text); }

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// The layers that run as GEMMs: 1x1 filters (pointwise and strided downsample layers: no taps
// for a direct kernel's register tile to reuse, and at stride 1 the image is the GEMM's B as it
// is), and layers with few input channels (a network's first layer on the RGB image, e.g.
// ResNet's 7x7 stem: the direct kernel would pad 3 channels to a block of 4 or more, and the
// GEMM's reduction C * R * S = 147 is long enough for its micro-kernel).
// A layer on a kept NCHW[b]c layout always runs direct: that kernel reads the layout as it is,
// while the GEMM path would need its columns packed from it.
inline bool uses_gemm(const Workload& workload) {
  const Conv2dShape& shape = workload.conv();
  return workload.layout_block == kLayoutNchw && ((shape.R == 1 && shape.S == 1) || shape.C <= 4);
}

// The GEMM path's view of a layer: out[M = K][N = P * Q] = filter[M][depth = C * R * S] x columns.
struct GemmExtents {
  std::int64_t M, N, depth;
};
inline GemmExtents gemm_extents(const Conv2dShape& s) { return {s.K, s.out_h() * s.out_w(), s.C * s.R * s.S}; }

// Register tile accumulators, one filter vector per output-channel vector and a broadcast; the
// hand-scheduled AVX2 tile of 3 pixels x 4 vectors of 8 (conv_tap_avx2_3x4 in conv2d.hpp) holds
// its 3 broadcasts and one filter vector instead.
inline std::int64_t tile_registers(std::int64_t oh, std::int64_t ow, std::int64_t oc_vectors, std::int64_t lanes) {
  if (lanes == 8 && oc_vectors == 4 && oh * ow == 3) return 12 + 3 + 1;
  return oh * ow * oc_vectors + oc_vectors + 1;
}

// A 1x1 layer without padding that reads a kept layout: conv2d_nchwc runs it as a GEMM over the
// pixels of a plane (conv2d_nchwc_pointwise.hpp), strided ones on a compacted copy. Its tiles are
// runs of pixels, so oh_block means nothing there (fixed to 1), and it has the ic_chunk knob.
inline bool kept_pointwise(const Workload& workload) {
  const Conv2dShape& s = workload.conv();
  return workload.input_layout_block() != kLayoutNchw && s.R == 1 && s.S == 1 && s.pad == 0;
}

inline int ic_chunk_value(const std::string& name) { return name == kIcChunkNames[0] ? 0 : parse_int(name); }

inline std::vector<std::string> lane_names(const VectorUnit& unit) {
  std::vector<std::string> lanes;
  for (int l : unit.lanes) lanes.push_back(std::to_string(l));
  return lanes;
}

// Sets `knob` of `config` to the first option that satisfies `wanted`, or throws.
inline void set_default(const ss::ConfigSpace& space, ss::Config& config, const char* knob,
                 const std::function<bool(const ss::ConfigView&)>& wanted) {
  if (find_option(space, knob, wanted, config) < 0) {
    throw std::logic_error(std::string("conv2d.cpu: default has no option for ") + knob);
  }
}

// What conv2d.cpu and conv2d_gemm.cpu share: the op, the kernel header they instantiate (one
// Conv2dConfig whose `algorithm` says which kernel runs), and so the candidate source, the
// features and one apply-best table, kConv2d, whose rows may come from either template.
class CpuConv2dTemplate : public KernelTemplate {
 public:
  Op op() const override { return Op::kConv2d; }
  std::string_view backend() const override { return "cpu"; }
  // f16 and bf16 on the float32 kernels, widened (conv_candidate_source); i8 is conv2d_int8.cpu's.
  std::vector<DataType> dtypes() const override { return {DataType::kF32, DataType::kF16, DataType::kBF16}; }
  bool applies(const Workload& workload, const DeviceInfo&) const override { return has_cpu_layout(workload); }

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
  // The same names for both algorithms (the cost model learns across the layers of both
  // templates): register-tile intensity, footprints against the caches, layout, packing and
  // padding overheads, edge waste and load balance.
  std::vector<std::pair<std::string, double>> derived_features(
      const Workload& workload, const DeviceInfo& device, const ss::ConfigView& config) const override;

  // What is timed and what is packed once: conv_candidate_source. Where the template takes its
  // schedule at run time (run_time_knobs), the schedule's fields stand at placeholders, so the
  // source is one for every schedule of the compiled part.
  std::string emit_source(const Workload& workload, const DeviceInfo&,
                          const ss::ConfigView& config) const override {
    Conv2dConfig c = cpu::conv2d_config_from_view(config);
    const cpu::Conv2dDims dims = cpu::conv2d_dims(workload);
    // The filter width (when unrolled) and the stride as constants of the kernel.
    const std::string fixed_s = c.unroll_kw ? std::to_string(dims.S) : "0";
    ConvRunTimeKnobs run_time;
    if (!run_time_knobs().empty()) {
      c.run_time_schedule = true;
      c.threads = 1;
      c.loop_order = cpu::ConvLoopOrder::kOcOuter;
      c.parallel = cpu::ConvParallel::kOuter;
      run_time.set_knobs = conv_schedule_set_knobs();
      run_time.threads = "conv_detail::run_time_schedule.threads";
    }
    return conv_candidate_source(name(), "conv2d", workload, operator_operands(workload), cpu::conv2d_dims_literal(dims),
                                 cpu::conv2d_config_literal(c), fixed_s + ", " + std::to_string(dims.stride), run_time);
  }

  std::vector<TableForm> table_forms() const override {
    const TableForm f32{"optune/kernels/cpu/tuned_conv2d.hpp", "optune::kernels::cpu::TunedConv2d",
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
    // bf16's widened table has a name of its own: conv2d_bf16.cpu's is kConv2dBf16.
    return {f32, widened_conv_form(f32, DataType::kF16, "kConv2dF16", "conv2d"),
            widened_conv_form(f32, DataType::kBF16, "kConv2dBf16Widened", "conv2d")};
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& config) const override {
    return fmt::format("{{{}, {}, {}{}}}", cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)), config_literal(config),
                       workload.layout_block, workload.nchw_input ? ", true" : "");
  }

  std::string table_range_row(const Workload& low, const Workload& high, const DeviceInfo&,
                              const ss::ConfigView& config) const override {
    return fmt::format("{{{}, {}, {}, {}, {}}}", cpu::conv2d_dims_literal(cpu::conv2d_dims(low)), config_literal(config),
                       low.layout_block, low.nchw_input ? "true" : "false",
                       cpu::conv2d_dims_literal(cpu::conv2d_dims(high)));
  }

  std::string config_literal(const ss::ConfigView& config) const override {
    return cpu::conv2d_config_literal(cpu::conv2d_config_from_view(config));
  }
};

}  // namespace optune::kernels::cpu_conv2d
