// Kernel files of a grid/block backend (LaunchModel::kGridBlock, Kernel Tuner's terms, as the
// coming CUDA backend's): `[launch] grid`, `block` (by default the block_size_x/_y/_z knobs) and
// `shared_memory`, the space they shape, template entries, and the forms refused. No built backend
// launches so yet, so the files name a test-only backend, "gridtest", given to the parser in a
// KernelFileBackends of its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel_file_fixture.hpp"
#include "optune/kernels/kernel_digest.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/measure/kernel_operands.hpp"

namespace optune::kernels {
namespace {

using search_space::Config;
using testing::KernelFileTest;
using testing::replaced;

double work_item_size(const DeviceInfo& device, std::size_t dimension) {
  return dimension < device.max_work_item_sizes.size() ? static_cast<double>(device.max_work_item_sizes[dimension]) : 0;
}

// CUDA-like limits, read from the DeviceInfo fields an OpenCL device fills.
const KernelFileTraits kGridTraits{
    .backend = "gridtest",
    .source_extensions = {".cu"},
    .device_limits =
        {
            {"max_threads_per_block", [](const DeviceInfo& d) { return static_cast<double>(d.max_work_group_size); }},
            {"max_shared_memory_per_block", [](const DeviceInfo& d) { return static_cast<double>(d.local_mem_bytes); }},
        },
    .launch = LaunchModel::kGridBlock,
    .work_group_limits =
        [](const DeviceInfo& d) {
          WorkGroupLimits limits;
          limits.max_size = static_cast<double>(d.max_work_group_size);
          for (std::size_t i = 0; i < 3; ++i) limits.max_per_dimension[i] = work_item_size(d, i);
          limits.max_shared_memory = static_cast<double>(d.local_mem_bytes);
          return limits;
        },
    .template_entries = true,
};

const KernelFileBackends kGridBackends({&kGridTraits});

DeviceInfo grid_device(std::vector<std::int64_t> max_block_dims = {1024, 1024, 64}) {
  DeviceInfo device;
  device.kind = "gridtest";
  device.name = "test gpu";
  device.cores = 132;
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = std::move(max_block_dims);
  device.local_mem_bytes = 49152;
  return device;
}

// A 2-D grid of blocks over an N x M problem; tests change one thing in it.
const char* kValidGridFile = R"toml(name = "g"
backend = "gridtest"
source = "g.cu"
entry = "g"
args = [
  { name = "in", kind = "buffer", dtype = "f32", count = "N * M" },
  { name = "out", kind = "buffer", dtype = "f32", count = "N * M", output = true },
]
[extents]
N = 1000
M = 64
[knobs]
block_size_x = [16, 32, 64]
block_size_y = [1, 2, 4]
[launch]
grid = ["ceil_div(N, block_size_x)", "ceil_div(M, block_size_y)"]
)toml";

std::vector<std::string> texts(const std::vector<Expression>& expressions) {
  std::vector<std::string> result;
  for (const Expression& expression : expressions) result.push_back(expression.text());
  return result;
}

std::uint64_t valid_configs(const search_space::ConfigSpace& space) {
  std::uint64_t valid = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.from_index(i)) ? 1 : 0;
  return valid;
}

class GridKernelFileTest : public KernelFileTest {
 protected:
  void SetUp() override {
    KernelFileTest::SetUp();
    write("g.cu", "template <typename T, int TILE> __global__ void g(const T* in, T* out) {}\n");
  }

  KernelSpec load_grid(const std::string& toml) const { return load_kernel_file(write("g.toml", toml), kGridBackends); }

  KernelProblem bind(const std::string& toml, const DeviceInfo& device = grid_device()) const {
    return KernelProblem(load_grid(toml), "", device);
  }

  std::string grid_error_of(const std::string& toml) const {
    return testing::message_of([&] { load_grid(toml); });
  }
};

std::string launch_error(const KernelProblem& problem, const Config& config) {
  return testing::message_of([&] { problem.launch(config); }, "(launched)");
}

TEST_F(GridKernelFileTest, BlockDefaultsToTheBlockSizeKnobs) {
  const KernelSpec spec = load_grid(kValidGridFile);
  ASSERT_TRUE(spec.launch.has_value());
  EXPECT_EQ(texts(spec.launch->global), (std::vector<std::string>{"ceil_div(N, block_size_x)", "ceil_div(M, block_size_y)"}));
  EXPECT_EQ(texts(spec.launch->local), (std::vector<std::string>{"block_size_x", "block_size_y"}));
  EXPECT_FALSE(spec.launch->shared_memory.has_value());
}

