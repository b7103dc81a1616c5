// The "conv2d_int8_direct.cpu" and "conv2d_bf16_direct.cpu" templates: int8 and bf16 conv2d on the
// NCHW16c layout a network keeps (workloads "conv2d.nchw16c.i8...", "...bf16..."), as a direct
// convolution on dot-product instructions (optune/kernels/cpu/conv2d_dot_nchwc.hpp: vpdpbusd,
// vdpbf16ps). NCHW layers keep the im2col GEMM templates (conv2d_int8.cpu, conv2d_bf16.cpu).
//   - int8 (u8 image on x86, s8 on Arm, s8 filter, int32 output): the only int8 template for a
//     kept layout. It applies where the CPU has 16-lane vectors (AVX-512), as conv2d.cpu takes
//     nchw16c only there; without VNNI it runs the header's plain C++ path.
//   - u7 (7-bit activations: a u8 image in 0..127) on nchw16c and nchw8c (the layout AVX2 code
//     keeps) on any x86 CPU with AVX2: vpmaddubsw's path where no VNNI runs the block. The
//     one-option knob `block` (8 or 16) says the layout in the record and the config (records
//     without it: 16).
//   - bf16 applies where the device has avx512_bf16, ahead of conv2d.cpu's widened float32 kernel,
//     which serves the layout everywhere else.
// Knobs: the register tile (oc_vectors x ow_block x oh_block), threads, loop order and parallel
// split, with conv2d.cpu's names (conv2d_template.hpp), so the cost model reads them alike. Where
// the CPU has AMX tiles for the type (amx_int8, amx_bf16), `amx`: the tile runs on them, oh_block
// slabs of 16 output pixels (ow_block 16) x oc_vectors blocks of 16 output channels, within 8
// tiles; a knob, not forced: small layers may still run faster on vectors.
#include <algorithm>
#include <cmath>

#include "conv2d_template.hpp"
#include "optune/kernels/cpu/amx_tiles.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

using namespace cpu_conv2d;

constexpr int kBlock = 16;  // conv2d_dot_nchwc.hpp's kDotNchwcBlock
constexpr const char* kBlockKnob = "block";

struct Tile {
  std::int64_t oc_vectors, ow, oh, threads;
  bool row_outer, fused, amx;
  std::int64_t block;  // the layout's channels a block
  bool a7;             // 7-bit activations (u7)
};

Tile tile_of(const ss::ConfigView& v) {
  return {v.integer(kOcVectors),
          v.integer(kOwBlock),
          v.integer(kOhBlock),
          v.integer(kThreads),
          v.choice(kLoopOrder) == kLoopOrderNames[1],
          v.choice(kParallel) == kParallelNames[1],
          runs_on_amx(v),
          parse_int(v.choice(kBlockKnob)),
          v.has(kActivationsKnob) && v.choice(kActivationsKnob) == "u7"};
}

// The vector registers a register tile takes, and how many there are, on the path it runs:
// AVX-512's zmm (VNNI, BF16, and the plain path sized for them) hold an output vector of 16
// channels each, plus its filter vectors and a broadcast; vpmaddubsw's ymm (u7 without VNNI for the
// block) hold 8 channels each, plus the filter's, a broadcast, the pairs' temporary and the ones.
struct TileRegisters {
  std::int64_t used, available;
};
TileRegisters tile_registers(std::int64_t oh, std::int64_t ow, std::int64_t oc_vectors, std::int64_t block,
                             bool maddubs) {
  if (!maddubs) return {oh * ow * oc_vectors + oc_vectors + 1, 32};
  const std::int64_t ymm = oc_vectors * block / 8;
  return {oh * ow * ymm + ymm + 3, 16};
}

class CpuConv2dDotNchwcTemplate final : public KernelTemplate {
 public:
  explicit CpuConv2dDotNchwcTemplate(DataType dtype) : dtype_(dtype) {}

