// Kernel files: the examples in configs/kernels parse into every field the header documents, and
// hostile files each give one line naming the file, the field and the problem.
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kernel_file_fixture.hpp"
#include "optune/kernels/kernel_digest.hpp"

namespace optune::kernels {
namespace {

namespace fs = std::filesystem;
using testing::KernelFileTest;
using testing::kValidOpenCLFile;
using testing::replaced;

const fs::path kExamples = fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels";

std::vector<std::string> texts(const std::vector<Expression>& expressions) {
  std::vector<std::string> result;
  for (const Expression& expression : expressions) result.push_back(expression.text());
  return result;
}

TEST(KernelFileExamples, TransposeParsesIntoEveryField) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "transpose.toml");
  EXPECT_EQ(spec.file, kExamples / "transpose.toml");
  EXPECT_EQ(spec.name, "transpose");
  EXPECT_EQ(spec.backend, "opencl");
  EXPECT_EQ(spec.source, fs::absolute(kExamples / "transpose.cl").lexically_normal());
  EXPECT_TRUE(spec.source.is_absolute());
  EXPECT_EQ(spec.entry, "transpose");
  EXPECT_FALSE(spec.description.empty());
  EXPECT_TRUE(spec.build_options.empty());
  EXPECT_EQ(spec.flops->text(), "0");
  EXPECT_EQ(spec.bytes->text(), "8 * N * M");

  ASSERT_EQ(spec.args.size(), 4u);
  const KernelArg& in = spec.args[0];
  EXPECT_EQ(in.name, "in");
  EXPECT_TRUE(in.is_buffer());
  EXPECT_EQ(in.dtype, DataType::kF32);
  EXPECT_EQ(in.count->text(), "N * M");
  EXPECT_EQ(in.init, BufferInit::kRandom);
  EXPECT_FALSE(in.is_output);
  EXPECT_FALSE(in.value.has_value());
  const KernelArg& out = spec.args[1];
  EXPECT_EQ(out.name, "out");
  EXPECT_TRUE(out.is_output);
  EXPECT_FALSE(out.init.has_value());  // write-only: poisoned, not initialised
  EXPECT_EQ(out.count->text(), "N * M");
  for (std::size_t i : {2u, 3u}) {
    EXPECT_EQ(spec.args[i].kind, KernelArg::Kind::kScalar);
    EXPECT_EQ(spec.args[i].dtype, DataType::kI32);
    EXPECT_FALSE(spec.args[i].count.has_value());
  }
  EXPECT_EQ(spec.args[2].name, "n");
  EXPECT_EQ(spec.args[2].value->text(), "N");
  EXPECT_EQ(spec.args[3].value->text(), "M");

