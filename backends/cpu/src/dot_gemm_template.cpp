#include "dot_gemm_template.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/amx_tiles.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/cpu/conv2d_config_view.hpp"
#include "template_support.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using namespace dot_gemm_knobs;

const std::vector<std::string> kSplitNames = {"columns", "rows"};

const std::vector<std::int64_t> kMcCandidates = {8, 12, 16, 24, 32, 48, 64, 72, 96, 120, 144, 192, 240, 288, 384, 576};
const std::vector<std::int64_t> kNcCandidates = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096};
const std::vector<std::int64_t> kKcCandidates = {16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 2048};

struct Blocking {
  std::int64_t mc, nc, kc, mr, nr, threads;
  bool pack_a, split_rows;
};

Blocking blocking_of(const ss::ConfigView& v) {
  return {v.split_factor(kTileMc, 1), v.split_factor(kTileNc, 1), v.split_factor(kTileKc, 1),
          v.integer(kMr),             v.integer(kNr),             v.integer(kThreads),
          v.flag(kPackA),             v.choice(kSplit) == kSplitNames[1]};
}

// Whether the block knob's value breaks no constraint that names it (the others may not be set yet).
bool valid_block(const ss::ConfigSpace& space, const ss::Config& config, const std::string& knob) {
  const std::string why = space.first_violation(config);
  if (why.empty()) return true;
  const std::string block_name = knob == kTileMc ? "MC" : knob == kTileNc ? "NC" : "KC";
  return why.find(block_name) == std::string::npos;
}

}  // namespace

std::string DotGemmTemplate::name() const {
  return std::string(op_name(op_)) + "_" + element_name() + ".cpu";
}

bool DotGemmTemplate::applies(const Workload& workload, const DeviceInfo& /*device*/) const {
  return has_cpu_layout(workload);
}

GemmShape DotGemmTemplate::gemm_shape(const Workload& workload) const {
  if (workload.op == Op::kGemm) return workload.gemm();
  const Conv2dShape& c = workload.conv();
  if (c.groups != 1 || workload.layout_block != kLayoutNchw || workload.nchw_input) {
    throw std::invalid_argument(name() + ": runs NCHW conv2d layers with groups = 1 (the kept layout nchw16c is conv2d_" +
                                element_name() + "_direct.cpu's, on CPUs with 16-lane vectors), not " + workload.key());
  }
  return GemmShape{c.K, c.out_h() * c.out_w(), c.C * c.R * c.S};
}

