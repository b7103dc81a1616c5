// The "gemm.cpu" template: its space is large enough to study search on and still holds the
// fast configs, every valid config is a kernel that can be instantiated, the default config is
// valid for any shape, and an emitted candidate compiles, loads and computes the product.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "optune/kernels/cpu/gemm_config_view.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "../../support/test_devices.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;

using test_support::avx2_device;
using test_support::avx512_device;
using test_support::neon_device;

Workload gemm(std::int64_t M, std::int64_t N, std::int64_t K) {
  return Workload{Op::kGemm, DataType::kF32, GemmShape{M, N, K}};
}

const KernelTemplate& cpu_gemm() { return backends::find_template("gemm.cpu"); }

TEST(CpuGemmTemplate, IsFoundByOpAndBackend) {
  EXPECT_EQ(cpu_gemm().name(), "gemm.cpu");
  EXPECT_EQ(cpu_gemm().op(), Op::kGemm);
  EXPECT_EQ(cpu_gemm().backend(), "cpu");
}

TEST(CpuGemmTemplate, SpaceOf512CubedHasAtLeast1e5ValidConfigs) {
  const ss::ConfigSpace space = cpu_gemm().space(gemm(512, 512, 512), avx2_device(2));
  const std::uint64_t size = space.size();
  std::mt19937_64 rng(7);
  constexpr int kDraws = 40000;
  int valid = 0;
  for (int i = 0; i < kDraws; ++i) valid += space.is_valid(space.from_index(rng() % size));
  const double estimate = static_cast<double>(size) * valid / kDraws;
  // ~4% of ~2.8e8 are valid: the estimate has a few percent of relative error; the bound has
  // two orders of magnitude of margin.
  EXPECT_GE(estimate, 1e5) << valid << " of " << kDraws << " draws valid, space size " << size;
}

TEST(CpuGemmTemplate, EveryValidConfigIsAnInstantiableKernel) {
  for (const DeviceInfo& device : {avx2_device(2), avx512_device(), neon_device()}) {
    const Workload workload = gemm(127, 509, 1021);
    const ss::ConfigSpace space = cpu_gemm().space(workload, device);
    std::mt19937_64 rng(11);
    for (const ss::Config& config : space.sample_valid_distinct(rng, 300)) {
      const cpu::GemmConfig c = cpu::gemm_config_from_view(ss::ConfigView(space, config));
      const char* error = cpu::gemm_config_error(c);
      EXPECT_EQ(error, nullptr) << error << " for " << space.to_json(config).dump();
      EXPECT_LE(c.lanes, device.simd_f32_lanes());
    }
  }
}

TEST(CpuGemmTemplate, SpaceHoldsTheFastConfigs) {
  // Hand-picked on a 2-core Zen3 (tests/bench/bench_gemm.cpp): 6x16 tiles, MC 72, KC 512.
  const Workload workload = gemm(2048, 2048, 2048);
  const ss::ConfigSpace space = cpu_gemm().space(workload, avx2_device(2));
  const nlohmann::json fast = {{"tile_mc", {29, 72}},
                               {"tile_nc", {1, 2048}},
                               {"tile_kc", {4, 512}},
                               {"mr", 6},
                               {"nr", 16},
                               {"lanes", "8"},
                               {"pack_a", true},
                               {"pack_b", true},
                               {"loop_order", "jc_pc_ic"},
                               {"unroll_k", "4"},
                               {"threads", 2},
                               {"parallel_loop", "jc"}};
  const ss::Config config = space.from_json(fast);
  EXPECT_EQ(space.first_violation(config), "");
  const cpu::GemmConfig c = cpu::gemm_config_from_view(ss::ConfigView(space, config));
  EXPECT_EQ(c, (cpu::GemmConfig{
                   .mc = 72, .nc = 2048, .kc = 512, .mr = 6, .nr = 16, .lanes = 8, .threads = 2}));
}