  EXPECT_EQ(spec.extents, (std::vector<Extent>{{"N", 4096}, {"M", 4096}}));
  ASSERT_EQ(spec.knobs.size(), 3u);
  EXPECT_EQ(spec.knobs[0].name, "TILE");
  EXPECT_EQ(spec.knobs[0].numbers, (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(spec.knobs[1].name, "WPT");
  EXPECT_EQ(spec.knobs[1].numbers, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(spec.knobs[2].name, "PAD");
  EXPECT_EQ(spec.knobs[2].numbers, (std::vector<double>{0, 1}));
  EXPECT_EQ(texts(spec.rules), (std::vector<std::string>{"TILE % WPT == 0", "TILE * TILE / WPT <= max_work_group_size",
                                                         "(TILE + PAD) * TILE * 4 <= local_mem_size", "N % TILE == 0",
                                                         "M % TILE == 0"}));
  ASSERT_TRUE(spec.launch.has_value());
  EXPECT_EQ(texts(spec.launch->global), (std::vector<std::string>{"N / WPT", "M"}));
  EXPECT_EQ(texts(spec.launch->local), (std::vector<std::string>{"TILE / WPT", "TILE"}));

  EXPECT_EQ(spec.check.kind, KernelCheck::Kind::kReference);
  EXPECT_EQ(spec.check.reference, "transpose_naive");
  EXPECT_EQ(spec.check.reference_source, spec.source);
  ASSERT_TRUE(spec.check.reference_launch.has_value());
  EXPECT_EQ(texts(spec.check.reference_launch->global), (std::vector<std::string>{"N", "M"}));
  EXPECT_TRUE(spec.check.reference_launch->local.empty());
  EXPECT_TRUE(spec.check.expected.empty());
  EXPECT_EQ(spec.check.rtol, 0);
  EXPECT_EQ(spec.check.atol, 0);

  EXPECT_EQ(spec.expression_names(),
            (std::vector<std::string>{"N", "M", "TILE", "WPT", "PAD", "max_work_group_size", "local_mem_size",
                                      "compute_units", "vector_width_float", "max_work_item_size_0",
                                      "max_work_item_size_1", "max_work_item_size_2"}));
}

TEST(KernelFileExamples, SaxpyCpuParsesIntoEveryField) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "saxpy_cpu.toml");
  EXPECT_EQ(spec.name, "saxpy");
  EXPECT_EQ(spec.backend, "cpu");
  EXPECT_EQ(spec.source, fs::absolute(kExamples / "saxpy_cpu.cpp").lexically_normal());
  EXPECT_EQ(spec.entry, "saxpy");
  EXPECT_EQ(spec.build_options, (std::vector<std::string>{"-O3"}));
  EXPECT_EQ(spec.flops->text(), "2 * N");
  EXPECT_EQ(spec.bytes->text(), "12 * N");
  ASSERT_EQ(spec.args.size(), 5u);
  EXPECT_EQ(spec.args[0].init, BufferInit::kRandom);  // the default of an input
  EXPECT_EQ(spec.args[1].init, BufferInit::kIota);
  EXPECT_TRUE(spec.args[2].is_output);
  EXPECT_FALSE(spec.args[2].init.has_value());
  EXPECT_EQ(spec.args[3].dtype, DataType::kF32);
  EXPECT_EQ(spec.args[3].value->text(), "2.5");
  EXPECT_EQ(spec.args[4].dtype, DataType::kI32);
  EXPECT_EQ(spec.extents, (std::vector<Extent>{{"N", 1048576}}));
  EXPECT_EQ(spec.knobs[0].name, "BLOCK");
  EXPECT_EQ(spec.knobs[1].numbers, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(texts(spec.rules), (std::vector<std::string>{"BLOCK % UNROLL == 0", "12 * BLOCK <= l2_bytes"}));
  EXPECT_FALSE(spec.launch.has_value());
  EXPECT_EQ(spec.check.kind, KernelCheck::Kind::kReference);
  EXPECT_EQ(spec.check.reference, "saxpy_reference");
  EXPECT_FALSE(spec.check.reference_launch.has_value());
  EXPECT_EQ(spec.check.rtol, 1e-5);
  EXPECT_EQ(spec.check.atol, 1e-6);
  EXPECT_EQ(spec.expression_names(),
            (std::vector<std::string>{"N", "BLOCK", "UNROLL", "cores", "l1_bytes", "l2_bytes", "l3_bytes", "simd_lanes"}));
}

TEST(KernelFileExamples, Conv2dParses) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "conv2d.toml");
  EXPECT_EQ(spec.name, "conv2d");
  EXPECT_EQ(spec.backend, "opencl");
  EXPECT_EQ(spec.entry, "conv2d");
  EXPECT_EQ(spec.flops->text(), "2 * 17 * 17 * W * H");
  ASSERT_EQ(spec.args.size(), 5u);
  EXPECT_EQ(spec.args[0].count->text(), "(W + 16) * (H + 16)");
  EXPECT_EQ(spec.args[1].name, "filter");
  EXPECT_TRUE(spec.args[2].is_output);
  EXPECT_EQ(spec.extents, (std::vector<Extent>{{"W", 1024}, {"H", 1024}}));
  ASSERT_EQ(spec.knobs.size(), 6u);
  EXPECT_EQ(spec.knobs[0].name, "BLOCK_X");
  EXPECT_EQ(spec.knobs[0].numbers, (std::vector<double>{16, 32, 64, 128}));
  EXPECT_EQ(spec.knobs[4].name, "USE_LOCAL");
  EXPECT_EQ(spec.knobs[4].numbers, (std::vector<double>{0, 1}));
  EXPECT_EQ(spec.rules.size(), 4u);
  EXPECT_TRUE(spec.rules[3].uses("local_mem_size"));
  EXPECT_EQ(texts(spec.launch->global), (std::vector<std::string>{"ceil_div(W, BLOCK_X * TILE_X) * BLOCK_X",
                                                                  "ceil_div(H, BLOCK_Y * TILE_Y) * BLOCK_Y"}));
  EXPECT_EQ(texts(spec.launch->local), (std::vector<std::string>{"BLOCK_X", "BLOCK_Y"}));
  EXPECT_EQ(spec.check.reference, "conv2d_naive");
  EXPECT_EQ(texts(spec.check.reference_launch->global), (std::vector<std::string>{"W", "H"}));
  EXPECT_EQ(spec.check.rtol, 1e-4);
  EXPECT_EQ(spec.check.atol, 1e-4);
}