ss::ConfigSpace DotGemmTemplate::space(const Workload& workload, const DeviceInfo& device) const {
  const GemmShape shape = gemm_shape(workload);
  const int vector_lanes = lanes(device);
  ss::ConfigSpace space;
  space.add(ss::SplitKnob{kTileMc, shape.M, 2, ss::SplitPolicy::kCandidates, kMcCandidates, 0});
  space.add(ss::SplitKnob{kTileNc, shape.N, 2, ss::SplitPolicy::kCandidates, kNcCandidates, 0});
  space.add(ss::SplitKnob{kTileKc, shape.K, 2, ss::SplitPolicy::kCandidates, kKcCandidates, 0});
  space.add(ss::IntRangeKnob{kMr, 1, has_amx(device) ? 32 : max_mr(device), 1});
  space.add(ss::IntRangeKnob{kNr, vector_lanes, 4 * vector_lanes, vector_lanes});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::BoolKnob{kPackA});
  space.add(ss::ChoiceKnob{kSplit, kSplitNames});
  space.read_missing_as(kSplit, kSplitNames[0]);
  add_type_knobs(space, workload, device);
  const bool amx = has_amx(device);
  if (amx) space.add(ss::BoolKnob{kAmxKnob});
  space.add_constraint("one thread splits nothing (split = columns)",
                       [](const ss::ConfigView& v) { return v.integer(kThreads) > 1 || v.choice(kSplit) == kSplitNames[0]; });
  const bool in_place = reads_a_in_place(workload, device);
  space.add_constraint("A is read in place only where the kernel takes K's groups as they lie (pack_a off)",
                       [in_place](const ss::ConfigView& v) { return v.flag(kPackA) || in_place; });
  const int registers = vector_unit(device).registers, vector_mr = max_mr(device);
  space.add_constraint("the micro-tile fits the registers (vectors: accumulators, a row of B and a broadcast; AMX: 16 "
                       "or 32 rows, at most 8 tiles)",
                       [registers, vector_lanes, vector_mr](const ss::ConfigView& v) {
                         const auto mr = v.integer(kMr), nr = v.integer(kNr);
                         if (runs_on_amx(v)) return mr % 16 == 0 && nr <= 48 && cpu::amx::tiles_of(int(mr), int(nr)) <= 8;
                         const auto vectors = nr / vector_lanes;
                         return mr <= vector_mr && mr * vectors + vectors + 1 <= registers;
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
  if (amx) {
    // After the blocking's rules: a block's first broken rule is then its own while the default picks the blocks.
    space.add_constraint("amx on, where the device has AMX tiles (the vector path is no faster there)",
                         [](const ss::ConfigView& v) { return v.flag(kAmxKnob); });
    const int step = amx_depth_step();
    space.add_constraint("amx: KC a multiple of AMX's step of depth", [step](const ss::ConfigView& v) {
      return !v.flag(kAmxKnob) || v.split_factor(kTileKc, 1) % step == 0;
    });
  }
  return space;
}

bool DotGemmTemplate::has_amx(const DeviceInfo& device) const {
  return !amx_isa().empty() && device.has_isa(amx_isa());
}

int DotGemmTemplate::default_mr(const Workload& /*workload*/, const DeviceInfo& device) const {
  return vector_unit(device).registers >= 16 ? 6 : 2;
}

ss::Config DotGemmTemplate::default_config(const Workload& workload, const DeviceInfo& device,
                                           const ss::ConfigSpace& space) const {
  ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
  // On AMX tiles: 16 x 32 (2 tiles of sums, 1 of A, 2 of B). Measured against 32 x 32 on a 2-core
  // Xeon with AMX (docs/performance/lowp-cpu-gemm.md, 2026-12-01): as fast or faster on 8 of 10
  // int8 and bf16 shapes, 1.10x at int8 1024^3, within 6% on the other two.
  const int mr = has_amx(device) ? 16 : default_mr(workload, device), nr = 2 * lanes(device);
  if (has_amx(device)) config.options[space.knob_index(kAmxKnob)] = 1;  // a BoolKnob's option 1 is true
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
  const GemmShape shape = gemm_shape(workload);
  const std::int64_t threads = std::max(1, device.cores);
  const std::int64_t columns_per_thread = shape.N / threads;
  const bool pack_a = !(reads_a_in_place(workload, device) && columns_per_thread <= 128);
  set(kPackA, [&](const ss::ConfigView& v) { return v.flag(kPackA) == pack_a; });
  // Rows where N has fewer than two column panels a thread and M has more.
  const bool split_rows = threads > 1 && (shape.N + nr - 1) / nr < 2 * threads && (shape.M + mr - 1) / mr >= 2 * threads;
  set(kSplit, [&](const ss::ConfigView& v) { return (v.choice(kSplit) == kSplitNames[1]) == split_rows; });
  // Every valid option of a block knob, as (option, block size); the knob left at the last option.
  auto valid_blocks = [&](const char* knob) {
    const std::size_t k = space.knob_index(knob);
    std::vector<std::pair<std::uint32_t, std::int64_t>> blocks;
    for (std::uint32_t o = 0; o < space.option_count(k); ++o) {
      config.options[k] = o;
      if (valid_block(space, config, knob)) blocks.emplace_back(o, ss::ConfigView(space, config).split_factor(knob, 1));
    }
    return blocks;
  };
  // The largest valid block up to the preferred size, else the smallest valid one.
  auto block = [&](const char* knob, std::int64_t preferred) {
    std::int64_t best = -1, best_size = 0, smallest = -1, smallest_size = 0;
    for (const auto& [option, size] : valid_blocks(knob)) {
      if (size <= preferred && size > best_size) best = option, best_size = size;
      if (smallest < 0 || size < smallest_size) smallest = option, smallest_size = size;
    }
    if (best < 0) best = smallest;
    if (best < 0) throw std::logic_error(name() + ": default has no option for " + knob);
    config.options[space.knob_index(knob)] = static_cast<std::uint32_t>(best);
  };
  // On tiles: the largest valid depth block up to `most` that cuts K into blocks of equal depth
  // (or takes it whole); where none does, the fewest blocks up to `most`, each as short as that
  // count allows.
  auto even_depth_block = [&](std::int64_t most) {
    const std::int64_t blocks = (shape.K + most - 1) / most, least = (shape.K + blocks - 1) / blocks;
    std::int64_t even = -1, even_size = 0, fewest = -1, fewest_size = 0;
    for (const auto& [option, size] : valid_blocks(kTileKc)) {
      if (size > most) continue;
      if ((size >= shape.K || shape.K % size == 0) && size > even_size) even = option, even_size = size;
      if (size >= least && (fewest < 0 || size < fewest_size)) fewest = option, fewest_size = size;
    }
    if (even < 0 && fewest < 0) return block(kTileKc, most);
    config.options[space.knob_index(kTileKc)] = static_cast<std::uint32_t>(even >= 0 ? even : fewest);
  };
  block(kTileMc, 96);
  block(kTileNc, 512);
  if (has_amx(device)) {
    // On tiles C is loaded and stored once per depth block, so a short last block costs a whole
    // block's loads and stores for little work: int8 196 x 256 x 2304 ran 1.05x faster in 3 x 768
    // than in 2 x 1024 + 256, 49 x 512 x 4608 1.10x in 6 x 768 than 4 x 1024 + 512, while 1024^3
    // ran 1.21x faster whole than in 2 x 512. int8 up to 1024 deep, bf16 up to 256, as measured.
    even_depth_block(amx_default_kc());
  } else {
    block(kTileKc, 512);
  }
  if (const std::string why = space.first_violation(config); !why.empty())
    throw std::logic_error(name() + ": default config breaks '" + why + "'");
  return config;
}

std::vector<std::pair<std::string, double>> DotGemmTemplate::derived_features(const Workload& workload,
                                                                              const DeviceInfo& device,
                                                                              const ss::ConfigView& view) const {
  const GemmShape s = gemm_shape(workload);
  const Blocking c = blocking_of(view);
  const double vectors = static_cast<double>(c.nr) / lanes(device), bytes = packed_bytes(workload, device);
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
      // Panels of the split extent per thread: under 1, threads idle; fractional, the last waits.
      {"panels_per_thread", (c.split_rows ? tiles_m : tiles_n) / double(c.threads)},
  };
}