TEST_F(GridKernelFileTest, DefaultBlockIsOneWhereABlockSizeKnobIsAbsent) {
  const KernelSpec spec = load_grid(replaced(replaced(kValidGridFile, "block_size_y = [1, 2, 4]", "ROWS = [1, 2]"),
                                             "ceil_div(M, block_size_y)", "M / ROWS"));
  EXPECT_EQ(texts(spec.launch->local), (std::vector<std::string>{"block_size_x", "1"}));
}

TEST_F(GridKernelFileTest, GridsRoundUpPerConfig) {
  const KernelProblem problem = bind(kValidGridFile);
  const LaunchSize launch = problem.launch(problem.space().from_json({{"block_size_x", 64}, {"block_size_y", 4}}));
  EXPECT_EQ(launch.dimensions, 2);
  EXPECT_EQ(launch.global, (std::array<std::int64_t, 3>{16, 16, 1}));  // ceil(1000 / 64) blocks, 64 / 4
  EXPECT_EQ(launch.local, (std::array<std::int64_t, 3>{64, 4, 1}));
  EXPECT_TRUE(launch.has_local);
  EXPECT_EQ(launch.shared_memory_bytes, 0);
  const LaunchSize small = problem.launch(problem.space().from_json({{"block_size_x", 16}, {"block_size_y", 1}}));
  EXPECT_EQ(small.global, (std::array<std::int64_t, 3>{63, 64, 1}));
  EXPECT_EQ(valid_configs(problem.space()), 9u);  // no divisibility rule: 1000 is no multiple of 16
}

TEST_F(GridKernelFileTest, ExplicitBlockAndSharedMemoryPerConfig) {
  const std::string text = replaced(replaced(kValidGridFile, "block_size_x = [16, 32, 64]\nblock_size_y = [1, 2, 4]",
                                             "TX = [16, 32]\nTY = [2, 8]"),
                                    "grid = [\"ceil_div(N, block_size_x)\", \"ceil_div(M, block_size_y)\"]",
                                    "grid = [\"ceil_div(N, TX)\", \"M / TY\"]\nblock = [\"TX\", \"TY\"]\n"
                                    "shared_memory = \"TX * TY * 4\"");
  const KernelProblem problem = bind(text);
  EXPECT_EQ(texts(problem.spec().launch->local), (std::vector<std::string>{"TX", "TY"}));
  const LaunchSize launch = problem.launch(problem.space().from_json({{"TX", 32}, {"TY", 8}}));
  EXPECT_EQ(launch.global, (std::array<std::int64_t, 3>{32, 8, 1}));
  EXPECT_EQ(launch.local, (std::array<std::int64_t, 3>{32, 8, 1}));
  EXPECT_EQ(launch.shared_memory_bytes, 32 * 8 * 4);
  EXPECT_EQ(problem.launch(problem.space().from_json({{"TX", 16}, {"TY", 2}})).shared_memory_bytes, 16 * 2 * 4);
}

TEST_F(GridKernelFileTest, SharedMemoryIsPartOfTheKernelsDigest) {
  const std::string with = replaced(kValidGridFile, "grid = [", "shared_memory = \"block_size_x * 4\"\ngrid = [");
  const std::string more = replaced(kValidGridFile, "grid = [", "shared_memory = \"block_size_x * 8\"\ngrid = [");
  const std::string plain = kernel_digest(load_grid(kValidGridFile));
  EXPECT_NE(kernel_digest(load_grid(with)), plain);
  EXPECT_NE(kernel_digest(load_grid(with)), kernel_digest(load_grid(more)));
  EXPECT_EQ(kernel_digest(load_grid(kValidGridFile)), plain);
}