TEST(CpuGemmTemplate, RejectsMicroTilesPastTheRegisterFile) {
  const Workload workload = gemm(512, 512, 512);
  const ss::ConfigSpace space = cpu_gemm().space(workload, avx2_device(2));
  ss::Config config = cpu_gemm().default_config(workload, avx2_device(2), space);
  nlohmann::json json = space.to_json(config);
  json["mr"] = 8;  // 8 x 2 vectors + 2 + 1 > 16 AVX2 registers
  json["tile_mc"] = {8, 64};
  EXPECT_NE(space.first_violation(space.from_json(json)), "");
  json["nr"] = 12;  // not a multiple of 8 lanes
  json["mr"] = 4;
  EXPECT_NE(space.first_violation(space.from_json(json)), "");
}

TEST(CpuGemmTemplate, DefaultConfigIsValidForAnyShape) {
  const std::vector<Workload> workloads = {
      gemm(1, 1, 1),       gemm(17, 3, 5),      gemm(1, 1000, 2048), gemm(127, 509, 1021),
      gemm(512, 512, 512), gemm(3136, 64, 576), gemm(49, 512, 4608), gemm(100000, 7, 3),
      gemm(7, 768, 768),   gemm(10, 33, 70),    gemm(14, 768, 768),  gemm(15, 768, 768),
      gemm(64, 768, 768),  gemm(20, 3072, 768), gemm(8, 3072, 768)};
  for (const DeviceInfo& device :
       {avx2_device(1), avx2_device(2), avx512_device(), neon_device()}) {
    for (const Workload& workload : workloads) {
      const ss::ConfigSpace space = cpu_gemm().space(workload, device);
      const ss::Config config = cpu_gemm().default_config(workload, device, space);
      EXPECT_EQ(space.first_violation(config), "") << workload.key() << " " << device.arch;
      const cpu::GemmConfig c = cpu::gemm_config_from_view(ss::ConfigView(space, config));
      EXPECT_EQ(cpu::gemm_config_error(c), nullptr) << workload.key();
      // A in place, B packed where 8 micro-panels read it, or 2 of rows of 2048 floats or more
      // (with 16 registers, 2); the threads split the longer of M and N; the micro-tile as wide
      // as the registers hold.
      const auto [M, N, K] = workload.gemm();
      const int registers = device.has_isa("avx512f") || device.arch == "aarch64" ? 32 : 16;
      EXPECT_FALSE(c.pack_a) << workload.key();
      const bool pack_b = registers == 16 ? M >= 2 * c.mr : M >= 8 * c.mr || (N >= 2048 && M >= 2 * c.mr);
      EXPECT_EQ(c.pack_b, pack_b) << workload.key() << " " << device.arch;
      EXPECT_EQ(c.threads, device.cores) << workload.key();
      const auto split = device.cores > 1 && M > N ? cpu::ParallelLoop::kIc : cpu::ParallelLoop::kJc;
      EXPECT_EQ(c.parallel, split) << workload.key() << " " << device.arch;
      // 6 rows, or all of a slightly larger M in one micro-panel that fits with two vectors (32
      // registers) and that an MC block divides: 7 and 8 rows take a panel of 8, 10 one of 10; 14 (no
      // MC block of 14s) and 15 (too many rows) keep 6. Then as many vectors as fit.
      const int mr = registers == 32 && (M == 7 || M == 8) ? 8 : registers == 32 && M == 10 ? 10 : 6;
      EXPECT_EQ(c.mr, mr) << workload.key() << " " << device.arch;
      EXPECT_EQ(c.nr, std::min(4, (registers - 1) / (mr + 1)) * c.lanes) << workload.key() << " " << device.arch;
      EXPECT_EQ(c.lanes, device.simd_f32_lanes()) << workload.key();
    }
  }
}

// Naive double-precision product, row-major.
std::vector<double> naive_product(const std::vector<float>& a, const std::vector<float>& b,
                                  std::int64_t M, std::int64_t N, std::int64_t K) {
  std::vector<double> c(static_cast<std::size_t>(M * N), 0.0);
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t p = 0; p < K; ++p) {
      for (std::int64_t j = 0; j < N; ++j) {
        c[static_cast<std::size_t>(i * N + j)] +=
            static_cast<double>(a[static_cast<std::size_t>(i * K + p)]) *
            b[static_cast<std::size_t>(p * N + j)];
      }
    }
  }
  return c;
}

