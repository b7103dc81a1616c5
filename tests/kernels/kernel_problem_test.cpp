// A kernel file bound to a problem size and a device: workload keys, flops, bytes and counts, the
// search space (valid configs counted by hand for the transpose example), defines and launches,
// errors found only with the extents, and the cpu example compiled and checked per config.
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_problem.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kernel_file_fixture.hpp"

namespace optune::kernels {
namespace {

namespace fs = std::filesystem;
using search_space::Config;
using testing::KernelFileTest;
using testing::kValidOpenCLFile;
using testing::replaced;

const fs::path kExamples = fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels";

DeviceInfo opencl_device(std::int64_t max_work_group_size, std::int64_t local_mem_bytes,
                         std::vector<std::int64_t> max_work_item_sizes = {1024, 1024, 64}) {
  DeviceInfo device;
  device.kind = "opencl";
  device.name = "test device";
  device.cores = 132;
  device.max_work_group_size = max_work_group_size;
  device.local_mem_bytes = local_mem_bytes;
  device.max_work_item_sizes = std::move(max_work_item_sizes);
  device.preferred_vector_width = 1;
  return device;
}

DeviceInfo cpu_device(std::int64_t l2_bytes) {
  DeviceInfo device;
  device.kind = "cpu";
  device.name = "test cpu";
  device.arch = "x86_64";
  device.cores = 8;
  device.isa = {"avx2", "fma"};
  device.l2_bytes = l2_bytes;
  return device;
}

std::uint64_t valid_configs(const search_space::ConfigSpace& space) {
  std::uint64_t valid = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.from_index(i)) ? 1 : 0;
  return valid;
}

// The config with these knob values (by value, in knob order).
Config config_of(const search_space::ConfigSpace& space, const nlohmann::json& values) { return space.from_json(values); }

KernelProblem transpose(std::string_view shape, const DeviceInfo& device) {
  return KernelProblem(optune::backends::load_kernel_file(kExamples / "transpose.toml"), shape, device);
}

std::string bind_error(const KernelSpec& spec, std::string_view shape, const DeviceInfo& device) {
  try {
    KernelProblem problem(spec, shape, device);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(bound)";
}

TEST(KernelProblem, TransposeKeyTotalsAndArgs) {
  const KernelProblem problem = transpose("", opencl_device(1024, 49152));
  EXPECT_EQ(problem.workload_key(), "kernel.transpose.N4096.M4096");
  EXPECT_EQ(problem.flops(), 0);
  EXPECT_EQ(problem.bytes(), 8.0 * 4096 * 4096);
  ASSERT_EQ(problem.args().size(), 4u);
  EXPECT_EQ(problem.args()[0].count, 4096 * 4096);
  EXPECT_EQ(problem.args()[0].bytes, 4 * 4096 * 4096);
  EXPECT_EQ(problem.args()[0].init, BufferInit::kRandom);
  EXPECT_TRUE(problem.args()[1].is_output);
  EXPECT_FALSE(problem.args()[2].is_buffer());
  EXPECT_EQ(problem.args()[2].value, 4096);
  EXPECT_EQ(problem.args()[2].dtype, DataType::kI32);
  const LaunchSize reference{2, {4096, 4096, 1}, {1, 1, 1}, false};
  EXPECT_EQ(problem.reference_launch(), reference);
}

TEST(KernelProblem, ShapeOverridesKeepTheFilesOrder) {
  const KernelProblem problem = transpose(" M=512 , N = 1024", opencl_device(1024, 49152));
  EXPECT_EQ(problem.workload_key(), "kernel.transpose.N1024.M512");
  EXPECT_EQ(problem.extents(), (std::vector<Extent>{{"N", 1024}, {"M", 512}}));
  EXPECT_EQ(problem.args()[0].count, 1024 * 512);
  EXPECT_EQ(problem.args()[3].value, 512);
  EXPECT_EQ(problem.bytes(), 8.0 * 1024 * 512);
  EXPECT_EQ(transpose("N=64", opencl_device(1024, 49152)).workload_key(), "kernel.transpose.N64.M4096");
}

TEST(KernelProblem, RejectsBadShapes) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "transpose.toml");
  const DeviceInfo device = opencl_device(1024, 49152);
  const std::string file = (kExamples / "transpose.toml").string() + ": shape: ";
  EXPECT_EQ(bind_error(spec, "K=5", device), file + "unknown extent 'K' (transpose has N, M)");
  EXPECT_EQ(bind_error(spec, "N=0", device), file + "N=0 must be a whole number from 1 to 2147483647");
  EXPECT_EQ(bind_error(spec, "N=-4", device), file + "N=-4 must be a whole number from 1 to 2147483647");
  EXPECT_EQ(bind_error(spec, "N=4096.5", device), file + "N=4096.5 must be a whole number from 1 to 2147483647");
  EXPECT_EQ(bind_error(spec, "N=99999999999", device), file + "N=99999999999 must be a whole number from 1 to 2147483647");
  EXPECT_EQ(bind_error(spec, "N=8,N=16", device), file + "'N' is given twice");
  EXPECT_EQ(bind_error(spec, "N1024", device), file + "'N1024' is not NAME=VALUE");
}