TEST_F(GridKernelFileTest, BlocksBeyondTheDeviceAreInvalidInTheSpace) {
  const std::string text = replaced(kValidGridFile, "block_size_x = [16, 32, 64]", "block_size_x = [256, 512, 1024]");
  const KernelProblem problem = bind(text);
  EXPECT_EQ(problem.space().size(), 9u);
  EXPECT_EQ(valid_configs(problem.space()), 6u);  // threads 256..1024 of 1024: 256 x 1/2/4, 512 x 1/2, 1024 x 1
  const Config too_many = problem.space().from_json({{"block_size_x", 512}, {"block_size_y", 4}});
  EXPECT_FALSE(problem.space().is_valid(too_many));
  const std::string error = launch_error(problem, too_many);
  EXPECT_NE(error.find("launch.block: a block of 2048 threads exceeds the device's max_threads_per_block 1024"),
            std::string::npos) << error;

  const KernelProblem narrow = bind(text, grid_device({1024, 2, 64}));  // at most 2 threads in y
  EXPECT_EQ(valid_configs(narrow.space()), 5u);                         // 256 x 1/2, 512 x 1/2, 1024 x 1
  const std::string narrow_error = launch_error(narrow, narrow.space().from_json({{"block_size_x", 256}, {"block_size_y", 4}}));
  EXPECT_NE(narrow_error.find("launch.block[1]: 4 threads exceed the device's max_block_dim_y 2"), std::string::npos)
      << narrow_error;
}

TEST_F(GridKernelFileTest, SharedMemoryBeyondTheDeviceIsInvalidInTheSpace) {
  const std::string text = replaced(replaced(kValidGridFile, "block_size_y = [1, 2, 4]", "block_size_y = [1, 2, 4]\nTILE = [16, 64, 128]"),
                                    "grid = [", "shared_memory = \"TILE * TILE * 4\"\ngrid = [");
  const KernelProblem problem = bind(text);
  EXPECT_EQ(problem.space().size(), 27u);
  EXPECT_EQ(valid_configs(problem.space()), 18u);  // 128 * 128 * 4 bytes is more than 49152
  const Config too_much = problem.space().from_json({{"block_size_x", 16}, {"block_size_y", 1}, {"TILE", 128}});
  EXPECT_FALSE(problem.space().is_valid(too_much));
  const std::string error = launch_error(problem, too_much);
  EXPECT_NE(error.find("launch.shared_memory: 65536 bytes exceed the device's max_shared_memory_per_block 49152"),
            std::string::npos) << error;
  EXPECT_EQ(problem.launch(problem.space().from_json({{"block_size_x", 16}, {"block_size_y", 1}, {"TILE", 64}})).shared_memory_bytes,
            64 * 64 * 4);

  const KernelProblem negative = bind(replaced(text, "TILE * TILE * 4", "TILE - 32"));
  EXPECT_EQ(valid_configs(negative.space()), 18u);  // TILE 16 asks for -16 bytes
  const std::string negative_error =
      launch_error(negative, negative.space().from_json({{"block_size_x", 16}, {"block_size_y", 1}, {"TILE", 16}}));
  EXPECT_NE(negative_error.find("launch.shared_memory: \"TILE - 32\" is -16; bytes must be at least 0"), std::string::npos)
      << negative_error;
}

TEST_F(GridKernelFileTest, TemplateEntriesTakeTheConfigsValues) {
  const std::string text =
      replaced(kValidGridFile, "entry = \"g\"", "entry = \"g<float, block_size_x, N, std::size_t, block_size_xx>\"") +
      "[check]\nreference = \"ref<float, N>\"\ngrid = [\"ceil_div(N, 256)\"]\nblock = [\"256\"]\nshared_memory = \"1024\"\n";
  const KernelProblem problem = bind(text);
  const Config config = problem.space().from_json({{"block_size_x", 32}, {"block_size_y", 2}});
  // Whole tokens only: block_size_xx is no knob, and a name after '::' is a scope's member.
  EXPECT_EQ(problem.entry(config), "g<float, 32, 1000, std::size_t, block_size_xx>");
  EXPECT_EQ(problem.reference_entry(config), "ref<float, 1000>");
  EXPECT_EQ(problem.reference_launch(), (LaunchSize{1, {4, 1, 1}, {256, 1, 1}, true, 1024}));

  const KernelProblem plain = bind(kValidGridFile);
  EXPECT_EQ(plain.entry(config), "g");
  EXPECT_EQ(plain.reference_entry(config), "");
}