  std::string name() const override { return int8() ? "conv2d_int8_direct.cpu" : "conv2d_bf16_direct.cpu"; }
  Op op() const override { return Op::kConv2d; }
  std::string_view backend() const override { return "cpu"; }
  std::vector<DataType> dtypes() const override {
    if (int8()) return {DataType::kI8, DataType::kU7};
    return {dtype_};
  }
  std::vector<DataType> input_dtypes(const Workload& workload, const DeviceInfo& device) const override {
    if (int8()) return {int8_activations(workload, device), DataType::kI8};
    return {DataType::kBF16, DataType::kBF16};
  }
  // As for conv2d.cpu, a kept layout is one vector of the device a pixel: nchw16c wants 16-lane
  // vectors (AVX-512; the plain C++ path that runs it elsewhere is for correctness, not tuning).
  // u7 runs nchw8c and nchw16c on any x86 CPU with AVX2 (vpmaddubsw's path, 8-lane vectors).
  bool applies(const Workload& workload, const DeviceInfo& device) const override {
    if (!int8() && !device.has_isa("avx512_bf16")) return false;
    if (workload.nchw_input || workload.conv().groups != 1) return false;
    const auto& lanes = vector_unit(device).lanes;
    if (workload.dtype == DataType::kU7 && device.has_isa("avx2"))
      return workload.layout_block == 8 || workload.layout_block == kBlock;
    return workload.layout_block == kBlock && std::find(lanes.begin(), lanes.end(), kBlock) != lanes.end();
  }
  // Ahead of conv2d.cpu (0), which widens bf16 to float32 on this layout.
  int priority() const override { return 20; }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    if (!applies(workload, device)) {
      check_kept_layout(name(), workload, vector_unit(device));  // (names the lanes nchw16c needs)
      throw std::invalid_argument(name() + ": runs conv2d layers with groups = 1 on the kept layout nchw16c" +
                                  (int8() ? " (u7 also on nchw8c, with AVX2)" : " where the CPU has avx512_bf16") +
                                  ", not " + workload.key());
    }
    const std::int64_t block = workload.layout_block;
    const bool maddubs = runs_maddubs(workload, device);
    const Conv2dShape& s = workload.conv();
    const std::int64_t P = s.out_h(), Q = s.out_w();
    ss::ConfigSpace space;
    space.add(ss::IntRangeKnob{kOcVectors, 1, 4, 1});
    space.add(ss::IntRangeKnob{kOwBlock, 1, 28, 1});
    space.add(ss::IntRangeKnob{kOhBlock, 1, 4, 1});
    space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
    space.add(ss::ChoiceKnob{kLoopOrder, kLoopOrderNames});
    space.add(ss::ChoiceKnob{kParallel, kParallelNames});
    space.add(ss::ChoiceKnob{kBlockKnob, {std::to_string(block)}});
    space.read_missing_as(kBlockKnob, std::to_string(kBlock));  // records from before the knob: nchw16c
    if (int8()) add_activations_knob(space, int8_activations(workload, device));
    if (offers_amx(workload, device)) {
      space.add(ss::BoolKnob{kAmxKnob});
      space.read_missing_as(kAmxKnob, false);  // records from before the knob ran on vectors
    }
    space.add_constraint("the register tile, filter vectors and a broadcast fit the vector registers",
                         [maddubs](const ss::ConfigView& v) {
                           const Tile t = tile_of(v);
                           const TileRegisters r = tile_registers(t.oh, t.ow, t.oc_vectors, t.block, maddubs);
                           return t.amx || r.used <= r.available;
                         });
    space.add_constraint("amx: slabs of 16 pixels (ow_block 16), oh_block slabs x oc_vectors within 8 tiles",
                         [](const ss::ConfigView& v) {
                           const Tile t = tile_of(v);
                           return !t.amx || (t.ow == 16 && t.oh <= 2 && t.oc_vectors <= 3 &&
                                             cpu::amx::tiles_of(int(16 * t.oh), int(16 * t.oc_vectors)) <= 8);
                         });
    space.add_constraint("the output-channel block is not a whole vector past K", [s, block](const ss::ConfigView& v) {
      return (v.integer(kOcVectors) - 1) * block < s.K;
    });
    space.add_constraint("ow_block is at most the output width", [Q](const ss::ConfigView& v) {
      return runs_on_amx(v) || v.integer(kOwBlock) <= Q;
    });
    space.add_constraint("oh_block is at most the output height", [P](const ss::ConfigView& v) {
      return runs_on_amx(v) || v.integer(kOhBlock) <= P;
    });
    space.add_constraint("one thread splits nothing (parallel = outer)", [](const ss::ConfigView& v) {
      return v.integer(kThreads) > 1 || v.choice(kParallel) == kParallelNames[0];
    });
    return space;
  }

  // Untuned: two output vectors, the widest row tile up to 14 pixels that divides the output width
  // (else 12, or the width), two rows where they fit the registers, all cores. On AMX (where the
  // space has the knob): two slabs of 16 pixels x two output vectors, the 2 x 2 tiles of AMX's 8. The threads split
  // rows where there are 4 row tiles a thread (each input row then serves every output-channel
  // block in cache), else output-channel blocks; dynamically over both loops where the split one
  // would leave a thread under 2 items. Measured on ResNet-18's 3x3 layers (2 cores, int8):
  // rows first was 3-30% faster on 56^2 to 14^2 outputs, channel blocks first 4-15% on 7^2.
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    const Conv2dShape& s = workload.conv();
    const std::int64_t Q = s.out_w(), P = s.out_h(), block = workload.layout_block;
    const bool maddubs = runs_maddubs(workload, device);
    // Two output vectors, but one of 16 channels in AVX2's registers (two ymm a pixel).
    const std::int64_t oc_vectors = s.K > block && !(maddubs && block == kBlock) ? 2 : 1;
    std::int64_t ow = std::min<std::int64_t>(Q, 12);
    for (std::int64_t w = std::min<std::int64_t>(Q, 14); w >= 4; --w) {
      if (Q % w == 0) {
        ow = w;
        break;
      }
    }
    // vpmaddubsw's ymm, measured on ResNet-18's stride-1 3x3 layers (AVX2 code, 2026-12-01,
    // docs/performance/lowp-cpu-conv.md): on nchw8c 2 x 2 pixels of two vectors (13 of 16
    // registers) ran 0.93-1.0x the best of 11 tiles on each layer; on nchw16c a row of 5 pixels of
    // one vector (two ymm each), the best of a 16-trial tune on three of the four layers.
    if (maddubs) ow = std::min<std::int64_t>(Q, block == 8 ? 2 : 5);
    const TileRegisters two_rows = tile_registers(2, ow, oc_vectors, block, maddubs);
    std::int64_t oh = P > 1 && two_rows.used <= two_rows.available && !(maddubs && block == kBlock) ? 2 : 1;
    const int threads = std::max(1, device.cores);
    std::int64_t row_tiles = (P + oh - 1) / oh;
    const bool amx = offers_amx(workload, device);
    if (amx) {  // run_amx's items: two slabs of the pixels numbered along rows of Qv
      ow = 16;
      oh = 2;
      const std::int64_t row = s.stride == 1 ? s.W + 2 * s.pad : (Q + 15) / 16 * 16;
      row_tiles = ((P * row + 15) / 16 + 1) / 2;
    }
    const std::int64_t oc_blocks = (s.K + block * oc_vectors - 1) / (block * oc_vectors);
    // vpmaddubsw's path keeps channel blocks outermost: rows first streamed the whole filter past
    // L1 once a row band (0.78-0.82 ms against 0.54-0.65 on ResNet-18's 56^2 to 14^2 layers,
    // nchw16c, AVX2 code, 2026-12-01).
    const bool row_outer = row_tiles >= 4 * threads && !maddubs;
    const bool fused = threads > 1 && s.N * (row_outer ? row_tiles : oc_blocks) < 2 * threads;
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
      set_default(space, config, knob, wanted);
    };
    set(kOcVectors, [&](const ss::ConfigView& v) { return v.integer(kOcVectors) == oc_vectors; });
    set(kOwBlock, [&](const ss::ConfigView& v) { return v.integer(kOwBlock) == ow; });
    set(kOhBlock, [&](const ss::ConfigView& v) { return v.integer(kOhBlock) == oh; });
    set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
    set(kLoopOrder, [&](const ss::ConfigView& v) { return v.choice(kLoopOrder) == kLoopOrderNames[row_outer ? 1 : 0]; });
    set(kParallel, [&](const ss::ConfigView& v) { return v.choice(kParallel) == kParallelNames[fused ? 1 : 0]; });
    if (amx) config.options[space.knob_index(kAmxKnob)] = 1;  // a BoolKnob's option 1 is true
    if (const std::string why = space.first_violation(config); !why.empty()) {
      throw std::logic_error(name() + ": default config breaks '" + why + "'");
    }
    return config;
  }

  // The register tile's reuse, the packed filter block against the caches, the columns and rows
  // the last tiles compute for nothing, and the items each thread gets.
  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const ss::ConfigView& view) const override {
    const Conv2dShape& s = workload.conv();
    const Tile t = tile_of(view);
    const double P = double(s.out_h()), Q = double(s.out_w());
    const double pixels = double(t.ow * t.oh), vectors = double(t.oc_vectors);
    const double element = int8() ? 1 : 2;
    const double block = double(t.block);
    const double filter_block = std::ceil(double(s.C) / block) * block * double(s.R * s.S) * vectors * block * element;
    const double l1 = std::max<double>(1, double(device.l1d_bytes)), l2 = std::max<double>(1, double(device.l2_bytes));
    const double oc_blocks = std::ceil(double(s.K) / (block * vectors)), row_tiles = std::ceil(P / double(t.oh));
    const TileRegisters registers = tile_registers(t.oh, t.ow, t.oc_vectors, t.block, runs_maddubs(workload, device));
    const double computed = std::ceil(Q / double(t.ow)) * double(t.ow) * row_tiles * double(t.oh);
    return {
        {"madd_per_load", pixels * vectors / (pixels + vectors)},
        {"register_use", double(registers.used) / double(registers.available)},
        {"filter_block_over_l1", filter_block / l1},
        {"filter_block_over_l2", filter_block / l2},
        {"edge_waste", 1.0 - P * Q / computed},
        {"items_per_thread", double(s.N) * oc_blocks * row_tiles / double(t.threads)},
        {"threads_per_core", double(t.threads) / std::max(1, device.cores)},
        {"row_outer", t.row_outer ? 1.0 : 0.0},
        {"fused", t.fused ? 1.0 : 0.0},
        {"amx", t.amx ? 1.0 : 0.0},
    };
  }

  std::string config_literal(const ss::ConfigView& view) const override { return literal(tile_of(view), false); }

  // The threads, loop order and split are passed at run time (run_time_schedule), as conv2d.cpu's.
  std::vector<std::string> run_time_knobs() const override { return {kThreads, kLoopOrder, kParallel}; }
  std::vector<long long> run_time_knob_values(const Workload&, const DeviceInfo&,
                                              const ss::ConfigView& view) const override {
    const Tile t = tile_of(view);
    return {t.threads, t.row_outer ? 1 : 0, t.fused ? 1 : 0};
  }

  // The filter is packed on the first call and again only when its pointer changes (weights are
  // constants of an inference, as for conv2d.cpu: conv_candidate_source), so the runner times the
  // convolution alone on the kept layout.
  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const ss::ConfigView& view) const override {
    const auto types = input_dtypes(workload, device);
    const std::string in = cpu_element_type(types[0]), weights = cpu_element_type(types[1]);
    const std::string out = cpu_element_type(int8() ? DataType::kI32 : DataType::kBF16);
    // The schedule stands at placeholders: one source for every schedule of the register tile.
    const Tile t = tile_of(view);
    return "// optune candidate of " + name() + " for " + workload.key() +
           "\n"
           "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
           "#include <optune/kernels/cpu/conv2d_dot_nchwc.hpp>\n\n"
           "namespace {\n"
           "constexpr auto kDims = " + cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ";\n"
           "constexpr auto kConfig = " + literal(Tile{t.oc_vectors, t.ow, t.oh, 1, false, false, t.amx, t.block, t.a7}, true) + ";\n"
           "}  // namespace\n\n" + conv_schedule_set_knobs() +
           "extern \"C\" void " + std::string(kCandidateSymbol) + "(const void* const* inputs, void* output) {\n"
           "  using namespace optune::kernels::cpu;\n"
           "  static AlignedBuffer packed;\n"
           "  static const void* packed_from = nullptr;\n"
           "  const auto packed_bytes = conv2d_dot_nchwc_packed_filter_size<kConfig>(kDims) * sizeof(" + weights + ");\n"
           "  auto* filter = reinterpret_cast<" + weights + "*>(packed.reserve((packed_bytes + 3) / 4));\n"
           "  if (packed_from != inputs[1]) {\n"
           "    conv2d_dot_nchwc_pack_filter<kConfig>(kDims, static_cast<const " + weights + "*>(inputs[1]), filter);\n"
           "    packed_from = inputs[1];\n"
           "  }\n"
           "  conv2d_dot_nchwc_packed<kConfig, kDims.stride, kDims.out_w()>(kDims, static_cast<const " + in + "*>(inputs[0]), filter, static_cast<" +
           out + "*>(output));\n"
           "}\n";
  }

  // apply-best: rows of Conv2dDotNchwcConfig (tuned_conv2d_dot.hpp), and the entry point
  // optune::conv2d_nchw16c on the dtype's elements; u7's rows in a table of their own, behind
  // optune::conv2d_nchwc_u7<Block> (nchw8c on AVX2, nchw16c with VNNI), each call on the rows of
  // its block.
  std::vector<TableForm> table_forms() const override {
    const std::string suffix = int8() ? "Int8" : "Bf16";
    TableForm form;
    form.include = "optune/kernels/cpu/tuned_conv2d_dot.hpp";
    form.row_type = "optune::kernels::cpu::TunedConv2dDotNchwc";
    form.config_type = "optune::kernels::cpu::Conv2dDotNchwcConfig";
    form.table_name = "kConv2d" + suffix + "Nchw16c";
    form.default_shape = "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=nchw16c";
    form.dtype = dtype_;
    const std::string head = int8() ? "template <typename Activations>\nbool " : "inline bool ";
    const std::string in = int8() ? "Activations" : "kernels::cpu::bfloat16";
    const std::string weights = int8() ? "std::int8_t" : "kernels::cpu::bfloat16";
    const std::string out = int8() ? "std::int32_t" : "kernels::cpu::bfloat16";
    const std::string tuned = "<tuned::" + form.table_name + ", tuned::" + form.table_name + "Default>";
    form.entry_point = "// NCHW16c output = conv2d(NCHW16c input, OIHW filter), " +
                       std::string(int8() ? "int8 (int32 sums and output)" : "bf16 (float32 sums)") +
                       ", with the tuned config of\n// the layer (else the default config). Returns whether a "
                       "tuned config ran.\n" + head + "conv2d_nchw16c(const kernels::cpu::Conv2dDims& dims, const " +
                       in + "* input, const " + weights + "* filter,\n                    " + out +
                       "* output) {\n  return kernels::cpu::conv2d_dot_nchwc_tuned" + tuned +
                       "(dims, input, filter, output);\n}\n" +
                       "// The same with the filter packed once, for a layer run again and again: Conv2dNchw16c" +
                       suffix + "Filter\n// filter(dims, weights) packs it, filter(input, output) convolves (and "
                       "returns whether a tuned config runs).\nusing Conv2dNchw16c" + suffix +
                       "Filter = kernels::cpu::TunedNchwcFilter<tuned::" + form.table_name + ", tuned::" +
                       form.table_name + "Default, " + weights + ">;\n";
    if (!int8()) return {form};
    TableForm u7 = form;
    u7.table_name = "kConv2dU7Nchwc";
    u7.default_shape = "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=nchw8c";
    u7.dtype = DataType::kU7;
    const std::string table = "tuned::" + u7.table_name + ", tuned::" + u7.table_name + "Default";
    u7.entry_point =
        "// NCHW[Block]c output = conv2d(NCHW[Block]c input, OIHW filter), u7: the input u8 holding 0..127 only\n"
        "// (7-bit activations; int32 sums and output), with the tuned config of the layer among the rows of\n"
        "// Block (else the default config on Block). Returns whether a tuned config ran.\n"
        "template <int Block>\nbool conv2d_nchwc_u7(const kernels::cpu::Conv2dDims& dims, const std::uint8_t* input, "
        "const std::int8_t* filter,\n                     std::int32_t* output) {\n"
        "  return kernels::cpu::conv2d_dot_nchwc_tuned<" + table + ", Block>(dims, input, filter, output);\n}\n"
        "// The same with the filter packed once: Conv2dNchwcU7Filter<Block> filter(dims, weights), then\n"
        "// filter(input, output).\ntemplate <int Block>\nusing Conv2dNchwcU7Filter = kernels::cpu::TunedNchwcFilter<" +
        table + ", std::int8_t, Block>;\n";
    return {form, u7};
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& view) const override {
    return fmt::format("{{{}, {}}}", cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)), config_literal(view));
  }
  std::string table_range_row(const Workload& low, const Workload& high, const DeviceInfo&,
                              const ss::ConfigView& view) const override {
    return fmt::format("{{{}, {}, {}}}", cpu::conv2d_dims_literal(cpu::conv2d_dims(low)), config_literal(view),
                       cpu::conv2d_dims_literal(cpu::conv2d_dims(high)));
  }

 private:
  bool int8() const { return dtype_ == DataType::kI8; }
  // Whether the space has the amx knob: the CPU has the type's AMX tiles (which take nchw16c).
  bool offers_amx(const Workload& workload, const DeviceInfo& device) const {
    return workload.layout_block == kBlock && device.has_isa(int8() ? "amx_int8" : "amx_bf16");
  }
  // Whether candidates compile to the header's vpmaddubsw path: u7 on x86 where VNNI does not run
  // the block (maddubs_path).
  static bool runs_maddubs(const Workload& workload, const DeviceInfo& device) {
    const bool vnni = has_int8_vnni(device) && workload.layout_block == kBlock;
    return workload.dtype == DataType::kU7 && device.has_isa("avx2") && !vnni;
  }
  // Conv2dDotNchwcConfig as C++; run_time_schedule: the candidate's, whose schedule is set at run time.
  static std::string literal(const Tile& t, bool run_time_schedule) {
    return fmt::format(
        "optune::kernels::cpu::Conv2dDotNchwcConfig{{.oc_vectors = {}, .ow_block = {}, .oh_block = {}, "
        ".threads = {}, .loop_order = optune::kernels::cpu::ConvLoopOrder::{}, "
        ".parallel = optune::kernels::cpu::ConvParallel::{}{}{}{}{}}}",
        t.oc_vectors, t.ow, t.oh, t.threads, t.row_outer ? "kRowOuter" : "kOcOuter", t.fused ? "kFused" : "kOuter",
        run_time_schedule ? ", .run_time_schedule = true" : "", t.amx ? ", .amx = true" : "",
        t.block != kBlock ? fmt::format(", .block = {}", t.block) : "", t.a7 ? ", .a7 = true" : "");
  }
  DataType dtype_;
};

}  // namespace

const KernelTemplate& cpu_conv2d_int8_direct_template() {
  static const CpuConv2dDotNchwcTemplate instance(DataType::kI8);
  return instance;
}

const KernelTemplate& cpu_conv2d_bf16_direct_template() {
  static const CpuConv2dDotNchwcTemplate instance(DataType::kBF16);
  return instance;
}

}  // namespace optune::kernels