TEST(KernelProblem, RejectsADeviceOfAnotherBackend) {
  const std::string error = bind_error(optune::backends::load_kernel_file(kExamples / "transpose.toml"), "", cpu_device(1 << 20));
  EXPECT_NE(error.find("transpose.toml: backend: opencl kernel, but the device 'test cpu' is cpu"), std::string::npos) << error;
}

// TILE in {8,16,32,64} x WPT in {1,2,4,8} x PAD in {0,1}: 32 configs. WPT always divides TILE.
// Work-group TILE*TILE/WPT; local memory (TILE+PAD)*TILE*4 bytes.
TEST(KernelProblem, TransposeSpaceHasTheValidConfigsCountedByHand) {
  // max_work_group_size 1024: TILE 64 needs WPT >= 4 (2 of 4); the rest pass (12 pairs).
  // 48 KiB: every tile fits. (12 + 2) pairs x 2 PAD = 28.
  const KernelProblem roomy = transpose("", opencl_device(1024, 49152));
  EXPECT_EQ(roomy.space().size(), 32u);
  EXPECT_EQ(valid_configs(roomy.space()), 28u);
  // 16 KiB: TILE 64 fits only without PAD (64*64*4 = 16384; 65*64*4 = 16640): 12 x 2 + 2 x 1 = 26.
  EXPECT_EQ(valid_configs(transpose("", opencl_device(1024, 16384)).space()), 26u);
  // max_work_group_size 256: TILE 8 and 16 all WPT (8 pairs), TILE 32 WPT 4, 8 (2), TILE 64
  // none (4096 / 8 = 512). 10 pairs x 2 PAD = 20.
  EXPECT_EQ(valid_configs(transpose("", opencl_device(256, 16384)).space()), 20u);
  // N = M = 48: only TILE 8 and 16 divide 48; 8 pairs x 2 PAD = 16.
  EXPECT_EQ(valid_configs(transpose("N=48,M=48", opencl_device(1024, 49152)).space()), 16u);
  // max_work_item_size_1 = 16 bounds local[1] = TILE: TILE 8 and 16 again, 16.
  EXPECT_EQ(valid_configs(transpose("", opencl_device(1024, 49152, {1024, 16, 16})).space()), 16u);
}

TEST(KernelProblem, NamesTheRuleAConfigBreaks) {
  const KernelProblem problem = transpose("", opencl_device(256, 16384));
  const auto& space = problem.space();
  EXPECT_EQ(space.first_violation(config_of(space, {{"TILE", 64}, {"WPT", 4}, {"PAD", 0}})),
            "TILE * TILE / WPT <= max_work_group_size");
  EXPECT_EQ(space.first_violation(config_of(space, {{"TILE", 16}, {"WPT", 2}, {"PAD", 1}})), "");
}

TEST(KernelProblem, GivesDefinesAndLaunchOfAConfig) {
  const KernelProblem problem = transpose("N=1024,M=512", opencl_device(1024, 49152));
  const Config config = config_of(problem.space(), {{"TILE", 32}, {"WPT", 4}, {"PAD", 1}});
  ASSERT_TRUE(problem.space().is_valid(config));
  EXPECT_EQ(problem.defines(config), (std::vector<KernelDefine>{{"TILE", "32"}, {"WPT", "4"}, {"PAD", "1"}}));
  EXPECT_EQ(problem.build_options(config), (std::vector<std::string>{"-DTILE=32", "-DWPT=4", "-DPAD=1"}));
  const LaunchSize launch = problem.launch(config);
  EXPECT_EQ(launch.dimensions, 2);
  EXPECT_EQ(launch.global, (std::array<std::int64_t, 3>{256, 512, 1}));  // N / WPT, M
  EXPECT_EQ(launch.local, (std::array<std::int64_t, 3>{8, 32, 1}));      // TILE / WPT, TILE
  EXPECT_TRUE(launch.has_local);
  std::vector<double> expected{1024, 512, 32, 4, 1, 1024, 49152, 132, 1, 1024, 1024, 64};
  EXPECT_EQ(problem.expression_values(config), expected);
}