std::string DotGemmTemplate::config_literal(const ss::ConfigView& view) const {
  const Blocking c = blocking_of(view);
  const auto i = [](std::int64_t value) { return std::to_string(value); };
  return "optune::kernels::cpu::" + kernel().config_type + "{.mc = " + i(c.mc) + ", .nc = " + i(c.nc) +
         ", .kc = " + i(c.kc) + ", .mr = " + i(c.mr) + ", .nr = " + i(c.nr) + ", .threads = " + i(c.threads) +
         ", .pack_a = " + (c.pack_a ? "true" : "false") + (c.split_rows ? ", .split_rows = true" : "") +
         (runs_on_amx(view) ? ", .amx = true" : "") + type_fields(view) + "}";
}

std::vector<KernelTemplate::TableForm> DotGemmTemplate::table_forms() const {
  const bool int8 = dtypes().front() == DataType::kI8;
  const bool gemm = op_ == Op::kGemm;
  const std::string suffix = int8 ? "Int8" : "Bf16";
  const std::string table = std::string(gemm ? "kGemm" : "kConv2d") + suffix;
  // int8 activations are u8 on x86 and s8 elsewhere: the entry point takes either.
  const std::string head = int8 ? "template <typename Activations>\nbool " : "inline bool ";
  const std::string activations = int8 ? "Activations" : "kernels::cpu::bfloat16";
  const std::string weights = int8 ? "std::int8_t" : "kernels::cpu::bfloat16";
  const std::string output = int8 ? "std::int32_t" : "kernels::cpu::bfloat16";
  const std::string arithmetic = int8 ? "int32 sums and output" : "float32 sums";
  // optune::<name> on the table <table_name>'s rows; `what` says the operands, `a` the activations' type.
  auto entry = [&](const std::string& what, const std::string& entry_head, const std::string& name,
                   const std::string& a, const std::string& table_name) {
    const std::string tuned = "_tuned<tuned::" + table_name + ", tuned::" + table_name + "Default>";
    const std::string returns = "), with the tuned config of the\n// " + std::string(gemm ? "shape" : "layer") +
                                " (else the default config). Returns whether a tuned config ran.\n";
    if (gemm) {
      return "// C[M,N] = A[M,K] * B[K,N], row-major " + what + " (" + arithmetic + returns + entry_head + name +
             "(std::int64_t M, std::int64_t N, std::int64_t K, const " + a + "* A, std::int64_t lda,\n          const " +
             weights + "* B, std::int64_t ldb, " + output + "* C, std::int64_t ldc) {\n  return kernels::cpu::" +
             kernel().function + tuned + "(M, N, K, A, lda, B, ldb, C, ldc);\n}\n";
    }
    return "// NCHW output = conv2d(NCHW input, OIHW filter), " + what + " (" + arithmetic + returns + entry_head +
           name + "(const kernels::cpu::Conv2dDims& dims, const " + a + "* input, const " + weights +
           "* filter,\n            " + output + "* output) {\n  return kernels::cpu::conv2d_dot" + tuned +
           "(dims, input, filter, output);\n}\n";
  };
  TableForm form;
  form.config_type = "optune::kernels::cpu::" + kernel().config_type;
  form.table_name = table;
  form.dtype = dtypes().front();
  form.include = gemm ? "optune/kernels/cpu/tuned_gemm_lowp.hpp" : "optune/kernels/cpu/tuned_conv2d_dot.hpp";
  form.row_type = "optune::kernels::cpu::Tuned" + std::string(gemm ? "Gemm" : "Conv2d") + suffix;
  form.default_shape = gemm ? "M=1024,N=1024,K=1024" : "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1";
  const std::string name = gemm ? "gemm" : "conv2d";
  form.entry_point = entry(int8 ? "int8" : "bf16", head, name, activations, table);
  const std::vector<DataType> kinds = dtypes();
  if (std::find(kinds.begin(), kinds.end(), DataType::kU7) == kinds.end()) return {form};
  // u7 rows (.a7: activations in 0..127) in a table of their own, behind optune::gemm_u7 or conv2d_u7.
  TableForm u7 = form;
  u7.table_name = std::string(gemm ? "kGemm" : "kConv2d") + "U7";
  u7.dtype = DataType::kU7;
  u7.entry_point = entry(std::string("u7, ") + (gemm ? "A" : "the input") + " u8 holding 0..127 only (7-bit activations)",
                         "inline bool ", name + "_u7", "std::uint8_t", u7.table_name);
  return {form, u7};
}