TEST_F(GridKernelFileTest, TemplateEntryWithTheExamplesTileKnob) {
  const std::string text = replaced(replaced(kValidGridFile, "entry = \"g\"", "entry = \"k<float, TILE>\""),
                                    "block_size_y = [1, 2, 4]", "block_size_y = [1, 2, 4]\nTILE = [16, 32]");
  const KernelProblem problem = bind(text);
  EXPECT_EQ(problem.entry(problem.space().from_json({{"block_size_x", 16}, {"block_size_y", 1}, {"TILE", 16}})), "k<float, 16>");
}

TEST_F(GridKernelFileTest, TheReferenceLaunchReachesTheWorkerWithItsSharedMemory) {
  const std::string check = "[check]\nreference = \"ref\"\ngrid = [\"4\"]\nblock = [\"256\"]\n";
  const KernelProblem with = bind(std::string(kValidGridFile) + check + "shared_memory = \"1024\"\n");
  const nlohmann::json json = measure::kernel_operands_spec(with, "source", "");
  EXPECT_EQ(json.at("check").at("launch").at("shared_memory_bytes"), 1024);
  EXPECT_EQ(json.get<measure::KernelOperandsSpec>().check.launch.shared_memory_bytes, 1024);

  // Without shared memory the JSON is what it was before grid/block launches.
  const nlohmann::json without = measure::kernel_operands_spec(bind(std::string(kValidGridFile) + check), "source", "");
  EXPECT_FALSE(without.at("check").at("launch").contains("shared_memory_bytes"));
  EXPECT_EQ(without.get<measure::KernelOperandsSpec>().check.launch.shared_memory_bytes, 0);
}

// One refused grid/block file: kValidGridFile with `find` replaced by `replace` (appended when
// `find` is empty), and the one-line message it must give.
struct RefusedGridCase {
  const char* name;
  const char* find;
  const char* replace;
  const char* message;
};

const RefusedGridCase kRefusedGridCases[] = {
    {"GridMissing", "grid = [\"ceil_div(N, block_size_x)\", \"ceil_div(M, block_size_y)\"]", "block = [\"32\"]",
     "launch.grid: missing"},
    {"LaunchMissing", "[launch]\ngrid = [\"ceil_div(N, block_size_x)\", \"ceil_div(M, block_size_y)\"]\n", "",
     "launch: missing; a gridtest kernel needs a grid (blocks) and a block (threads)"},
    {"BlockCountDiffersFromGrid", "", "block = [\"block_size_x\"]\n", "launch.block: has 1 dimensions, grid 2"},
    {"NoBlockAndNoBlockSizeX", "block_size_x = [16, 32, 64]\nblock_size_y = [1, 2, 4]\n[launch]\ngrid = [\"ceil_div(N, block_size_x)\"",
     "BX = [16, 32, 64]\nblock_size_y = [1, 2, 4]\n[launch]\ngrid = [\"ceil_div(N, BX)\"",
     "launch.block: missing, and there is no knob block_size_x to default it to (Kernel Tuner's block_size_names)"},
    {"DefaultBlockWiderThanTheGrid", "grid = [\"ceil_div(N, block_size_x)\", \"ceil_div(M, block_size_y)\"]",
     "grid = [\"ceil_div(N, block_size_x)\"]",
     "launch.block: missing, and knob block_size_y makes the block 2-dimensional, but launch.grid has 1"},
    {"StringBlockSizeKnob", "block_size_y = [1, 2, 4]\n[launch]\ngrid = [\"ceil_div(N, block_size_x)\", \"ceil_div(M, block_size_y)\"]",
     "block_size_y = [\"one\", \"two\"]\n[launch]\ngrid = [\"ceil_div(N, block_size_x)\", \"M\"]",
     "launch.block: missing, and knob block_size_y, its default, has strings for values"},
    {"NDRangeGlobal", "", "global = [\"N\"]\n", "launch.global: a gridtest kernel launches a grid of blocks: give grid and block"},
    {"NDRangeLocal", "", "local = [\"32\"]\n", "launch.local: a gridtest kernel launches a grid of blocks"},
    {"SharedMemoryNotAnExpression", "", "shared_memory = \"4 *\"\n", "launch.shared_memory: cannot parse \"4 *\""},
    {"ReferenceWithGlobal", "", "[check]\nreference = \"g\"\nglobal = [\"N\"]\n",
     "check.global: a gridtest reference launches a grid of blocks: give grid and block"},
    {"ReferenceWithoutBlock", "", "[check]\nreference = \"g\"\ngrid = [\"N\"]\n", "check.block: missing"},
    {"ReferenceWithoutGrid", "", "[check]\nreference = \"g\"\nblock = [\"32\"]\n", "check.grid: missing"},
    {"ReferenceBlockNamingAKnob", "", "[check]\nreference = \"g\"\ngrid = [\"N\"]\nblock = [\"block_size_x\"]\n",
     "check.block[0]: \"block_size_x\" names knob 'block_size_x'"},
    {"ExpectedWithAGrid", "", "[check]\nexpected = \"g.cu\"\ngrid = [\"N\"]\n", "check.grid: belongs to a reference"},
    {"UnbalancedTemplateEntry", "entry = \"g\"", "entry = \"g<float, TILE\"",
     "entry: 'g<float, TILE' is not a template instance name<args>: a '<' that no '>' closes"},
    {"TemplateEntryClosedTwice", "entry = \"g\"", "entry = \"g<float>>\"", "entry: 'g<float>>' is not a template instance"},
    {"TemplateEntryWithAnOperator", "entry = \"g\"", "entry = \"g<N + 1>\"", "'+', which a template argument"},
    {"TemplateEntryWithACall", "entry = \"g\"", "entry = \"g<float>(x)\"", "text after the '>' that closes its arguments"},
    {"EmptyTemplateArguments", "entry = \"g\"", "entry = \"g< >\"", "no template arguments between '<' and '>'"},
    {"EntryNeitherIdentifierNorTemplate", "entry = \"g\"", "entry = \"g()\"",
     "entry: 'g()' is not an identifier or a template instance name<args>"},
    {"TemplateReferenceWithASemicolon", "", "[check]\nreference = \"r<float;>\"\ngrid = [\"N\"]\nblock = [\"1\"]\n",
     "check.reference: 'r<float;>' is not a template instance"},
};