// A launch that does not divide, is not whole, or does not fit the device makes the config
// invalid, and launch() names the field and the problem for it.
TEST_F(KernelFileTest, LaunchRuleMakesConfigsInvalid) {
  std::string text = kValidOpenCLFile;
  text = replaced(text, "WG = [32, 64]", "WG = [16, 32, 48, 64, 2048]\nSPLIT = [1, 5]");
  text = replaced(text, "rules = [\"N % WG == 0\"]", "rules = []");
  text = replaced(text, "global = [\"N\"]", "global = [\"N / SPLIT\"]");
  const KernelSpec spec = load(text);
  const KernelProblem problem(spec, "N=96", opencl_device(1024, 49152));
  const auto& space = problem.space();
  // SPLIT 5: 96 / 5 is no size. SPLIT 1: WG 16, 32, 48 divide 96; 64 does not; 2048 does not. x2 MODE.
  EXPECT_EQ(valid_configs(space), 6u);
  const auto launch_error = [&](const nlohmann::json& values) -> std::string {
    try {
      problem.launch(config_of(space, values));
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "(launched)";
  };
  const std::string file = (dir_ / "k.toml").string() + ": ";
  EXPECT_EQ(launch_error({{"WG", 64}, {"SPLIT", 1}, {"MODE", "fast"}}),
            file + "launch.global[0]: 96 is not a multiple of the local size 64");
  EXPECT_EQ(launch_error({{"WG", 16}, {"SPLIT", 5}, {"MODE", "fast"}}), file + "launch.global[0]: \"N / SPLIT\" is 19.2, not an integer");
  EXPECT_EQ(launch_error({{"WG", 48}, {"SPLIT", 1}, {"MODE", "exact"}}), "(launched)");
  // 4096 is a multiple of 2048, but the device takes work-groups of at most 1024.
  const KernelProblem large(spec, "N=4096", opencl_device(1024, 49152));
  const Config too_large = config_of(large.space(), {{"WG", 2048}, {"SPLIT", 1}, {"MODE", "fast"}});
  EXPECT_FALSE(large.space().is_valid(too_large));
  EXPECT_THROW(large.launch(too_large), std::invalid_argument);
  EXPECT_EQ(large.defines(too_large).back(), (KernelDefine{"MODE", "fast"}));
}

TEST_F(KernelFileTest, BindingRejectsCountsAndValuesThatDoNotFit) {
  const DeviceInfo device = opencl_device(1024, 49152);
  std::string huge = kValidOpenCLFile;
  huge = replaced(huge, "count = \"N\" }", "count = \"N * N * N\" }");
  const std::string overflow = bind_error(load(huge), "N=4096", device);
  EXPECT_NE(overflow.find("k.toml: args[0].count: \"N * N * N\" is 68719476736 elements, more than the 8 GiB"), std::string::npos)
      << overflow;
  std::string fraction = kValidOpenCLFile;
  fraction = replaced(fraction, "value = \"N\"", "value = \"N / 3\"");
  EXPECT_NE(bind_error(load(fraction), "N=1024", device).find("args[2].value: \"N / 3\" is 341.333333333333, not an integer"),
            std::string::npos);
  std::string byte = kValidOpenCLFile;
  byte = replaced(byte, "dtype = \"i32\"", "dtype = \"u8\"");
  EXPECT_NE(bind_error(load(byte), "N=1024", device).find("args[2].value: \"N\" is 1024, outside u8"), std::string::npos);
  EXPECT_EQ(bind_error(load(byte), "N=255", device), "(bound)");
  std::string empty = kValidOpenCLFile;
  empty = replaced(empty, "count = \"N\" }", "count = \"N - 1024\" }");
  EXPECT_NE(bind_error(load(empty), "", device).find("args[0].count: \"N - 1024\" is 0; a buffer needs at least 1 element"),
            std::string::npos);
  const std::string negative = bind_error(load("flops = \"N - 2048\"\n" + std::string(kValidOpenCLFile)), "", device);
  EXPECT_NE(negative.find("k.toml: flops: \"N - 2048\" is -1024"), std::string::npos) << negative;
}

TEST_F(KernelFileTest, ExpectedFileMustHoldTheOutput) {
  write("out.bin", std::string(4 * 1024, '\0'));
  const KernelSpec spec = load(std::string(kValidOpenCLFile) + "[check]\nexpected = \"out.bin\"\n");
  EXPECT_EQ(bind_error(spec, "", opencl_device(1024, 49152)), "(bound)");
  const std::string error = bind_error(spec, "N=2048", opencl_device(1024, 49152));
  EXPECT_NE(error.find("check.expected: " + (dir_ / "out.bin").string() + " has 4096 bytes; output 'out' has 8192"),
            std::string::npos) << error;
}

TEST_F(KernelFileTest, ReferenceLaunchIsCheckedWithTheExtents) {
  const KernelSpec spec = load(std::string(kValidOpenCLFile) + "[check]\nreference = \"k\"\nglobal = [\"N\"]\nlocal = [\"100\"]\n");
  EXPECT_EQ(bind_error(spec, "N=1000", opencl_device(1024, 49152)), "(bound)");
  EXPECT_NE(bind_error(spec, "N=1024", opencl_device(1024, 49152)).find("check.global[0]: 1024 is not a multiple of the local size 100"),
            std::string::npos);
}

TEST(KernelWorkloadKey, RoundTrips) {
  const std::vector<Extent> extents{{"N", 4096}, {"M", 512}, {"batch", 1}};
  EXPECT_EQ(kernel_workload_key("transpose", extents), "kernel.transpose.N4096.M512.batch1");
  const KernelWorkloadKey parsed = parse_kernel_workload_key("kernel.transpose.N4096.M512.batch1");
  EXPECT_EQ(parsed.kernel_name, "transpose");
  EXPECT_EQ(parsed.extents, extents);
  for (const char* bad : {"gemm.f32.M1.N1.K1", "kernel.transpose", "kernel.transpose.4096", "kernel.transpose.N",
                          "kernel.transpose.N0", "kernel..N4"})
    EXPECT_THROW(parse_kernel_workload_key(bad), std::invalid_argument) << bad;
}

// l2_bytes bounds BLOCK: 12 * BLOCK <= l2_bytes.
TEST(KernelProblem, SaxpySpaceFollowsTheCache) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "saxpy_cpu.toml");
  const KernelProblem roomy(spec, "", cpu_device(512 * 1024));
  EXPECT_EQ(roomy.workload_key(), "kernel.saxpy.N1048576");
  EXPECT_EQ(roomy.flops(), 2.0 * 1048576);
  EXPECT_EQ(roomy.bytes(), 12.0 * 1048576);
  EXPECT_EQ(roomy.args()[3].value, 2.5);
  EXPECT_EQ(roomy.space().size(), 16u);
  EXPECT_EQ(valid_configs(roomy.space()), 16u);  // 12 * 16384 = 196608 fits 512 KiB
  // 32 KiB: BLOCK 256 (3072 bytes) and 1024 (12288) fit, 4096 (49152) does not: 2 x 4 UNROLL.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", cpu_device(32 * 1024)).space()), 8u);
  EXPECT_THROW(KernelProblem(spec, "", cpu_device(32 * 1024)).launch(Config{{0, 0}}), std::logic_error);
}