TEST(KernelFileExamples, ReductionParsesWithAStringKnob) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "reduction.toml");
  EXPECT_EQ(spec.name, "reduction");
  EXPECT_EQ(spec.entry, "reduction");
  ASSERT_EQ(spec.args.size(), 4u);
  EXPECT_EQ(spec.args[1].count->text(), "PARTS");  // one partial sum per work-group
  EXPECT_EQ(spec.extents, (std::vector<Extent>{{"N", 16777216}, {"PARTS", 1024}}));
  ASSERT_EQ(spec.knobs.size(), 4u);
  EXPECT_EQ(spec.knobs[1].name, "VW");
  EXPECT_EQ(spec.knobs[1].numbers, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(spec.knobs[3].name, "ACCESS");
  EXPECT_FALSE(spec.knobs[3].is_numeric());
  EXPECT_EQ(spec.knobs[3].strings, (std::vector<std::string>{"strided", "blocked"}));
  EXPECT_EQ(texts(spec.launch->global), (std::vector<std::string>{"PARTS * WG"}));
  EXPECT_EQ(spec.check.reference, "reduction_naive");
  EXPECT_EQ(spec.check.rtol, 1e-5);
  EXPECT_EQ(spec.check.atol, 1e-2);
}

TEST(KernelFileExamples, AxpyF16ParsesHalfBuffers) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "axpy_f16.toml");
  EXPECT_EQ(spec.name, "axpy_f16");
  ASSERT_EQ(spec.args.size(), 4u);
  for (std::size_t i : {0u, 1u, 2u}) EXPECT_EQ(spec.args[i].dtype, DataType::kF16) << spec.args[i].name;
  EXPECT_EQ(spec.args[3].dtype, DataType::kF32);
  EXPECT_EQ(spec.args[3].value->text(), "0.75");
  EXPECT_EQ(spec.knobs[3].strings, (std::vector<std::string>{"f16", "f32"}));
  EXPECT_EQ(texts(spec.rules), (std::vector<std::string>{"N % (WG * VW * WPT) == 0"}));
  EXPECT_EQ(spec.check.reference, "axpy_f16_naive");
  EXPECT_EQ(spec.check.rtol, 1e-2);  // the f16 defaults, written out
  EXPECT_EQ(spec.check.atol, 1e-3);
}

TEST(KernelFileExamples, StencilCpuParses) {
  const KernelSpec spec = optune::backends::load_kernel_file(kExamples / "stencil_cpu.toml");
  EXPECT_EQ(spec.name, "stencil");
  EXPECT_EQ(spec.backend, "cpu");
  EXPECT_EQ(spec.source, fs::absolute(kExamples / "stencil_cpu.cpp").lexically_normal());
  EXPECT_EQ(spec.entry, "stencil");
  EXPECT_EQ(spec.build_options, (std::vector<std::string>{"-O3", "-pthread"}));
  ASSERT_EQ(spec.args.size(), 6u);
  EXPECT_EQ(spec.args[0].count->text(), "(N + 2) * (M + 2)");  // the grid with its halo
  EXPECT_TRUE(spec.args[1].is_output);
  EXPECT_EQ(spec.args[2].dtype, DataType::kF32);
  EXPECT_EQ(spec.args[4].dtype, DataType::kI32);
  EXPECT_EQ(spec.extents, (std::vector<Extent>{{"N", 4096}, {"M", 4096}}));
  ASSERT_EQ(spec.knobs.size(), 4u);
  EXPECT_EQ(spec.knobs[3].name, "THREADS");
  EXPECT_EQ(texts(spec.rules), (std::vector<std::string>{"(BX + 2) * (BY + 2) * 4 + BX * BY * 4 <= l2_bytes",
                                                         "THREADS <= cores"}));
  EXPECT_FALSE(spec.launch.has_value());
  EXPECT_EQ(spec.check.reference, "stencil_reference");
  EXPECT_FALSE(spec.check.reference_launch.has_value());
}