std::string DotGemmTemplate::table_row(const Workload& workload, const DeviceInfo& /*device*/,
                                       const ss::ConfigView& view) const {
  if (op_ != Op::kGemm)
    return "{" + cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ", " + config_literal(view) + "}";
  const GemmShape& s = workload.gemm();
  return "{" + std::to_string(s.M) + ", " + std::to_string(s.N) + ", " + std::to_string(s.K) + ", " +
         config_literal(view) + "}";
}

std::string DotGemmTemplate::table_range_row(const Workload& low, const Workload& high, const DeviceInfo& device,
                                             const ss::ConfigView& view) const {
  std::string row = table_row(low, device, view);
  row.pop_back();  // its closing brace: the upper bounds follow the config
  if (op_ != Op::kGemm) return row + ", " + cpu::conv2d_dims_literal(cpu::conv2d_dims(high)) + "}";
  const GemmShape& s = high.gemm();
  return row + ", " + std::to_string(s.M) + ", " + std::to_string(s.N) + ", " + std::to_string(s.K) + "}";
}

std::string DotGemmTemplate::emit_source(const Workload& workload, const DeviceInfo& /*device*/,
                                         const ss::ConfigView& view) const {
  const GemmShape s = gemm_shape(workload);
  const DotGemmKernel k = kernel();
  const DotOperandTypes types = operand_types(view);
  const auto i = [](std::int64_t value) { return std::to_string(value); };
  const std::string config = config_literal(view);
  const std::string head = "// optune candidate of " + name() + " for " + workload.key() +
                           "\n"
                           "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
                           "#include <optune/kernels/cpu/" +
                           (op_ == Op::kGemm ? k.header : std::string("conv2d_dot.hpp")) + ">\n#include <cstdint>\n\n" +
                           "extern \"C\" void " + std::string(kCandidateSymbol) +
                           "(const void* const* inputs, void* output) {\n";
  const std::string activations = "static_cast<const " + types.activations + "*>(inputs[0])";
  const std::string weights = "static_cast<const " + types.weights + "*>(inputs[1])";
  const std::string output = "static_cast<" + types.output + "*>(output)";
  if (op_ == Op::kGemm) {
    return head + "  optune::kernels::cpu::" + k.function + "<" + config + ">(\n      " + i(s.M) + ", " + i(s.N) +
           ", " + i(s.K) + ", " + activations + ", " + i(s.K) + ", " + weights + ", " + i(s.N) + ", " + output +
           ", " + i(s.N) + ");\n}\n";
  }
  return head + "  optune::kernels::cpu::conv2d_dot<" + config + ">(\n      " +
         cpu::conv2d_dims_literal(cpu::conv2d_dims(workload)) + ", " + activations + ", " + weights + ", " + output +
         ");\n}\n";
}

}  // namespace optune::kernels