// The cpu example is a correct kernel: each valid config, compiled as the cpu backend will (the
// knobs as -D defines, the file's build options), matches the reference on a size with tails.
TEST(KernelProblem, SaxpyExampleMatchesItsReferenceForEachConfig) {
  const KernelProblem problem(optune::backends::load_kernel_file(kExamples / "saxpy_cpu.toml"), "N=1000", cpu_device(512 * 1024));
  const fs::path dir = fs::temp_directory_path() / ("optune_saxpy_example_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int n = static_cast<int>(problem.args()[4].value);
  const float a = static_cast<float>(problem.args()[3].value);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>((i * 37) % 200) / 100.0f - 1.0f;  // in [-1, 1), as random init is
    y[i] = static_cast<float>(i);                               // iota
  }
  using Saxpy = void (*)(const float*, const float*, float*, float, std::int32_t);
  for (std::uint64_t index = 0; index < problem.space().size(); index += 5) {  // 4 of the 16 configs
    const Config config = problem.space().from_index(index);
    ASSERT_TRUE(problem.space().is_valid(config));
    const fs::path library = dir / ("saxpy_" + std::to_string(index) + ".so");
    std::string command = "c++ -shared -fPIC";
    for (const std::string& option : problem.build_options(config)) command += " " + option;
    command += " " + problem.spec().source.string() + " -o " + library.string();
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    const auto entry = reinterpret_cast<Saxpy>(::dlsym(handle, problem.spec().entry.c_str()));
    const auto reference = reinterpret_cast<Saxpy>(::dlsym(handle, problem.spec().check.reference.c_str()));
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(reference, nullptr);
    std::vector<float> z(n, std::nanf("")), expected(n);
    entry(x.data(), y.data(), z.data(), a, n);
    reference(x.data(), y.data(), expected.data(), a, n);
    for (int i = 0; i < n; ++i)
      ASSERT_LE(std::fabs(z[i] - expected[i]), problem.spec().check.atol + problem.spec().check.rtol * std::fabs(expected[i]))
          << "config " << index << ", element " << i;
    ::dlclose(handle);
  }
  fs::remove_all(dir);
}