TEST(DataTypes, HaveNamesSizesAndKinds) {
  EXPECT_EQ(parse_data_type("f16"), DataType::kF16);
  EXPECT_EQ(data_type_bytes(DataType::kF16), 2u);
  EXPECT_EQ(data_type_bytes(DataType::kU8), 1u);
  EXPECT_EQ(data_type_bytes(DataType::kI64), 8u);
  EXPECT_TRUE(is_floating(DataType::kF64));
  EXPECT_FALSE(is_floating(DataType::kI32));
  EXPECT_EQ(data_type_name(parse_data_type("u32")), "u32");
  EXPECT_THROW(parse_data_type("float"), std::invalid_argument);
  EXPECT_EQ(buffer_init_name(BufferInit::kIota), "iota");
}

TEST_F(KernelFileTest, KnobValuesReachTheSourceAsWritten) {
  std::string text = kValidOpenCLFile;
  text = replaced(text, "WG = [32, 64]", "WG = [32, 64]\nSCALE = [0.5, 2, 1e20]");
  const KernelSpec spec = load(text);
  const KernelKnob& scale = spec.knobs[1];
  EXPECT_EQ(scale.name, "SCALE");
  EXPECT_EQ(scale.value_text(0), "0.5");
  EXPECT_EQ(scale.value_text(1), "2");
  EXPECT_EQ(scale.value_text(2), "1e+20");  // past 2^53: shortest exact form
  const KernelKnob& mode = spec.knobs[2];
  EXPECT_FALSE(mode.is_numeric());
  EXPECT_EQ(mode.strings, (std::vector<std::string>{"fast", "exact"}));
  EXPECT_EQ(mode.value_text(1), "exact");
}

TEST_F(KernelFileTest, DefaultTolerancesFollowTheOutputType) {
  std::string text = kValidOpenCLFile;
  text = replaced(text, "dtype = \"f32\", count = \"N\", output", "dtype = \"f16\", count = \"N\", output");
  text += "[check]\nreference = \"k\"\nglobal = [\"N\"]\nlocal = [\"64\"]\n";
  const KernelSpec half = load(text);
  EXPECT_EQ(half.args[1].dtype, DataType::kF16);
  EXPECT_EQ(half.check.rtol, 1e-2);
  EXPECT_EQ(half.check.atol, 1e-3);
  EXPECT_EQ(texts(half.check.reference_launch->local), (std::vector<std::string>{"64"}));
  const KernelSpec none = load(kValidOpenCLFile);  // no [check]: only written-ness is checked
  EXPECT_EQ(none.check.kind, KernelCheck::Kind::kNone);
  EXPECT_EQ(none.check.rtol, 1e-5);
}

TEST_F(KernelFileTest, ExpectedFilesResolveRelativeToTheFile) {
  write("out.bin", std::string(4096, '\0'));
  const KernelSpec spec = load(std::string(kValidOpenCLFile) + "[check]\nexpected = \"out.bin\"\natol = 0.5\n");
  EXPECT_EQ(spec.check.kind, KernelCheck::Kind::kExpected);
  EXPECT_EQ(spec.check.expected, (std::vector<fs::path>{dir_ / "out.bin"}));
  EXPECT_EQ(spec.check.atol, 0.5);
  const KernelSpec listed = load(std::string(kValidOpenCLFile) + "[check]\nexpected = [\"out.bin\"]\n");
  EXPECT_EQ(listed.check.expected.size(), 1u);
}

TEST_F(KernelFileTest, ReferenceMayLiveInAnotherSource) {
  write("ref.cl", "__kernel void ref(__global const float* in, __global float* out) {}\n");
  const KernelSpec spec =
      load(std::string(kValidOpenCLFile) + "[check]\nreference = \"ref\"\nreference_source = \"ref.cl\"\nglobal = [\"N\"]\n");
  EXPECT_EQ(spec.check.reference_source, dir_ / "ref.cl");
}

