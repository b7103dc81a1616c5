// The "gemm.cpu" template: the tuning space of the header-only CPU GEMM kernel
// (optune/kernels/cpu/gemm.hpp) for one workload and device, its default config, and the
// candidate source that instantiates the kernel with a config. The knobs map one to one onto
// GemmConfig's fields; gemm_config_from_view() is the only place that reads them back.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optune/kernels/cpu/gemm_config.hpp"
#include "optune/kernels/cpu/gemm_config_view.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using cpu::GemmConfig;
using cpu::LoopOrder;
using cpu::ParallelLoop;

// Knob names: stored in records (JSON by name), so they are a contract once released.
constexpr const char* kTileMc = "tile_mc";  // split of M: [blocks, MC]
constexpr const char* kTileNc = "tile_nc";  // split of N: [blocks, NC]
constexpr const char* kTileKc = "tile_kc";  // split of K: [blocks, KC]
constexpr const char* kMr = "mr";
constexpr const char* kNr = "nr";
constexpr const char* kLanes = "lanes";
constexpr const char* kPackA = "pack_a";
constexpr const char* kPackB = "pack_b";
constexpr const char* kLoopOrder = "loop_order";
constexpr const char* kUnrollK = "unroll_k";
constexpr const char* kThreads = "threads";
constexpr const char* kParallelLoop = "parallel_loop";

// Cache-block candidates: multiples of the common micro-tile sizes, spanning L1..L3 footprints.
const std::vector<std::int64_t> kMcCandidates = {8,   16,  24,  32,  48,  64,  72,
                                                 96,  120, 128, 144, 192, 240, 256,
                                                 288, 384, 480, 512, 576, 768, 1024};