// ---- conv2d, reduction, axpy_f16, stencil_cpu: keys, totals, spaces counted by hand ----

KernelProblem example(const std::string& file, std::string_view shape, const DeviceInfo& device) {
  return KernelProblem(optune::backends::load_kernel_file(kExamples / file), shape, device);
}

TEST(KernelProblem, Conv2dBindsAndCoversEdgesWithWholeWorkGroups) {
  const KernelProblem problem = example("conv2d.toml", "W=100,H=30", opencl_device(1024, 49152));
  EXPECT_EQ(problem.workload_key(), "kernel.conv2d.W100.H30");
  EXPECT_EQ(problem.flops(), 2.0 * 17 * 17 * 100 * 30);
  ASSERT_EQ(problem.args().size(), 5u);
  EXPECT_EQ(problem.args()[0].count, 116 * 46);  // the input with its 16-pixel halo
  EXPECT_EQ(problem.args()[1].count, 17 * 17);
  EXPECT_EQ(problem.args()[2].count, 100 * 30);
  const Config config =
      config_of(problem.space(), {{"BLOCK_X", 32}, {"BLOCK_Y", 4}, {"TILE_X", 2}, {"TILE_Y", 2}, {"USE_LOCAL", 1}, {"UNROLL", 1}});
  ASSERT_TRUE(problem.space().is_valid(config));
  const LaunchSize launch = problem.launch(config);
  // Tiles of 64 x 8 outputs: 2 cover 100 columns, 4 cover 30 rows.
  EXPECT_EQ(launch.global, (std::array<std::int64_t, 3>{64, 16, 1}));
  EXPECT_EQ(launch.local, (std::array<std::int64_t, 3>{32, 4, 1}));
  EXPECT_EQ(problem.reference_launch()->global, (std::array<std::int64_t, 3>{100, 30, 1}));
}

// BLOCK_X {16,32,64,128} x BLOCK_Y {1,2,4,8} x TILE_X, TILE_Y {1,2,4} x USE_LOCAL x UNROLL: 576.
// Work-groups of 64 to 1024 work-items: 16 x {4,8}, 32 x {2,4,8}, 64 x 4 and 128 x 4 = 13 blocks;
// TILE_X * TILE_Y <= 8 leaves 8 of the 9 tiles (not 4 x 4): 104 pairs, 208 with UNROLL.
TEST(KernelProblem, Conv2dSpaceHasTheValidConfigsCountedByHand) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "conv2d.toml");
  // No local memory reported (0): only USE_LOCAL 0, 208.
  const KernelProblem bare(spec, "", opencl_device(1024, 0));
  EXPECT_EQ(bare.space().size(), 576u);
  EXPECT_EQ(valid_configs(bare.space()), 208u);
  // 2 MiB (PoCL): every input tile fits, the largest (128 * 2 + 16) x (8 * 4 + 16) floats: 416.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(4096, 2 << 20)).space()), 416u);
  // 48 KiB = 12288 floats: (BLOCK_X * TILE_X + 16) x (BLOCK_Y * TILE_Y + 16) exceeds it for
  // 528 x (>= 24): 128 x 4 with BLOCK_Y * TILE_Y >= 8 (BLOCK_Y 4 TILE_Y 2, 8 x 1, 8 x 2: 3), and
  // 272 x 48: 128 x 2 with 8 x 4 (1). 4 tiles x 2 UNROLL fewer: 408.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(1024, 49152)).space()), 408u);
  // Work-groups of at most 256 drop 64 x 8, 128 x 4 and 128 x 8: 10 blocks x 8 x 2 = 160.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(256, 0)).space()), 160u);
}