TEST_F(KernelFileTest, CpuKernelNeedsNoLaunch) {
  const std::string text = R"(name = "k"
backend = "cpu"
source = "k.cpp"
entry = "k"
args = [{ name = "in", kind = "buffer", dtype = "u8", count = "N" },
        { name = "out", kind = "buffer", dtype = "i32", count = "N", output = true }]
[extents]
N = 100
[knobs]
UNROLL = [1, 2]
[check]
reference = "k"
)";
  const KernelSpec spec = load(text);
  EXPECT_EQ(spec.backend, "cpu");
  EXPECT_EQ(spec.check.rtol, 0);  // an integer output is compared exactly by default
  EXPECT_EQ(spec.check.atol, 0);
}

// One hostile file: the valid OpenCL file with `find` replaced by `replace` (appended when `find`
// is empty), and the field and problem its error must name.
struct HostileCase {
  const char* name;
  const char* find;
  const char* replace;
  const char* field;
  const char* problem;
};

const HostileCase kHostileCases[] = {
    {"UnclosedString", "name = \"k\"", "name = \"k", "k.toml:1:", ""},
    {"MissingName", "name = \"k\"\n", "", "name: missing", ""},
    {"UnknownTopLevelKey", "", "knbos = 1\n", "knbos: unknown key", ""},
    {"UnknownArgKey", "output = true", "outptu = true", "args[1].outptu: unknown key", ""},
    {"UnknownDtype", "dtype = \"f32\", count = \"N\" }", "dtype = \"f128\", count = \"N\" }", "args[0].dtype", "'f128' is not a dtype"},
    {"NameOfWrongType", "name = \"k\"", "name = 5", "name: must be a string, not an integer", ""},
    {"UnknownBackend", "\"opencl\"", "\"vulkan\"", "backend: 'vulkan' is not a backend of kernel files (cpu | opencl", ""},
    {"MissingSource", "\"k.cl\"", "\"gone.cl\"", "source: no file", "gone.cl"},
    {"NoOutputBuffer", ", output = true", "", "args: no output buffer", ""},
    {"EmptyKnob", "WG = [32, 64]", "WG = []", "knobs.WG: no values", ""},
    {"DuplicateKnobValue", "WG = [32, 64]", "WG = [32, 32.0]", "knobs.WG: value 32 is listed twice", ""},
    {"KnobNamedLikeAnExtent", "WG = [32, 64]", "WG = [32, 64]\nN = [1]", "knobs.N", "declared twice"},
    {"KnobNamedLikeADeviceLimit", "WG = [32, 64]", "WG = [32, 64]\nlocal_mem_size = [1]", "knobs.local_mem_size", "device limit"},
    {"KnobNamedLikeAFunction", "WG = [32, 64]", "WG = [32, 64]\nmin = [1]", "knobs.min", "function"},
    {"KnobMixingNumbersAndStrings", "WG = [32, 64]", "WG = [32, \"64\"]", "knobs.WG: mixes numbers and strings", ""},
    {"BooleanKnob", "WG = [32, 64]", "WG = [true, false]", "knobs.WG", "write 0 and 1"},
    {"StringKnobWithSpaces", "\"fast\"", "\"fast math\"", "knobs.MODE", "must be letters"},
    {"CountThatDoesNotParse", "count = \"N\" }", "count = \"N *\" }", "args[0].count: cannot parse \"N *\"", ""},
    {"UnknownNameInRule", "N % WG == 0", "N % WGG == 0", "constraints.rules[0]: unknown name 'WGG'", ""},
    {"AssignmentInRule", "N % WG == 0", "WG = 32", "constraints.rules[0]", "'=' assigns"},
    {"CountNamingAKnob", "count = \"N\" }", "count = \"N * WG\" }", "args[0].count", "names knob 'WG'"},
    {"StringKnobInRule", "N % WG == 0", "MODE == 1", "constraints.rules[0]", "whose values are strings"},
    {"LaunchDimensionsDiffer", "local = [\"WG\"]", "local = [\"WG\", \"1\"]", "launch.local: has 2 dimensions, global 1", ""},
    {"FourDimensionalLaunch", "global = [\"N\"]", "global = [\"N\", \"1\", \"1\", \"1\"]", "launch.global: needs 1 to 3", ""},
    {"OpenCLWithoutLaunch", "[launch]\nglobal = [\"N\"]\nlocal = [\"WG\"]\n", "", "launch: missing", ""},
    {"ReferenceAndExpected", "", "[check]\nreference = \"k\"\nexpected = \"k.cl\"\n", "check: give either reference or expected", ""},
    {"NegativeTolerance", "", "[check]\nreference = \"k\"\nglobal = [\"N\"]\nrtol = -1\n", "check.rtol", "at least 0"},
    {"OpenCLReferenceWithoutGlobal", "", "[check]\nreference = \"k\"\n", "check.global: missing", ""},
    {"ReferenceLaunchNamingAKnob", "", "[check]\nreference = \"k\"\nglobal = [\"WG\"]\n", "check.global[0]", "names knob 'WG'"},
    {"MissingExpectedFile", "", "[check]\nexpected = \"out.bin\"\n", "check.expected: no file", ""},
    {"UnknownCheckKey", "", "[check]\nreference = \"k\"\nglobal = [\"N\"]\nrtoll = 1\n", "check.rtoll: unknown key", ""},
    {"DuplicateArgName", "name = \"n\"", "name = \"in\"", "args[2].name: 'in' is used twice", ""},
    {"ScalarWithCount", "value = \"N\" }", "value = \"N\", count = \"1\" }", "args[2].count: a scalar has a value only", ""},
    {"BufferWithValue", "count = \"N\" }", "count = \"N\", value = \"1\" }", "args[0].value", ""},
    {"MisspelledInit", "count = \"N\" }", "count = \"N\", init = \"randon\" }", "args[0].init: 'randon' is not random", ""},
    {"ScalarWithoutValue", ", value = \"N\"", "", "args[2].value: missing", ""},
    {"UnknownArgKind", "kind = \"scalar\"", "kind = \"constant\"", "args[2].kind", ""},
    {"ZeroExtent", "N = 1024", "N = 0", "extents.N: must be an integer from 1", ""},
    {"HugeExtent", "N = 1024", "N = 4294967296", "extents.N", ""},
    {"ExtentNameEndingInADigit", "N = 1024", "N = 1024\nK2 = 8", "extents.K2", "must not end in a digit"},
    {"NoExtents", "N = 1024\n", "", "extents: no extents", ""},
    {"NoKnobs", "WG = [32, 64]\nMODE = [\"fast\", \"exact\"]\n", "", "knobs: no knobs", ""},
    {"EntryNotAnIdentifier", "entry = \"k\"", "entry = \"k()\"", "entry: 'k()' is not an identifier", ""},
    {"KernelNameWithADot", "name = \"k\"", "name = \"my.k\"", "name: 'my.k'", ""},
    {"KnobNotAList", "WG = [32, 64]", "WG = 32", "knobs.WG: must be a list, not an integer", ""},
    {"BuildOptionWithSpace", "", "build_options = [\"-D X=1\"]\n", "build_options[0]", "without whitespace"},
    // A NUL in a name is written as an escape: left in, it cut the message where C strings end.
    {"KnobNameWithANul", "WG = [32, 64]", "WG = [32, 64]\n\"A\\u0000B\" = [1]", "knobs.A\\x00B",
     "'A\\x00B' must be an identifier"},
};