const std::vector<std::int64_t> kNcCandidates = {16,  32,   64,   128,  192,  256,  384,  512,
                                                 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
const std::vector<std::int64_t> kKcCandidates = {16,  32,  64,  96,  128,  160,  192, 256,
                                                 320, 384, 512, 768, 1024, 1536, 2048};

const std::vector<std::string> kLoopOrderNames = {"jc_pc_ic", "pc_jc_ic", "ic_pc_jc"};
const std::vector<std::string> kParallelLoopNames = {"jc", "ic", "jr"};
const std::vector<std::string> kUnrollNames = {"1", "2", "4", "8"};

std::int64_t round_up(std::int64_t value, std::int64_t unit) {
  return (value + unit - 1) / unit * unit;
}

constexpr std::int64_t kMinBlockLimitMc = 128;
constexpr std::int64_t kMinBlockLimitNc = 256;
constexpr std::int64_t kMinBlockLimitKc = 128;

int parse_int(const std::string& text) { return std::stoi(text); }

void add_knobs(ss::ConfigSpace& space, const GemmShape& shape, const DeviceInfo& device,
               const VectorUnit& unit) {
  using ss::SplitPolicy;
  space.add(ss::SplitKnob{kTileMc, shape.M, 2, SplitPolicy::kCandidates, kMcCandidates, 0});
  space.add(ss::SplitKnob{kTileNc, shape.N, 2, SplitPolicy::kCandidates, kNcCandidates, 0});
  space.add(ss::SplitKnob{kTileKc, shape.K, 2, SplitPolicy::kCandidates, kKcCandidates, 0});
  const int widest = unit.lanes.back();
  space.add(ss::IntRangeKnob{kMr, 1, unit.registers == 32 ? 16 : 12, 1});
  space.add(ss::IntRangeKnob{kNr, 4, std::max(32, 4 * widest), 4});
  std::vector<std::string> lanes;
  for (int l : unit.lanes) lanes.push_back(std::to_string(l));
  space.add(ss::ChoiceKnob{kLanes, lanes});
  space.add(ss::BoolKnob{kPackA});
  space.add(ss::BoolKnob{kPackB});
  space.add(ss::ChoiceKnob{kLoopOrder, kLoopOrderNames});
  space.add(ss::ChoiceKnob{kUnrollK, kUnrollNames});
  space.add(ss::IntRangeKnob{kThreads, 1, std::max(1, device.cores), 1});
  space.add(ss::ChoiceKnob{kParallelLoop, kParallelLoopNames});
}

void add_constraints(ss::ConfigSpace& space, const GemmShape& shape, const VectorUnit& unit) {
  const int registers = unit.registers;
  space.add_constraint("nr is a multiple of lanes, at most 8 vectors", [](const ss::ConfigView& v) {
    const auto nr = v.integer(kNr);
    const auto lanes = parse_int(v.choice(kLanes));
    return nr % lanes == 0 && nr / lanes <= 8;
  });
  space.add_constraint(
      "micro-tile accumulators, one row of B and a broadcast fit the vector registers",
      [registers](const ss::ConfigView& v) {
        const auto vectors = v.integer(kNr) / parse_int(v.choice(kLanes));
        return v.integer(kMr) * vectors + vectors + 1 <= registers;
      });
  space.add_constraint("MC is a multiple of mr and not far beyond M",
                       [shape](const ss::ConfigView& v) {
                         const auto mc = v.split_factor(kTileMc, 1), mr = v.integer(kMr);
                         return mc % mr == 0 && block_fits(mc, shape.M, mr, kMinBlockLimitMc);
                       });
  space.add_constraint("NC is a multiple of nr and not far beyond N",
                       [shape](const ss::ConfigView& v) {
                         const auto nc = v.split_factor(kTileNc, 1), nr = v.integer(kNr);
                         return nc % nr == 0 && block_fits(nc, shape.N, nr, kMinBlockLimitNc);
                       });
  space.add_constraint("KC is not far beyond K", [shape](const ss::ConfigView& v) {
    return block_fits(v.split_factor(kTileKc, 1), shape.K, 1, kMinBlockLimitKc);
  });
  // With one thread the parallel loop means nothing: keep one of the equivalent configs.
  space.add_constraint(
      "one thread splits no loop (parallel_loop = jc)", [](const ss::ConfigView& v) {
        return v.integer(kThreads) > 1 || v.choice(kParallelLoop) == kParallelLoopNames[0];
      });
}

// The option of a block knob with the largest block <= preferred that `allowed` accepts, else the
// smallest one it accepts; -1 where it accepts none.
std::int64_t block_option(const ss::ConfigSpace& space, const std::string& name, std::int64_t preferred,
                          const std::function<bool(std::int64_t)>& allowed) {
  const std::size_t k = space.knob_index(name);
  std::int64_t best = -1, fallback = -1;
  for (std::uint64_t o = 0; o < space.option_count(k); ++o) {
    const std::int64_t block = space.split_value(k, static_cast<std::uint32_t>(o))[1];
    if (!allowed(block)) continue;
    if (fallback < 0) fallback = static_cast<std::int64_t>(o);
    if (block <= preferred) best = static_cast<std::int64_t>(o);
  }
  return best >= 0 ? best : fallback;
}

// Sets a block knob to block_option's choice, which keeps the config valid so far.
void choose_block(const ss::ConfigSpace& space, const std::string& name, std::int64_t preferred,
                  const std::function<bool(std::int64_t)>& allowed, ss::Config& config) {
  const std::int64_t chosen = block_option(space, name, preferred, allowed);
  if (chosen < 0) throw std::logic_error("gemm.cpu: no valid option for knob " + name);
  config.options[space.knob_index(name)] = static_cast<std::uint32_t>(chosen);
}

class CpuGemmTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "gemm.cpu"; }
  Op op() const override { return Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }
  // f16 and bf16 through gemm_widening.hpp: the float32 micro-kernels on widened panels.
  std::vector<DataType> dtypes() const override { return {DataType::kF32, DataType::kF16, DataType::kBF16}; }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    const GemmShape& shape = workload.gemm();
    const VectorUnit unit = vector_unit(device);
    ss::ConfigSpace space;
    add_knobs(space, shape, device, unit);
    add_constraints(space, shape, unit);
    if (workload.dtype != DataType::kF32) {
      space.add_constraint("16-bit floats are widened as B is packed (pack_b)",
                           [](const ss::ConfigView& v) { return v.flag(kPackB); });
      space.add_constraint("16-bit floats: A is widened and packed once per call (pack_a off: one of equals)",
                           [](const ss::ConfigView& v) { return !v.flag(kPackA); });
    }
    return space;
  }

  // Generic, untuned: widest vectors, a micro-tile of 6 rows and as many vectors as the
  // registers hold (2 on AVX2, 4 with 32 registers), BLIS loop order, A read in place, B packed
  // where many micro-panels read it, modest blocks (MC 96, NC 1024, KC 256, shrunk for small
  // shapes), all cores splitting the longer of M and N.
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    const GemmShape& shape = workload.gemm();
    const VectorUnit unit = vector_unit(device);
    const int lanes = unit.lanes.back();
    // mr rows of accumulators, one row of B and a broadcast: (mr + 1) * vectors + 1 registers.
    // 6 rows; where M is a little more, all of it in one micro-panel (the fewest rows from M up
    // that fit with two vectors and that an MC block divides) rather than a second panel mostly
    // empty (7 x 768 x 768: 6 + 1 rows ran 1.4x slower than the tuned 8 x 32 tile, AVX-512 host).
    auto mc_allowed = [&](std::int64_t rows) {
      return [&shape, rows](std::int64_t mc) { return mc % rows == 0 && block_fits(mc, shape.M, rows, kMinBlockLimitMc); };
    };
    int mr = 6;
    for (std::int64_t rows = shape.M; shape.M > 6 && (rows + 1) * 2 + 1 <= unit.registers; ++rows) {
      if (block_option(space, kTileMc, 96, mc_allowed(rows)) >= 0) {
        mr = static_cast<int>(rows);
        break;
      }
    }
    const int vectors = std::min(4, (unit.registers - 1) / (mr + 1)), nr = vectors * lanes;
    ss::Config config{std::vector<std::uint32_t>(space.knobs().size(), 0)};
    auto set = [&](const char* knob, const std::function<bool(const ss::ConfigView&)>& wanted) {
      if (find_option(space, knob, wanted, config) < 0) {
        throw std::logic_error(std::string("gemm.cpu: default has no option for ") + knob);
      }
    };
    set(kMr, [&](const ss::ConfigView& v) { return v.integer(kMr) == mr; });
    set(kNr, [&](const ss::ConfigView& v) { return v.integer(kNr) == nr; });
    set(kLanes, [&](const ss::ConfigView& v) { return parse_int(v.choice(kLanes)) == lanes; });
    // A in place: a micro-panel's 6 rows are 6 streams the prefetcher follows, while packing
    // copies A in every thread of an N split (AVX-512 host, 2026-11-25: packed A up to 35% slower
    // at 32-3136 rows and nowhere faster beyond noise; on the AVX2 host A-in-place configs won the
    // skinny shapes). B packed where a second micro-panel reads it with 16 registers, and with 32
    // where 8 do, or 2 and B's rows are long: since a panel is packed while its first micro-tile
    // computes, packing costs little. The 2-vector tiles of AVX2 code gained 10-18% from packed B
    // at 14-128 rows (and 13% at 49 x 512 x 4608). The 4-vector tiles of AVX-512 lost 3-5% at
    // 14-20 rows of N = 768, were level at 32 and gained 4-8% at 40-150; with rows of 2048 floats
    // or more, read in place one cache line of each of K rows at 8 KB strides, they gained 13-55%
    // at 8-100 rows (100 x 3072 x 768: 1.54x; 77 x 3000 x 500: 1.33x). One Xeon, 2026-11-26.
    const bool long_b_rows = shape.N >= 2048;
    // 16-bit floats are widened as they are packed: B always.
    const bool pack_b = workload.dtype != DataType::kF32 || (unit.registers == 16 ? shape.M >= 2 * mr
                                             : shape.M >= 8 * mr || (long_b_rows && shape.M >= 2 * mr));
    const bool pack_a = false;
    set(kPackA, [&](const ss::ConfigView& v) { return v.flag(kPackA) == pack_a; });
    set(kPackB, [&](const ss::ConfigView& v) { return v.flag(kPackB) == pack_b; });
    set(kLoopOrder, [](const ss::ConfigView& v) { return v.choice(kLoopOrder) == "jc_pc_ic"; });
    set(kUnrollK, [](const ss::ConfigView& v) { return v.choice(kUnrollK) == "4"; });
    const std::int64_t threads = std::max(1, device.cores);
    set(kThreads, [&](const ss::ConfigView& v) { return v.integer(kThreads) == threads; });
    // Each thread of an N split reads all of A, each of an M split all of B: split the loop whose
    // threads share the smaller operand (3136 x 64 x 576 split over N ran at
    // 0.47x oneDNN, over M at 0.99x).
    const char* parallel = threads > 1 && shape.M > shape.N ? "ic" : "jc";
    set(kParallelLoop, [&](const ss::ConfigView& v) { return v.choice(kParallelLoop) == parallel; });
    choose_block(space, kTileMc, 96, mc_allowed(mr), config);
    choose_block(
        space, kTileNc, 1024,
        [&](std::int64_t nc) {
          return nc % nr == 0 && block_fits(nc, shape.N, nr, kMinBlockLimitNc);
        },
        config);
    choose_block(
        space, kTileKc, 256,
        [&](std::int64_t kc) { return block_fits(kc, shape.K, 1, kMinBlockLimitKc); }, config);
    if (const std::string why = space.first_violation(config); !why.empty()) {
      throw std::logic_error("gemm.cpu: default config breaks '" + why + "'");
    }
    return config;
  }

  // Footprints against the caches, micro-kernel intensity, packing and C traffic per flop,
  // edge waste and load balance: what decides speed but is hidden in products of knob values.
  std::vector<std::pair<std::string, double>> derived_features(
      const Workload& workload, const DeviceInfo& device,
      const ss::ConfigView& config) const override {
    const GemmShape& s = workload.gemm();
    const GemmConfig c = cpu::gemm_config_from_view(config);
    const VectorUnit unit = vector_unit(device);
    const double M = static_cast<double>(s.M), N = static_cast<double>(s.N),
                 K = static_cast<double>(s.K);
    const double flops = 2.0 * M * N * K;
    const double vectors = c.nr / c.lanes;
    const double mc = std::min<double>(c.mc, round_up(s.M, c.mr));
    const double nc = std::min<double>(c.nc, round_up(s.N, c.nr));
    const double kc = std::min<double>(c.kc, K);
    const double threads = c.threads;
    // Each thread of a jc (ic) split owns N / threads columns (M / threads rows).
    const double n_thread = c.parallel == ParallelLoop::kJc ? std::ceil(N / threads) : N;
    const double m_thread = c.parallel == ParallelLoop::kIc ? std::ceil(M / threads) : M;
    const double a_packs = c.pack_a ? M * K * std::ceil(n_thread / nc) *
                                          (c.parallel == ParallelLoop::kJc ? threads : 1.0)
                                    : 0.0;
    const double b_repeats = c.loop_order == LoopOrder::kIcPcJc ? std::ceil(m_thread / mc) : 1.0;
    const double b_packs =
        c.pack_b ? K * N * b_repeats * (c.parallel == ParallelLoop::kIc ? threads : 1.0) : 0.0;
    const double tiles_m = std::ceil(M / c.mr), tiles_n = std::ceil(N / c.nr);
    const double split_units = c.parallel == ParallelLoop::kIc ? tiles_m : tiles_n;
    const double per_thread = std::ceil(split_units / threads);
    const auto bytes = [](double floats) { return 4.0 * floats; };
    const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
    const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
    const double l3 = device.l3_bytes > 0 ? static_cast<double>(device.l3_bytes) : 8.0 * l2;
    return {
        {"fma_per_load", c.mr * vectors / (c.mr + vectors)},
        {"register_use", (c.mr * vectors + vectors + 1) / unit.registers},
        {"b_micropanel_over_l1", bytes(kc * c.nr + kc * c.mr) / l1},
        {"a_block_over_l2", bytes(mc * kc) / l2},
        {"b_block_over_l3", bytes(kc * nc) * (c.parallel == ParallelLoop::kJr ? 1 : threads) / l3},
        {"pack_floats_per_flop", (a_packs + b_packs) / flops},
        {"c_passes", std::ceil(K / kc)},
        {"edge_waste", 1.0 - M * N / (tiles_m * c.mr * tiles_n * c.nr)},
        {"load_imbalance", per_thread * threads / split_units - 1.0},
        {"threads_per_core", threads / std::max(1, device.cores)},
        {"log2_flops_per_thread", std::log2(flops / threads)},
    };
  }

  // The cache blocks and threads are passed at run time (GemmConfig::run_time_blocks): a candidate
  // compiles only what its micro-kernel and loop structure need, and every config that differs
  // from it in blocks or threads alone runs on the same object.
  std::vector<std::string> run_time_knobs() const override { return {kTileMc, kTileNc, kTileKc, kThreads}; }

  std::vector<long long> run_time_knob_values(const Workload&, const DeviceInfo&,
                                              const ss::ConfigView& config) const override {
    const cpu::GemmConfig c = cpu::gemm_config_from_view(config);
    return {c.mc, c.nc, c.kc, c.threads};
  }

  std::string emit_source(const Workload& workload, const DeviceInfo&,
                          const ss::ConfigView& config) const override {
    // What is compiled in: the config less its blocks and threads, which stand at placeholders of
    // the compiled part's own (so the source is one for all of them).
    cpu::GemmConfig compiled = cpu::gemm_config_from_view(config);
    compiled.run_time_blocks = true;
    compiled.mc = compiled.mr;
    compiled.nc = compiled.nr;
    compiled.kc = 1;
    compiled.threads = 1;
    const GemmShape& s = workload.gemm();
    const std::string m = std::to_string(s.M), n = std::to_string(s.N), k = std::to_string(s.K);
    const bool widening = workload.dtype != DataType::kF32;
    const std::string element = workload.dtype == DataType::kF32   ? "float"
                                : workload.dtype == DataType::kBF16 ? "optune::kernels::cpu::bfloat16"
                                                                    : "optune::kernels::cpu::float16";
    return "// optune candidate of gemm.cpu for " + workload.key() +
           "\n"
           "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared "
           "-I<kernels/include>\n"
           "#include <optune/kernels/cpu/" + (widening ? "gemm_widening.hpp" : "gemm.hpp") + ">\n\n"
           "using Element = " + element + ";\n\n"
           "// tile_mc, tile_nc, tile_kc and threads, as the worker passes them.\n"
           "extern \"C\" void " + std::string(kSetKnobsSymbol) + "(const long long* values, int count) {\n"
           "  if (count == 4)\n"
           "    optune::kernels::cpu::gemm_detail::run_time_blocks = {values[0], values[1], values[2],\n"
           "                                                          static_cast<int>(values[3])};\n"
           "}\n\n"
           "extern \"C\" void " +
           std::string(kCandidateSymbol) +
           "(const void* const* inputs, void* output) {\n"
           "  optune::kernels::cpu::" + (widening ? "gemm_widening<" : "gemm<") +
           cpu::gemm_config_literal(compiled) + ">(\n      " + m + ", " + n + ", " + k +
           ", static_cast<const Element*>(inputs[0]), " + k + ", static_cast<const Element*>(inputs[1]), " + n +
           ", static_cast<Element*>(output), " + n + ");\n}\n";
  }

  std::vector<TableForm> table_forms() const override {
    return {TableForm{"optune/kernels/cpu/tuned_gemm.hpp", "optune::kernels::cpu::TunedGemm",
                     "optune::kernels::cpu::GemmConfig", "kGemm", "M=1024,N=1024,K=1024",
                     "// C[M,N] = A[M,K] * B[K,N], row-major f32, with the tuned config of the shape (else the\n"
                     "// default config). Returns whether a tuned config ran.\n"
                     "inline bool gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A,\n"
                     "                 std::int64_t lda, const float* B, std::int64_t ldb, float* C,\n"
                     "                 std::int64_t ldc) {\n"
                     "  return kernels::cpu::gemm_tuned<tuned::kGemm, tuned::kGemmDefault>(M, N, K, A, lda, B, ldb,\n"
                     "                                                                    C, ldc);\n"
                     "}\n"},
            widened_form(DataType::kF16, "kGemmF16", "float16"),
            widened_form(DataType::kBF16, "kGemmBf16Widened", "bfloat16")};
  }

  // The table of f16 or bf16 records: the float32 kernel on widened operands (gemm_widening.hpp).
  static TableForm widened_form(DataType dtype, const std::string& table, const std::string& element) {
    TableForm form{"optune/kernels/cpu/tuned_gemm_lowp.hpp", "optune::kernels::cpu::TunedGemm",
                   "optune::kernels::cpu::GemmConfig", table, "M=1024,N=1024,K=1024",
                   "// C[M,N] = A[M,K] * B[K,N], row-major " + element +
                       " (float32 sums), with the tuned config of the shape (else the\n"
                       "// default config). Returns whether a tuned config ran.\n"
                       "inline bool gemm(std::int64_t M, std::int64_t N, std::int64_t K, const kernels::cpu::" +
                       element + "* A,\n                 std::int64_t lda, const kernels::cpu::" + element +
                       "* B, std::int64_t ldb, kernels::cpu::" + element +
                       "* C,\n                 std::int64_t ldc) {\n"
                       "  return kernels::cpu::gemm_widening_tuned<tuned::" + table + ", tuned::" + table +
                       "Default>(M, N, K, A, lda, B, ldb, C, ldc);\n"
                       "}\n"};
    form.dtype = dtype;
    return form;
  }

  std::string table_row(const Workload& workload, const DeviceInfo&, const ss::ConfigView& config) const override {
    const GemmShape& s = workload.gemm();
    return fmt::format("{{{}, {}, {}, {}}}", s.M, s.N, s.K, config_literal(config));
  }

  std::string table_range_row(const Workload& low, const Workload& high, const DeviceInfo& device,
                              const ss::ConfigView& config) const override {
    const GemmShape& s = high.gemm();
    std::string row = table_row(low, device, config);
    row.pop_back();  // its closing brace: the upper bounds follow the config
    return row + ", " + std::to_string(s.M) + ", " + std::to_string(s.N) + ", " + std::to_string(s.K) + "}";
  }

  std::string config_literal(const ss::ConfigView& config) const override {
    return cpu::gemm_config_literal(cpu::gemm_config_from_view(config));
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_template() {
  static const CpuGemmTemplate instance;
  return instance;
}

namespace cpu {

GemmConfig gemm_config_from_view(const search_space::ConfigView& v) {
  GemmConfig c;
  c.mc = static_cast<int>(v.split_factor(kTileMc, 1));
  c.nc = static_cast<int>(v.split_factor(kTileNc, 1));
  c.kc = static_cast<int>(v.split_factor(kTileKc, 1));
  c.mr = static_cast<int>(v.integer(kMr));
  c.nr = static_cast<int>(v.integer(kNr));
  c.lanes = parse_int(v.choice(kLanes));
  c.pack_a = v.flag(kPackA);
  c.pack_b = v.flag(kPackB);
  const auto order =
      std::find(kLoopOrderNames.begin(), kLoopOrderNames.end(), v.choice(kLoopOrder));
  c.loop_order = static_cast<LoopOrder>(order - kLoopOrderNames.begin());
  c.unroll = parse_int(v.choice(kUnrollK));
  c.threads = static_cast<int>(v.integer(kThreads));
  const auto parallel =
      std::find(kParallelLoopNames.begin(), kParallelLoopNames.end(), v.choice(kParallelLoop));
  c.parallel = static_cast<ParallelLoop>(parallel - kParallelLoopNames.begin());
  return c;
}

std::string gemm_config_literal(const GemmConfig& c) {
  static const char* const kOrders[] = {"kJcPcIc", "kPcJcIc", "kIcPcJc"};
  static const char* const kParallel[] = {"kJc", "kIc", "kJr"};
  auto b = [](bool x) { return std::string(x ? "true" : "false"); };
  auto i = [](int x) { return std::to_string(x); };
  return "optune::kernels::cpu::GemmConfig{.mc = " + i(c.mc) + ", .nc = " + i(c.nc) +
         ", .kc = " + i(c.kc) + ", .mr = " + i(c.mr) + ", .nr = " + i(c.nr) +
         ", .lanes = " + i(c.lanes) + ", .pack_a = " + b(c.pack_a) + ", .pack_b = " + b(c.pack_b) +
         ", .loop_order = optune::kernels::cpu::LoopOrder::" +
         kOrders[static_cast<int>(c.loop_order)] + ", .unroll = " + i(c.unroll) +
         ", .threads = " + i(c.threads) + ", .parallel = optune::kernels::cpu::ParallelLoop::" +
         kParallel[static_cast<int>(c.parallel)] + (c.run_time_blocks ? ", .run_time_blocks = true" : "") + "}";
}

}  // namespace cpu
}  // namespace optune::kernels