TEST(KernelProblem, ReductionBindsOnePartialSumPerWorkGroup) {
  const KernelProblem problem = example("reduction.toml", "", opencl_device(1024, 49152));
  EXPECT_EQ(problem.workload_key(), "kernel.reduction.N16777216.PARTS1024");
  EXPECT_EQ(problem.args()[1].count, 1024);
  EXPECT_EQ(problem.args()[3].value, 1024);
  const Config config = config_of(problem.space(), {{"WG", 256}, {"VW", 4}, {"UNROLL", 2}, {"ACCESS", "blocked"}});
  EXPECT_EQ(problem.build_options(config),
            (std::vector<std::string>{"-DWG=256", "-DVW=4", "-DUNROLL=2", "-DACCESS=blocked"}));
  EXPECT_EQ(problem.launch(config).global, (std::array<std::int64_t, 3>{1024 * 256, 1, 1}));
  EXPECT_EQ(problem.reference_launch()->global, (std::array<std::int64_t, 3>{1024, 1, 1}));
}

// WG 6 x VW 4 x UNROLL 3 x ACCESS 2 = 144.
TEST(KernelProblem, ReductionSpaceHasTheValidConfigsCountedByHand) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "reduction.toml");
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(1024, 49152)).space()), 144u);
  // Work-groups of at most 256: WG 32 to 256, 4 x 4 x 3 x 2 = 96.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(256, 49152)).space()), 96u);
  // Parts of 100 floats: VW 8 does not divide them; 6 x 3 x 3 x 2 = 108.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "N=1000,PARTS=10", opencl_device(1024, 49152)).space()), 108u);
  // Parts of 12.5 floats: none.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "N=100,PARTS=8", opencl_device(1024, 49152)).space()), 0u);
}

TEST(KernelProblem, AxpyF16BindsHalfBuffers) {
  const KernelProblem problem = example("axpy_f16.toml", "N=4096", opencl_device(256, 49152));
  EXPECT_EQ(problem.workload_key(), "kernel.axpy_f16.N4096");
  EXPECT_EQ(problem.args()[0].dtype, DataType::kF16);
  EXPECT_EQ(problem.args()[2].bytes, 2 * 4096);
  EXPECT_EQ(problem.args()[3].value, 0.75);
  EXPECT_EQ(problem.bytes(), 6.0 * 4096);
  const Config config = config_of(problem.space(), {{"WG", 128}, {"VW", 4}, {"WPT", 2}, {"MATH", "f32"}});
  EXPECT_EQ(problem.launch(config).global, (std::array<std::int64_t, 3>{512, 1, 1}));  // 4096 / (4 * 2)
}

// WG {64..512} x VW {1,2,4,8} x WPT {1,2,4,8} x MATH 2 = 128; all divide 2^24.
TEST(KernelProblem, AxpyF16SpaceHasTheValidConfigsCountedByHand) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "axpy_f16.toml");
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", opencl_device(1024, 49152)).space()), 128u);
  // N = 4096 and work-groups of at most 256: WG * VW * WPT <= 4096 (powers of two). WG 64: all 16
  // (VW, WPT); 128: VW * WPT <= 32, 15; 256: <= 16, 13. 44 x 2 MATH = 88.
  EXPECT_EQ(valid_configs(KernelProblem(spec, "N=4096", opencl_device(256, 49152)).space()), 88u);
}

TEST(KernelProblem, StencilBindsTheGridWithItsHalo) {
  const KernelProblem problem = example("stencil_cpu.toml", "N=30,M=50", cpu_device(512 * 1024));
  EXPECT_EQ(problem.workload_key(), "kernel.stencil.N30.M50");
  EXPECT_EQ(problem.args()[0].count, 32 * 52);
  EXPECT_EQ(problem.args()[1].count, 30 * 50);
  EXPECT_EQ(problem.args()[2].value, 0.5);
  EXPECT_EQ(problem.args()[3].value, 0.125);
  EXPECT_EQ(problem.flops(), 6.0 * 30 * 50);
}