// The cache blocks and threads are run-time knobs: configs that differ only in them emit one source,
// compiled once, and the object computes the product for each of them once given their values.
TEST(CpuGemmTemplate, EmittedSourceCompilesOnceAndComputesTheProductForEachRunTimeBlocking) {
  const std::int64_t M = 37, N = 45, K = 71;
  const Workload workload = gemm(M, N, K);
  const DeviceInfo device = avx2_device(2);
  const ss::ConfigSpace space = cpu_gemm().space(workload, device);
  std::mt19937_64 rng(3);
  const ss::Config config = space.sample_valid(rng);
  const std::string source =
      cpu_gemm().emit_source(workload, device, ss::ConfigView(space, config));
  ASSERT_NE(source.find(std::string("extern \"C\" void ") + kCandidateSymbol), std::string::npos);
  ASSERT_NE(source.find(std::string("extern \"C\" void ") + kSetKnobsSymbol), std::string::npos);
  ASSERT_NE(source.find("#include <optune/kernels/cpu/gemm.hpp>"), std::string::npos);
  // Its siblings: the same compiled knobs, other blocks and threads.
  std::vector<ss::Config> siblings = {config};
  const std::vector<std::size_t> run_time = {space.knob_index("tile_mc"), space.knob_index("tile_nc"),
                                             space.knob_index("tile_kc"), space.knob_index("threads")};
  for (int tries = 0; tries < 2000 && siblings.size() < 4; ++tries) {
    ss::Config sibling = config;
    const ss::Config other = space.sample_valid(rng);
    for (std::size_t k : run_time) sibling.options[k] = other.options[k];
    if (!space.is_valid(sibling) || std::find(siblings.begin(), siblings.end(), sibling) != siblings.end()) continue;
    EXPECT_EQ(cpu_gemm().emit_source(workload, device, ss::ConfigView(space, sibling)), source)
        << "blocks and threads are not compiled in";
    siblings.push_back(sibling);
  }
  ASSERT_GE(siblings.size(), 3u);

  const auto dir = std::filesystem::temp_directory_path() /
                   ("optune_cpu_gemm_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "candidate.cpp") << source; }
  // The flags the local builder uses for the native CPU target.
  const std::string command =
      "c++ -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -I" +
      std::string(OPTUNE_SOURCE_DIR) + "/backends/cpu/include " + (dir / "candidate.cpp").string() +
      " -o " + (dir / "candidate.so").string() + " 2> " + (dir / "build.log").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << source;

  void* handle = dlopen((dir / "candidate.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto function = reinterpret_cast<CandidateFunction>(dlsym(handle, kCandidateSymbol));
  auto set_knobs = reinterpret_cast<SetKnobsFunction>(dlsym(handle, kSetKnobsSymbol));
  ASSERT_NE(function, nullptr);
  ASSERT_NE(set_knobs, nullptr);

  std::mt19937 values(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
  for (auto& x : a) x = dist(values);
  for (auto& x : b) x = dist(values);
  const std::vector<double> want = naive_product(a, b, M, N, K);
  for (const ss::Config& sibling : siblings) {
    const auto knobs = cpu_gemm().run_time_knob_values(workload, device, ss::ConfigView(space, sibling));
    ASSERT_EQ(knobs.size(), 4u);
    set_knobs(knobs.data(), static_cast<int>(knobs.size()));
    std::vector<float> c(static_cast<std::size_t>(M * N), std::nanf(""));
    const void* inputs[] = {a.data(), b.data()};
    function(inputs, c.data());
    double num = 0, den = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      num += (c[i] - want[i]) * (c[i] - want[i]);
      den += want[i] * want[i];
    }
    EXPECT_LE(std::sqrt(num / den), 1e-4) << space.to_json(sibling).dump();
  }
  dlclose(handle);
  std::filesystem::remove_all(dir);
}

// The int8 GEMM's default micro-tile: 3 rows where x86 without VNNI widens to int16 pairs (their
// temporaries share AVX2's 16 registers; 6 rows ran 1.4-1.7x slower than the tuned best there),
// 6 on the VNNI path; bf16's stays 6. Each default is a valid config of its space.
TEST(CpuGemmTemplate, Int8DefaultTakesThreeRowsWhereAvx2WidensAndSixWithVnni) {
  kernels::DeviceInfo vnni = avx512_device();
  vnni.isa.insert(vnni.isa.end(), {"avx512bw", "avx512_vnni"});
  auto default_mr = [](const char* name, DataType dtype, const DeviceInfo& device) {
    const auto& kernel = backends::find_template(name);
    const Workload workload{Op::kGemm, dtype, GemmShape{1024, 1024, 1024}};
    const auto space = kernel.space(workload, device);
    const auto config = kernel.default_config(workload, device, space);
    EXPECT_TRUE(space.is_valid(config)) << name << " " << space.first_violation(config);
    return space.to_json(config).at("mr").get<int>();
  };
  EXPECT_EQ(default_mr("gemm_int8.cpu", DataType::kI8, avx2_device(2)), 3);
  EXPECT_EQ(default_mr("gemm_int8.cpu", DataType::kI8, vnni), 6);
  EXPECT_EQ(default_mr("gemm_bf16.cpu", DataType::kBF16, avx2_device(2)), 6);
}

// u7 GEMMs (activations in 0..127): the config says so to the kernel (.a7, which takes AVX2 to
// vpmaddubsw's quads) and the record ("activations": "u7"); on AVX2 A is then read in place where K
// is whole quads, and the default micro-tile is 4 rows of 16 (6 rows spill the quads' registers).
TEST(CpuGemmTemplate, SevenBitActivationsTakeTheQuadsOnAvx2) {
  const auto& int8 = backends::find_template("gemm_int8.cpu");
  for (const DeviceInfo& device : {avx2_device(2), avx512_device()}) {
    const Workload workload{Op::kGemm, DataType::kU7, GemmShape{64, 256, 128}};
    const auto space = int8.space(workload, device);
    const auto config = int8.default_config(workload, device, space);
    ASSERT_TRUE(space.is_valid(config)) << space.first_violation(config);
    const auto json = space.to_json(config);
    EXPECT_EQ(json.at("activations"), "u7");
    const ss::ConfigView view(space, config);
    EXPECT_NE(int8.config_literal(view).find(".a7 = true"), std::string::npos);
    EXPECT_NE(int8.emit_source(workload, device, view).find("static_cast<const std::uint8_t*>(inputs[0])"),
              std::string::npos);
  }
  const Workload u7{Op::kGemm, DataType::kU7, GemmShape{64, 256, 128}};
  const auto space = int8.space(u7, avx2_device(2));
  const auto json = space.to_json(int8.default_config(u7, avx2_device(2), space));
  EXPECT_EQ(json.at("mr"), 4);
  EXPECT_EQ(json.at("nr"), 16);
  EXPECT_EQ(json.at("pack_a"), false) << "quads are 4 bytes of a row as they lie";
  const Workload i8{Op::kGemm, DataType::kI8, GemmShape{64, 256, 128}};
  const auto i8_space = int8.space(i8, avx2_device(2));
  EXPECT_EQ(int8.config_literal(ss::ConfigView(i8_space, int8.default_config(i8, avx2_device(2), i8_space)))
                .find(".a7"),
            std::string::npos);
  // i8's records keep their names: u8 activations on x86, s8 on Arm.
  EXPECT_EQ(i8_space.to_json(int8.default_config(i8, avx2_device(2), i8_space)).at("activations"), "u8");
  const auto arm_space = int8.space(i8, neon_device());
  EXPECT_EQ(arm_space.to_json(int8.default_config(i8, neon_device(), arm_space)).at("activations"), "s8");
}

// bf16 on AMX tiles where the device has them (amx_bf16): the space holds only tile configs (16
// or 32 rows, 16 to 48 columns, KC in steps of 32), the default among them (16 x 32, K in blocks
// of equal depth), and the config literal says so; a device with AVX-512 BF16 alone has no such knob.
TEST(CpuGemmTemplate, Bf16RunsOnAmxTilesWhereTheDeviceHasThem) {
  const auto& bf16 = backends::find_template("gemm_bf16.cpu");
  kernels::DeviceInfo vectors = avx512_device();
  vectors.isa.insert(vectors.isa.end(), {"avx512bw", "avx512_bf16"});
  kernels::DeviceInfo tiles = vectors;
  tiles.isa.insert(tiles.isa.end(), {"amx_tile", "amx_bf16"});
  for (const GemmShape& shape : {GemmShape{1024, 1024, 1024}, GemmShape{49, 512, 4608}, GemmShape{5, 70, 100}}) {
    const Workload workload{Op::kGemm, DataType::kBF16, shape};
    const auto space = bf16.space(workload, tiles);
    const auto config = bf16.default_config(workload, tiles, space);
    ASSERT_TRUE(space.is_valid(config)) << space.first_violation(config);
    const auto json = space.to_json(config);
    EXPECT_EQ(json.at("amx"), true);
    EXPECT_EQ(json.at("mr"), 16);
    EXPECT_EQ(json.at("nr"), 32);
    const std::int64_t kc = ss::ConfigView(space, config).split_factor("tile_kc", 1);
    EXPECT_TRUE(kc >= shape.K || (kc == 256 && shape.K % kc == 0)) << json.dump();
    EXPECT_NE(bf16.config_literal(ss::ConfigView(space, config)).find(".amx = true"), std::string::npos);
    std::mt19937_64 rng(3);
    for (const ss::Config& sampled : space.sample_valid_distinct(rng, 40)) {
      const ss::ConfigView v(space, sampled);
      EXPECT_TRUE(v.flag("amx"));
      EXPECT_TRUE(v.integer("mr") == 16 || v.integer("mr") == 32) << space.to_json(sampled);
      EXPECT_LE(v.integer("nr"), 48);
      EXPECT_EQ(v.split_factor("tile_kc", 1) % 32, 0);
    }
    const auto plain = bf16.space(workload, vectors);
    EXPECT_FALSE(ss::ConfigView(plain, bf16.default_config(workload, vectors, plain)).has("amx"));
    EXPECT_EQ(plain.to_json(bf16.default_config(workload, vectors, plain)).at("mr"), 6);
  }
}

// int8's default on tiles cuts K into the fewest blocks of equal depth up to 1024 (C is loaded and
// stored once a block, so a short last block is nearly a whole block's cost), else the fewest.
TEST(CpuGemmTemplate, Int8DefaultOnAmxTilesCutsTheDepthIntoEqualBlocks) {
  const auto& int8 = backends::find_template("gemm_int8.cpu");
  kernels::DeviceInfo tiles = avx512_device();
  tiles.isa.insert(tiles.isa.end(), {"avx512bw", "avx512_vnni", "amx_tile", "amx_int8"});
  for (const auto& [shape, want] : std::vector<std::pair<GemmShape, std::int64_t>>{
           {{196, 256, 2304}, 768}, {{1024, 1024, 1024}, 1024}, {{49, 512, 4608}, 768}, {{300, 64, 3000}, 1024},
           {{64, 64, 640}, 640}}) {
    const Workload workload{Op::kGemm, DataType::kI8, shape};
    const auto space = int8.space(workload, tiles);
    const auto config = int8.default_config(workload, tiles, space);
    ASSERT_TRUE(space.is_valid(config)) << space.first_violation(config);
    const ss::ConfigView view(space, config);
    EXPECT_EQ(view.integer("mr"), 16);
    EXPECT_EQ(std::min(view.split_factor("tile_kc", 1), shape.K), want) << space.to_json(config).dump();
  }
}

TEST(CpuGemmTemplate, DerivedFeaturesHaveStableNamesAndFiniteValues) {
  const Workload workload = gemm(196, 256, 2304);
  const ss::ConfigSpace space = cpu_gemm().space(workload, avx2_device(2));
  std::mt19937_64 rng(9);
  std::vector<std::string> names;
  for (const ss::Config& config : space.sample_valid_distinct(rng, 50)) {
    const auto features =
        cpu_gemm().derived_features(workload, avx2_device(2), ss::ConfigView(space, config));
    std::vector<std::string> these;
    for (const auto& [name, value] : features) {
      these.push_back(name);
      EXPECT_TRUE(std::isfinite(value)) << name;
    }
    if (names.empty()) names = these;
    EXPECT_EQ(these, names);
  }
  EXPECT_FALSE(names.empty());
}

TEST(CpuGemmTemplate, ConfigLiteralNamesEveryField) {
  const std::string literal = cpu::gemm_config_literal(cpu::GemmConfig{});
  for (const char* field : {".mc", ".nc", ".kc", ".mr", ".nr", ".lanes", ".pack_a", ".pack_b",
                            ".loop_order", ".unroll", ".threads", ".parallel"}) {
    EXPECT_NE(literal.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace optune::kernels
