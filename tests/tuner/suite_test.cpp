#include "optune/tuner/scheduling/suite.hpp"

#include <gtest/gtest.h>

#include "optune/tuner/scheduling/suite_tuning.hpp"

namespace optune::tuner {
namespace {

std::string suite_path(const std::string& name) {
  return std::string(OPTUNE_SOURCE_DIR) + "/configs/workloads/" + name + ".toml";
}

int total_count(const Suite& suite, kernels::Op op) {
  int total = 0;
  for (const auto& entry : suite.entries)
    if (entry.workload.op == op) total += entry.count;
  return total;
}

TEST(Suite, ShippedNetworksParseWithTheirLayerCounts) {
  auto resnet = load_suite(suite_path("resnet18"));
  EXPECT_EQ(resnet.name, "resnet18");
  EXPECT_EQ(resnet.entries.size(), 12u);
  EXPECT_EQ(total_count(resnet, kernels::Op::kConv2d), 20);  // 17 convs + 3 downsamples
  EXPECT_EQ(resnet.entries.front().workload.key(), "conv2d.nchw.f32.N1.C3.H224.W224.K64.R7.S7.st2.pad3.dil1.g1");
  EXPECT_EQ(resnet.entries.back().workload.key(), "gemm.f32.M1.N1000.K512");

  auto mobilenet = load_suite(suite_path("mobilenet_v1"));
  EXPECT_EQ(total_count(mobilenet, kernels::Op::kDepthwiseConv2d), 13);
  EXPECT_EQ(total_count(mobilenet, kernels::Op::kConv2d), 14);  // the first conv and 13 pointwise
  auto squeezenet = load_suite(suite_path("squeezenet1_1"));
  EXPECT_EQ(total_count(squeezenet, kernels::Op::kConv2d), 26);  // conv1, 8 fires x 3, conv10
  auto bert = load_suite(suite_path("bert_base_gemm"));
  EXPECT_EQ(total_count(bert, kernels::Op::kGemm), 72);
}

void expect_error(const std::string& text, const std::string& words) {
  try {
    parse_suite(text, "bad.toml");
    FAIL() << "accepted: " << text;
  } catch (const SuiteError& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("bad.toml:", 0), 0u) << error.what();
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
  }
}

TEST(Suite, MalformedFilesNameFileLineAndProblem) {
  const std::string header = "name = \"x\"\n";
  expect_error("name = \"x\n", "bad.toml:1");
  expect_error(header, "no [[workload]]");
  expect_error(header + "[[workload]]\nop = \"gemm\"\n", "missing 'shape'");
  expect_error(header + "[[workload]]\nop = \"gemm\"\nshape = \"0,4,4\"\n", "bad.toml:2: shape");
  expect_error(header + "[[workload]]\nop = \"matmul\"\nshape = \"4,4,4\"\n", "matmul");
  expect_error(header + "[[workload]]\nop = \"gemm\"\nshape = \"4,4,4\"\ncount = 0\n", "bad.toml:5: 'count'");
  expect_error(header + "[[workload]]\nop = \"gemm\"\nshape = \"4,4,4\"\nrepeat = 2\n", "unknown key 'repeat'");
  expect_error(header + "[[workload]]\nop = \"gemm\"\nshape = \"4,4,4\"\n[[workload]]\nop = \"gemm\"\nshape = \"M=4,N=4,K=4\"\n",
               "listed twice");
  expect_error("[[workload]]\nop = \"gemm\"\nshape = \"4,4,4\"\n", "missing 'name'");
  EXPECT_THROW(load_suite("/nonexistent/suite.toml"), SuiteError);
  const std::string conv = "[[workload]]\nop = \"conv2d\"\nshape = \"C=8,H=8,W=8,K=8,R=3,S=3\"\n";
  expect_error(header + "layout = \"chwn\"\n" + conv, "bad.toml:2: layout: unknown layout 'chwn'");
  expect_error(header + conv + "layout = \"nchw5c\"\n", "bad.toml:5: layout: unknown layout 'nchw5c'");
  expect_error(header + "[[workload]]\nop = \"gemm\"\nshape = \"4,4,4\"\nlayout = \"nchw8c\"\n",
               "gemm has no layout");
  expect_error(header + "[[workload]]\nop = \"conv2d\"\nshape = \"C=8,H=8,W=8,K=8,R=3,S=3,layout=nchw8c\"\n"
                        "layout = \"nchw\"\n",
               "layout given both");
}

// A suite-level layout goes to every convolution that does not pin its own; `--layout` replaces
// it; GEMMs have none.
TEST(Suite, KeptLayoutGoesToConvolutionsThatPinNone) {
  const std::string text =
      "name = \"net\"\nlayout = \"nchw8c\"\n"
      "[[workload]]\nname = \"stem\"\nop = \"conv2d\"\nshape = \"C=3,H=16,W=16,K=8,R=3,S=3\"\nlayout = \"nchw\"\n"
      "[[workload]]\nname = \"dw\"\nop = \"depthwise_conv2d\"\nshape = \"C=8,H=14,W=14,R=3,S=3,pad=1\"\n"
      "[[workload]]\nname = \"pw\"\nop = \"conv2d\"\nshape = \"C=8,H=14,W=14,K=16,R=1,S=1,layout=nchw4c\"\n"
      "[[workload]]\nname = \"fc\"\nop = \"gemm\"\nshape = \"1,10,16\"\n";
  const Suite suite = parse_suite(text, "net.toml");
  EXPECT_EQ(suite.layout_block, 8);
  ASSERT_EQ(suite.entries.size(), 4u);
  EXPECT_EQ(suite.entries[0].workload.layout_block, 0);
  EXPECT_EQ(suite.entries[1].workload.key(), "depthwise_conv2d.nchw8c.f32.N1.C8.H14.W14.R3.S3.st1.pad1.dil1");
  EXPECT_EQ(suite.entries[2].workload.layout_block, 4);
  EXPECT_EQ(suite.entries[3].workload.key(), "gemm.f32.M1.N10.K16");

  const Suite nchw = parse_suite(text, "net.toml", kernels::kLayoutNchw);
  EXPECT_EQ(nchw.entries[1].workload.layout_block, 0);
  EXPECT_EQ(nchw.entries[2].workload.layout_block, 4);  // pinned in its shape

  // The shipped stems read the NCHW image and write the layout the network keeps.
  const Suite resnet = load_suite(suite_path("resnet18"), 16);
  EXPECT_EQ(resnet.entries.front().workload.key(), "conv2d.nchw-nchw16c.f32.N1.C3.H224.W224.K64.R7.S7.st2.pad3.dil1.g1");
  EXPECT_EQ(resnet.entries[1].workload.key(), "conv2d.nchw16c.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
  const Suite resnet_nchw = load_suite(suite_path("resnet18"));
  EXPECT_EQ(resnet_nchw.entries.front().workload.key(), "conv2d.nchw.f32.N1.C3.H224.W224.K64.R7.S7.st2.pad3.dil1.g1");
}

// --dtype with --suite: the given dtype replaces the file's for every workload that names none;
// one that pins its own (a dtype key, or dtype= in its shape) keeps it.
TEST(Suite, AGivenDtypeGoesToWorkloadsThatPinNone) {
  const std::string text =
      "name = \"net\"\ndtype = \"bf16\"\n"
      "[[workload]]\nname = \"conv\"\nop = \"conv2d\"\nshape = \"C=8,H=14,W=14,K=16,R=3,S=3,pad=1\"\n"
      "[[workload]]\nname = \"own\"\nop = \"gemm\"\nshape = \"1,10,16\"\ndtype = \"f32\"\n"
      "[[workload]]\nname = \"in_shape\"\nop = \"gemm\"\nshape = \"M=2,N=10,K=16,dtype=f16\"\n";
  const Suite file = parse_suite(text, "net.toml");
  EXPECT_EQ(file.entries[0].workload.dtype, kernels::DataType::kBF16);
  const Suite given = parse_suite(text, "net.toml", std::nullopt, kernels::DataType::kI8);
  EXPECT_EQ(given.entries[0].workload.key(), "conv2d.nchw.i8.N1.C8.H14.W14.K16.R3.S3.st1.pad1.dil1.g1");
  EXPECT_EQ(given.entries[1].workload.dtype, kernels::DataType::kF32);
  EXPECT_EQ(given.entries[2].workload.dtype, kernels::DataType::kF16);
  const Suite resnet = load_suite(suite_path("resnet18"), std::nullopt, kernels::DataType::kBF16);
  EXPECT_EQ(resnet.entries[1].workload.key(), "conv2d.nchw.bf16.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
}

// input_layout = "nchw": a first layer reads NCHW into the suite's layout (or its own); only
// conv2d may, and only from NCHW.
TEST(Suite, InputLayoutReadsNchwIntoTheKeptLayout) {
  const std::string header = "name = \"net\"\nlayout = \"nchw8c\"\n";
  const std::string stem = "[[workload]]\nop = \"conv2d\"\nshape = \"C=3,H=16,W=16,K=8,R=3,S=3\"\ninput_layout = \"nchw\"\n";
  const Suite suite = parse_suite(header + stem, "net.toml");
  EXPECT_TRUE(suite.entries[0].workload.nchw_input);
  EXPECT_EQ(suite.entries[0].workload.key(), "conv2d.nchw-nchw8c.f32.N1.C3.H16.W16.K8.R3.S3.st1.pad0.dil1.g1");
  const Suite pinned = parse_suite(header + stem + "layout = \"nchw4c\"\n", "net.toml");
  EXPECT_EQ(pinned.entries[0].workload.key(), "conv2d.nchw-nchw4c.f32.N1.C3.H16.W16.K8.R3.S3.st1.pad0.dil1.g1");
  const Suite nchw = parse_suite(header + stem, "net.toml", kernels::kLayoutNchw);
  EXPECT_FALSE(nchw.entries[0].workload.nchw_input);  // NCHW in and out: nothing to say
  EXPECT_EQ(nchw.entries[0].workload.key(), "conv2d.nchw.f32.N1.C3.H16.W16.K8.R3.S3.st1.pad0.dil1.g1");

  expect_error(header + "[[workload]]\nop = \"conv2d\"\nshape = \"C=3,H=16,W=16,K=8,R=3,S=3\"\ninput_layout = \"nchw8c\"\n",
               "bad.toml:6: input_layout: only \"nchw\"");
  expect_error(header + "[[workload]]\nop = \"depthwise_conv2d\"\nshape = \"C=8,H=8,W=8,R=3,S=3\"\ninput_layout = \"nchw\"\n",
               "only conv2d may read an NCHW input");
  // A channels-last layer reads NHWC: an NCHW input goes only into a blocked layout.
  expect_error("name = \"net\"\nlayout = \"nhwc\"\n" + stem, "into a blocked layout (nchw-nchw8c), not conv2d on nhwc");
}

TEST(Duration, ParsesHoursMinutesSeconds) {
  EXPECT_EQ(parse_duration("2h"), 7200);
  EXPECT_EQ(parse_duration("30m"), 1800);
  EXPECT_EQ(parse_duration("1h30m"), 5400);
  EXPECT_EQ(parse_duration("90s"), 90);
  EXPECT_EQ(parse_duration("7d"), 7 * 86400);
  EXPECT_THROW(parse_duration("2 hours"), std::invalid_argument);
  EXPECT_THROW(parse_duration("0m"), std::invalid_argument);
  EXPECT_THROW(parse_duration(""), std::invalid_argument);
  EXPECT_THROW(parse_duration("30m1h"), std::invalid_argument);  // parts in the order d, h, m, s
  EXPECT_THROW(parse_duration("1h1h"), std::invalid_argument);
  EXPECT_THROW(parse_duration("h"), std::invalid_argument);
  EXPECT_EQ(parse_duration("3650d"), 3650 * 86400.0);
}

// A number too long for a double, or a duration of more than ten years, is bad input named as
// such (400 digits threw std::out_of_range, whose message is "stod").
TEST(Duration, TooLongIsBadInputNamingTheLimit) {
  for (const std::string text : {std::string(400, '9') + "s", "1" + std::string(399, '0') + "d", std::string("3651d"),
                                 std::string("99999999999m")}) {
    try {
      parse_duration(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("is longer than 3650d"), std::string::npos) << error.what();
    }
  }
}

// Bad input is one line on stderr, whatever the file quotes: toml++ names the character it saw
// (here a newline), and a value may hold a newline of its own. Found by fuzz_suite_job_toml.
TEST(Suite, ErrorsQuotingTheFilesNewlinesStayOneLine) {
  for (const std::string text : {"name = \"x\"\nvalue =n\n",
                                 "name = \"x\"\n[[workload]]\nop = \"gemm\"\nshape = \"8,8\\n8\"\n"}) {
    try {
      parse_suite(text, "bad.toml");
      FAIL() << text;
    } catch (const SuiteError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find("bad.toml:"), std::string::npos) << message;
      EXPECT_NE(message.find("\\n"), std::string::npos) << "the newline is shown as an escape: " << message;
    }
  }
}

}  // namespace
}  // namespace optune::tuner