class HostileKernelFile : public KernelFileTest, public ::testing::WithParamInterface<HostileCase> {};

TEST_P(HostileKernelFile, GivesOneLineNamingTheFileAndTheField) {
  const HostileCase& hostile = GetParam();
  std::string text = kValidOpenCLFile;
  if (std::string(hostile.find).empty()) {
    // Top-level keys must come before the first table; tables go at the end.
    const bool is_table = std::string(hostile.replace).rfind("[", 0) == 0;
    text = is_table ? text + hostile.replace : std::string(hostile.replace) + text;
  } else {
    const auto at = text.find(hostile.find);
    ASSERT_NE(at, std::string::npos) << "the case's text is not in the valid file: " << hostile.find;
    text.replace(at, std::string(hostile.find).size(), hostile.replace);
  }
  const std::string error = error_of(text);
  EXPECT_EQ(error.rfind((dir_ / "k.toml").string() + ":", 0), 0u) << error;  // names the file first
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_NE(error.find(hostile.field), std::string::npos) << error;
  EXPECT_NE(error.find(hostile.problem), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(KernelFile, HostileKernelFile, ::testing::ValuesIn(kHostileCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(KernelFileTest, TheValidFileLoads) {
  // The hostile cases above are one change away from this file: it must load as it is.
  const KernelSpec spec = load(kValidOpenCLFile);
  EXPECT_EQ(spec.name, "k");
  EXPECT_EQ(spec.knobs.size(), 2u);
}

// Records belong to the kernel's digest: what a config computes and how it is checked changes it,
// what only widens or narrows the search does not.
TEST_F(KernelFileTest, TheDigestFollowsTheSourceTheArgumentsAndTheCheckButNotTheKnobs) {
  const std::string base = kernel_digest(load(kValidOpenCLFile));
  EXPECT_EQ(base.size(), 8u);
  EXPECT_EQ(kernel_digest(load(kValidOpenCLFile)), base);
  EXPECT_EQ(kernel_template_name(load(kValidOpenCLFile)), "kernel.k.opencl#" + base);
  EXPECT_EQ(kernel_digest(load(replaced(kValidOpenCLFile, "WG = [32, 64]", "WG = [32, 64, 128]"))), base);
  EXPECT_EQ(kernel_digest(load(replaced(kValidOpenCLFile, "N % WG == 0", "WG <= N"))), base);
  EXPECT_EQ(kernel_digest(load(replaced(kValidOpenCLFile, "N = 1024", "N = 2048"))), base);
  EXPECT_NE(kernel_digest(load(replaced(kValidOpenCLFile, "value = \"N\"", "value = \"N - 1\""))), base);
  EXPECT_NE(kernel_digest(load(replaced(kValidOpenCLFile, "global = [\"N\"]", "global = [\"N / 2\"]"))), base);
  write("k.cl", "__kernel void k(__global const float* in, __global float* out) { out[0] = in[0]; }\n");
  EXPECT_NE(kernel_digest(load(kValidOpenCLFile)), base);
  EXPECT_TRUE(is_kernel_template_of("kernel.k.opencl#" + base, "k", "opencl"));
  EXPECT_TRUE(is_kernel_template_of("kernel.k.opencl", "k", "opencl"));  // written before digests
  EXPECT_FALSE(is_kernel_template_of("kernel.k.openclx", "k", "opencl"));
  EXPECT_FALSE(is_kernel_template_of("kernel.k.opencl#1", "k", "cpu"));
}

// The knobs' space must fit a search space's 64-bit count; beyond it the file is refused naming
// why (it was "no config of the knobs is valid").
TEST_F(KernelFileTest, KnobsOfMoreThan2To64ConfigsAreRefusedNamingWhy) {
  std::string knobs;
  for (int knob = 0; knob < 17; ++knob) {  // 16^17 = 2^68 configs
    knobs += "K" + std::to_string(knob) + "x = [";
    for (int value = 0; value < 16; ++value) knobs += std::to_string(value) + (value < 15 ? ", " : "]\n");
  }
  const std::string error = error_of(replaced(kValidOpenCLFile, "WG = [32, 64]\n", "WG = [32, 64]\n" + knobs));
  EXPECT_NE(error.find("knobs: the knobs' values make more than 2^64 configs"), std::string::npos) << error;
}

// A knob's values are checked for repeats in linear time, and their number is limited: 100,000
// values are refused at once (they took more than a minute to be accepted), 4,096 are taken.
TEST_F(KernelFileTest, KnobValueListsAreLimitedAndReadInLinearTime) {
  auto with_values = [](std::size_t count) {
    std::string list = "WG = [";
    for (std::size_t value = 0; value < count; ++value) list += std::to_string(value) + ", ";
    return replaced(kValidOpenCLFile, "WG = [32, 64]", list + "]");
  };
  const std::string error = error_of(with_values(100'000));
  EXPECT_NE(error.find("knobs.WG: 100000 values; a knob may have at most 4096"), std::string::npos) << error;
  EXPECT_EQ(load(with_values(kMaxKnobValues)).knobs[0].size(), kMaxKnobValues);
}

TEST_F(KernelFileTest, UnreadableFileIsNamed) {
  EXPECT_THROW(optune::backends::load_kernel_file(dir_ / "missing.toml"), std::invalid_argument);
}

}  // namespace
}  // namespace optune::kernels