class RefusedGridFile : public GridKernelFileTest, public ::testing::WithParamInterface<RefusedGridCase> {};

TEST_P(RefusedGridFile, GivesOneLineNamingTheField) {
  const RefusedGridCase& refused = GetParam();
  const std::string text = std::string(refused.find).empty() ? std::string(kValidGridFile) + refused.replace
                                                             : replaced(kValidGridFile, refused.find, refused.replace);
  const std::string error = grid_error_of(text);
  EXPECT_EQ(error.rfind((dir_ / "g.toml").string() + ":", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_NE(error.find(refused.message), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(KernelFile, RefusedGridFile, ::testing::ValuesIn(kRefusedGridCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The build's NDRange and called backends keep their format: grid/block keys are refused there,
// and so are template entries.
TEST_F(GridKernelFileTest, OpenCLAndCpuFilesRefuseGridAndBlock) {
  const std::string opencl = testing::kValidOpenCLFile;
  EXPECT_NE(error_of(replaced(opencl, "local = [\"WG\"]", "local = [\"WG\"]\ngrid = [\"N\"]"))
                .find("launch.grid: belongs to grid/block backends; an opencl kernel launches an NDRange: give global and local"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(opencl, "local = [\"WG\"]", "local = [\"WG\"]\nshared_memory = \"0\"")).find("launch.shared_memory: belongs to grid/block backends"),
            std::string::npos);
  EXPECT_NE(error_of(opencl + "[check]\nreference = \"k\"\nglobal = [\"N\"]\nblock = [\"1\"]\n")
                .find("check.block: belongs to grid/block backends; an opencl reference launches an NDRange"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(opencl, "entry = \"k\"", "entry = \"k<float>\"")).find("entry: 'k<float>' is not an identifier"),
            std::string::npos);

  const std::string cpu = R"(name = "k"
backend = "cpu"
source = "k.cpp"
entry = "k"
args = [{ name = "in", kind = "buffer", dtype = "f32", count = "N" },
        { name = "out", kind = "buffer", dtype = "f32", count = "N", output = true }]
[extents]
N = 100
[knobs]
UNROLL = [1, 2]
[check]
reference = "k"
)";
  EXPECT_EQ(error_of(cpu), "(loaded)");
  EXPECT_NE(error_of(cpu + "grid = [\"1\"]\n").find("check.grid: a cpu reference has no launch"), std::string::npos);
  EXPECT_NE(error_of(cpu + "[launch]\ngrid = [\"1\"]\n").find("launch: a cpu kernel has no launch"), std::string::npos);
}

}  // namespace
}  // namespace optune::kernels