// BX {64,256,1024,4096} x BY {4,16,64,256} x UNROLL 4 x THREADS {1,2,4} = 192. A block needs
// about 8 * BX * BY bytes of L2 (its input with the halo, its output).
TEST(KernelProblem, StencilSpaceHasTheValidConfigsCountedByHand) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "stencil_cpu.toml");
  // 512 KiB, 8 cores: BX 64 with every BY (4), 256 up to 64 (3; 256 x 256 needs 528400 bytes),
  // 1024 up to 16 (2), 4096 with 4 (1): 10 blocks x 4 UNROLL x 3 THREADS = 120.
  const KernelProblem problem(spec, "", cpu_device(512 * 1024));
  EXPECT_EQ(problem.space().size(), 192u);
  EXPECT_EQ(valid_configs(problem.space()), 120u);
  // 2 cores: THREADS 1 and 2 only, 80.
  DeviceInfo two_cores = cpu_device(512 * 1024);
  two_cores.cores = 2;
  EXPECT_EQ(valid_configs(KernelProblem(spec, "", two_cores).space()), 80u);
}

// The stencil is a correct kernel: configs compiled as the cpu backend will (the knobs as -D
// defines, the file's build options) match the reference on a grid no block divides.
TEST(KernelProblem, StencilExampleMatchesItsReferenceForSeveralConfigs) {
  const KernelProblem problem(optune::backends::load_kernel_file(kExamples / "stencil_cpu.toml"), "N=37,M=150", cpu_device(512 * 1024));
  const auto& space = problem.space();
  const fs::path dir = fs::temp_directory_path() / ("optune_stencil_example_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int n = 37, m = 150;
  const float center = static_cast<float>(problem.args()[2].value), side = static_cast<float>(problem.args()[3].value);
  std::vector<float> in((n + 2) * (m + 2));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 200) / 100.0f - 1.0f;
  using Stencil = void (*)(const float*, float*, float, float, std::int32_t, std::int32_t);
  std::vector<Config> configs = {
      config_of(space, {{"BX", 64}, {"BY", 4}, {"UNROLL", 1}, {"THREADS", 1}}),
      config_of(space, {{"BX", 64}, {"BY", 16}, {"UNROLL", 8}, {"THREADS", 4}}),    // more threads than rows of blocks
      config_of(space, {{"BX", 256}, {"BY", 4}, {"UNROLL", 4}, {"THREADS", 2}}),    // one block wider than the grid
      config_of(space, {{"BX", 1024}, {"BY", 16}, {"UNROLL", 2}, {"THREADS", 4}}),
  };
  for (const Config& config : configs) {
    ASSERT_EQ(space.first_violation(config), "") << space.to_json(config).dump();
    const fs::path library = dir / ("stencil_" + std::to_string(space.to_index(config)) + ".so");
    std::string command = "c++ -shared -fPIC";
    for (const std::string& option : problem.build_options(config)) command += " " + option;
    command += " " + problem.spec().source.string() + " -o " + library.string();
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    const auto entry = reinterpret_cast<Stencil>(::dlsym(handle, problem.spec().entry.c_str()));
    const auto reference = reinterpret_cast<Stencil>(::dlsym(handle, problem.spec().check.reference.c_str()));
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(reference, nullptr);
    std::vector<float> out(n * m, std::nanf("")), expected(n * m);
    entry(in.data(), out.data(), center, side, n, m);
    reference(in.data(), expected.data(), center, side, n, m);
    // The reference itself: one point by hand (row 5, column 7 of the interior).
    const auto at = [&](int row, int column) { return in[row * (m + 2) + column]; };
    EXPECT_FLOAT_EQ(expected[5 * m + 7], center * at(6, 8) + side * (at(5, 8) + at(7, 8) + at(6, 7) + at(6, 9)));
    for (int i = 0; i < n * m; ++i)
      ASSERT_LE(std::fabs(out[i] - expected[i]), problem.spec().check.atol + problem.spec().check.rtol * std::fabs(expected[i]))
          << space.to_json(config).dump() << ", element " << i;  // NaN (unwritten) fails too
    ::dlclose(handle);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace optune::kernels
