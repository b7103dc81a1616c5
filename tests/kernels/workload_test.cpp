// Workload keys, flop counts and `--shape` parsing, including every way a shape can be wrong.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {
namespace {

Workload gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Workload w;
  w.op = Op::kGemm;
  w.shape = GemmShape{m, n, k};
  return w;
}

Workload conv(Op op, Conv2dShape shape) {
  Workload w;
  w.op = op;
  w.shape = shape;
  return w;
}

Conv2dShape resnet_conv() {
  Conv2dShape s;
  s.N = 1, s.C = 64, s.H = 56, s.W = 56, s.K = 64, s.R = 3, s.S = 3;
  s.stride = 1, s.pad = 1, s.dilation = 1, s.groups = 1;
  return s;
}

Conv2dShape depthwise_shape() {
  Conv2dShape s;
  s.N = 1, s.C = 32, s.H = 112, s.W = 112, s.K = 32, s.R = 3, s.S = 3;
  s.stride = 1, s.pad = 1, s.dilation = 1, s.groups = 32;
  return s;
}

// The message of the std::invalid_argument that parse_workload throws, or "" if none.
std::string shape_error(Op op, const std::string& text) {
  try {
    parse_workload(op, text);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

// The same of parse_workload_key.
std::string key_error(const std::string& key) {
  try {
    parse_workload_key(key);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(Workload, OpNamesRoundTrip) {
  for (Op op : {Op::kGemm, Op::kConv2d, Op::kDepthwiseConv2d}) {
    EXPECT_EQ(parse_op(op_name(op)), op);
  }
  EXPECT_EQ(op_name(Op::kDepthwiseConv2d), "depthwise_conv2d");
  EXPECT_THROW(parse_op("matmul"), std::invalid_argument);
}

TEST(Workload, KeysHaveTheDocumentedFormat) {
  EXPECT_EQ(gemm(512, 512, 512).key(), "gemm.f32.M512.N512.K512");
  EXPECT_EQ(conv(Op::kConv2d, resnet_conv()).key(),
            "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
  EXPECT_EQ(conv(Op::kDepthwiseConv2d, depthwise_shape()).key(),
            "depthwise_conv2d.nchw.f32.N1.C32.H112.W112.R3.S3.st1.pad1.dil1");
}

Workload blocked(Workload w, int block) {
  w.layout_block = block;
  return w;
}

TEST(Workload, KeysNameTheKeptLayout) {
  EXPECT_EQ(blocked(conv(Op::kConv2d, resnet_conv()), 8).key(),
            "conv2d.nchw8c.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
  EXPECT_EQ(blocked(conv(Op::kDepthwiseConv2d, depthwise_shape()), 16).key(),
            "depthwise_conv2d.nchw16c.f32.N1.C32.H112.W112.R3.S3.st1.pad1.dil1");
  EXPECT_EQ(parse_workload(Op::kConv2d, "C=64,H=56,W=56,K=64,R=3,S=3,pad=1,layout=nchw8c"),
            blocked(conv(Op::kConv2d, resnet_conv()), 8));
  EXPECT_EQ(parse_workload(Op::kConv2d, "layout=nchw,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"),
            conv(Op::kConv2d, resnet_conv()));
  for (int block : {0, 4, 8, 16, kLayoutNhwc}) EXPECT_EQ(parse_layout(layout_name(block)), block);
  EXPECT_THROW(parse_layout("chwn"), std::invalid_argument);
  EXPECT_THROW(layout_name(3), std::invalid_argument);
  EXPECT_THROW(layout_name(-2), std::invalid_argument);
}

// Channels last: "nhwc" in keys and shapes, for conv2d of groups 1; not a channel block.
TEST(Workload, KeysAndShapesNameChannelsLast) {
  Workload nhwc = conv(Op::kConv2d, resnet_conv());
  nhwc.dtype = DataType::kBF16;
  nhwc.layout_block = kLayoutNhwc;
  EXPECT_EQ(nhwc.key(), "conv2d.nhwc.bf16.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
  EXPECT_EQ(parse_workload_key(nhwc.key()), nhwc);
  EXPECT_EQ(parse_workload_key(nhwc.key()).key(), nhwc.key());
  EXPECT_EQ(parse_workload(Op::kConv2d, "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=nhwc,dtype=bf16"), nhwc);
  EXPECT_EQ(parse_layout("nhwc"), kLayoutNhwc);
  EXPECT_EQ(layout_name(kLayoutNhwc), "nhwc");
  EXPECT_EQ(nhwc.input_layout_block(), kLayoutNhwc);
  EXPECT_FALSE(is_blocked_layout(kLayoutNhwc));
  EXPECT_FALSE(is_blocked_layout(kLayoutNchw));
  EXPECT_TRUE(is_blocked_layout(8));
}

TEST(Workload, ChannelsLastIsConv2dsOnlyWithGroupsOne) {
  const std::pair<std::string, std::string> cases[] = {  // the message, and how it starts
      {shape_error(Op::kConv2d, "C=32,H=8,W=8,K=32,R=3,S=3,groups=2,layout=nhwc"),
       "shape: layout nhwc takes conv2d with groups=1, got groups=2"},
      {shape_error(Op::kDepthwiseConv2d, "C=8,H=8,W=8,R=3,S=3,layout=nhwc"),
       "shape: depthwise_conv2d does not take layout nhwc (conv2d only, groups=1)"},
      {shape_error(Op::kGemm, "M=1,N=1,K=1,layout=nhwc"), "shape: unknown extent 'layout' for gemm"},
      {shape_error(Op::kConv2d, "C=8,H=8,W=8,K=8,R=3,S=3,layout=nchw-nhwc"),
       "shape: 'nchw-nhwc' is not a layout: an NCHW input goes only into a blocked layout"},
      {key_error("conv2d.nhwc.f32.N1.C32.H8.W8.K32.R3.S3.st1.pad1.dil1.g2"),
       "workload key: layout nhwc takes conv2d with groups=1, got groups=2"},
      {key_error("depthwise_conv2d.nhwc.f32.N1.C8.H8.W8.R3.S3.st1.pad1.dil1"),
       "workload key: depthwise_conv2d does not take layout nhwc"},
      {key_error("gemm.nhwc.f32.M1.N1.K1"), "workload key: expected 5 dot-separated fields, got 6"},
      {key_error("conv2d.nchw-nhwc.f32.N1.C8.H8.W8.K8.R3.S3.st1.pad1.dil1.g1"),
       "workload key: expected a layout (nchw, nchw4c, nchw8c, nchw16c, nchw-nchw8c or nhwc) after the op"},
  };
  for (const auto& [message, expected] : cases) {
    EXPECT_EQ(message.rfind(expected, 0), 0u) << "got '" << message << "', expected '" << expected << "...'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }

  // Built by hand (a suite's input_layout = "nchw" on nhwc, a gemm given a layout).
  const auto validation_error = [](const Workload& workload) -> std::string {
    try {
      validate_workload(workload);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "";
  };
  Workload nchw_into_nhwc = conv(Op::kConv2d, resnet_conv());
  nchw_into_nhwc.layout_block = kLayoutNhwc;
  nchw_into_nhwc.nchw_input = true;
  EXPECT_EQ(validation_error(nchw_into_nhwc),
            "shape: only conv2d may read an NCHW input into a blocked layout (nchw-nchw8c), not conv2d on nhwc");
  Workload gemm_on_nhwc = gemm(1, 1, 1);
  gemm_on_nhwc.layout_block = kLayoutNhwc;
  EXPECT_EQ(validation_error(gemm_on_nhwc), "shape: gemm has no layout, got nhwc");
}

// A first layer reads NCHW and writes the kept layout: "nchw-nchw8c", in keys and shapes.
TEST(Workload, KeysNameAFirstLayerReadingNchwIntoTheKeptLayout) {
  Workload stem = blocked(conv(Op::kConv2d, {1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1}), 8);
  stem.nchw_input = true;
  EXPECT_EQ(stem.key(), "conv2d.nchw-nchw8c.f32.N1.C3.H224.W224.K64.R7.S7.st2.pad3.dil1.g1");
  EXPECT_EQ(stem.input_layout_block(), kLayoutNchw);
  EXPECT_EQ(parse_workload_key(stem.key()), stem);
  EXPECT_EQ(parse_workload(Op::kConv2d, "C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,layout=nchw-nchw8c"), stem);
  for (const Layouts layouts : {Layouts{8, true}, Layouts{4, false}, Layouts{0, false}}) {
    const Layouts back = parse_layouts(layouts_name(layouts));
    EXPECT_EQ(back.block, layouts.block);
    EXPECT_EQ(back.nchw_input, layouts.nchw_input);
  }
  EXPECT_THROW(parse_layouts("nchw8c-nchw"), std::invalid_argument);
  EXPECT_THROW(parse_layouts("nchw-nchw"), std::invalid_argument);
  EXPECT_THROW(parse_workload_key("conv2d.nchw8c-nchw4c.f32.N1.C3.H8.W8.K8.R3.S3.st1.pad1.dil1.g1"),
               std::invalid_argument);
  EXPECT_THROW(parse_workload_key("depthwise_conv2d.nchw-nchw8c.f32.N1.C8.H8.W8.R3.S3.st1.pad1.dil1"),
               std::invalid_argument);
}

TEST(Workload, KeyParsesBackToTheSameWorkload) {
  Conv2dShape grouped = resnet_conv();
  grouped.N = 2, grouped.stride = 2, grouped.pad = 0, grouped.dilation = 2, grouped.groups = 4;
  const Workload workloads[] = {gemm(17, 33, 65), conv(Op::kConv2d, resnet_conv()),
                                conv(Op::kConv2d, grouped),
                                conv(Op::kDepthwiseConv2d, depthwise_shape()),
                                blocked(conv(Op::kConv2d, resnet_conv()), 4),
                                blocked(conv(Op::kDepthwiseConv2d, depthwise_shape()), 8)};
  for (const Workload& w : workloads) {
    EXPECT_EQ(parse_workload_key(w.key()), w) << w.key();
  }
}

TEST(Workload, RejectsMalformedKeys) {
  for (const char* key : {"", "gemm", "gemm.f32.M512.N512", "gemm.f32.M512.N512.K0",
                          "gemm.f32.M512.K512.N512", "gemm.f32.M5x.N1.K1", "gemm.F32.M1.N1.K1",
                          "conv2d.nhwx.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1",
                          "conv2d.nchw3c.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1",
                          "conv2d.nchw8c.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g4",
                          "gemm.nchw8c.f32.M1.N1.K1",
                          "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1",
                          "depthwise_conv2d.nchw.f32.N1.C32.H112.W112.K32.R3.S3.st1.pad1.dil1",
                          "matmul.f32.M1.N1.K1", "gemm.f32.M1.N1.K1.extra"}) {
    EXPECT_THROW(parse_workload_key(key), std::invalid_argument) << key;
  }
}

TEST(Workload, OutputExtentsFollowTheConvolutionFormula) {
  Conv2dShape s;
  s.C = 3, s.H = 224, s.W = 224, s.K = 64, s.R = 7, s.S = 7, s.stride = 2, s.pad = 3;
  EXPECT_EQ(s.out_h(), 112);
  EXPECT_EQ(s.out_w(), 112);
  s.H = 10, s.W = 9, s.R = 3, s.S = 3, s.stride = 1, s.pad = 0, s.dilation = 2;
  EXPECT_EQ(s.out_h(), 6);
  EXPECT_EQ(s.out_w(), 5);
  s.H = 2, s.R = 5, s.dilation = 1, s.stride = 2;  // window larger than the padded input
  EXPECT_EQ(s.out_h(), 0);
}

TEST(Workload, FlopsCountMultiplyAddsAsTwo) {
  EXPECT_DOUBLE_EQ(gemm(512, 256, 128).flops(), 2.0 * 512 * 256 * 128);
  EXPECT_DOUBLE_EQ(conv(Op::kConv2d, resnet_conv()).flops(), 2.0 * 64 * 56 * 56 * 64 * 3 * 3);
  Conv2dShape grouped = resnet_conv();
  grouped.groups = 4;
  EXPECT_DOUBLE_EQ(conv(Op::kConv2d, grouped).flops(), 2.0 * 64 * 56 * 56 * 16 * 3 * 3);
  EXPECT_DOUBLE_EQ(conv(Op::kDepthwiseConv2d, depthwise_shape()).flops(),
                   2.0 * 32 * 112 * 112 * 3 * 3);
}

TEST(Workload, ParsesGemmShapePositionalAndNamed) {
  EXPECT_EQ(parse_workload(Op::kGemm, "512,256,128"), gemm(512, 256, 128));
  EXPECT_EQ(parse_workload(Op::kGemm, " 512 , 256,128 "), gemm(512, 256, 128));
  EXPECT_EQ(parse_workload(Op::kGemm, "M=512,N=256,K=128"), gemm(512, 256, 128));
  EXPECT_EQ(parse_workload(Op::kGemm, "K=128, M = 512 ,N=256"), gemm(512, 256, 128));
}

TEST(Workload, ParsesConvShapesWithDefaults) {
  EXPECT_EQ(parse_workload(Op::kConv2d, "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"),
            conv(Op::kConv2d, resnet_conv()));
  Conv2dShape defaults = resnet_conv();
  defaults.pad = 0;
  EXPECT_EQ(parse_workload(Op::kConv2d, "C=64,H=56,W=56,K=64,R=3,S=3"),
            conv(Op::kConv2d, defaults));
  Conv2dShape full = resnet_conv();
  full.N = 2, full.stride = 2, full.dilation = 2, full.groups = 8;
  EXPECT_EQ(parse_workload(Op::kConv2d,
                           "groups=8,dilation=2,N=2,C=64,H=56,W=56,K=64,R=3,S=3,stride=2,pad=1"),
            conv(Op::kConv2d, full));
  EXPECT_EQ(parse_workload(Op::kDepthwiseConv2d, "N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"),
            conv(Op::kDepthwiseConv2d, depthwise_shape()));
  EXPECT_EQ(parse_workload(Op::kDepthwiseConv2d, "C=32,H=112,W=112,R=3,S=3,pad=1,groups=32"),
            conv(Op::kDepthwiseConv2d, depthwise_shape()));
}

struct BadShape {
  Op op;
  const char* text;
  const char* expected;  // a part of the message
};

TEST(Workload, RejectsBadShapesWithAOneLineMessage) {
  const BadShape cases[] = {
      {Op::kGemm, "0,512,512", "extent M must be a positive integer, got '0'"},
      {Op::kGemm, "M=-4,N=1,K=1", "extent M must be a positive integer, got '-4'"},
      {Op::kGemm, "M=5x,N=1,K=1", "extent M must be a positive integer, got '5x'"},
      {Op::kGemm, "1.5,2,3", "extent M must be a positive integer, got '1.5'"},
      {Op::kGemm, "M=,N=1,K=1", "extent M must be a positive integer, got ''"},
      {Op::kGemm, "M=1,N=1,X=1", "unknown extent 'X' for gemm"},
      {Op::kGemm, "M=1,N=1", "missing extent K"},
      {Op::kGemm, "1,2", "gemm takes 3 extents"},
      {Op::kGemm, "1,2,3,4", "gemm takes 3 extents"},
      {Op::kGemm, "M=1,N=1,K=1,M=2", "extent M given twice"},
      {Op::kGemm, "M=1,N=1,,K=1", "empty extent"},
      {Op::kGemm, "M=1,N=1,512", "has no name"},
      {Op::kGemm, "", "empty shape"},
      {Op::kGemm, "   ", "empty shape"},
      {Op::kGemm, "M=99999999,N=1,K=1", "M=99999999 exceeds the largest extent 1048576"},
      {Op::kGemm, "M=99999999999999999999999,N=1,K=1", "exceeds the largest extent"},
      {Op::kGemm, "M=1048576,N=1048576,K=768",
       "tensors would need 4102.0 GiB, more than the 8 GiB limit"},
      {Op::kGemm, "M=32768,N=32768,K=32768", "tensors would need 12.0 GiB, more than the 8 GiB"},
      {Op::kConv2d, "C=3,H=2,W=8,K=4,R=5,S=3", "output height is not positive (H=2, R=5, pad=0)"},
      {Op::kConv2d, "C=3,H=8,W=2,K=4,R=3,S=5", "output width is not positive (W=2, S=5, pad=0)"},
      {Op::kConv2d, "C=30,H=8,W=8,K=8,R=3,S=3,groups=4", "C=30 is not divisible by groups=4"},
      {Op::kConv2d, "C=32,H=8,W=8,K=30,R=3,S=3,groups=4", "K=30 is not divisible by groups=4"},
      {Op::kConv2d, "C=3,H=8,W=8,K=4,R=3,S=3,stride=0", "extent stride must be a positive"},
      {Op::kConv2d, "C=3,H=8,W=8,K=4,R=3,S=3,pad=-1", "extent pad must be a non-negative"},
      {Op::kConv2d, "H=8,W=8,K=4,R=3,S=3", "missing extent C"},
      {Op::kConv2d, "1,64,56,56,64,3,3", "conv2d takes named extents"},
      {Op::kConv2d, "C=3,H=8,W=8,K=4,R=3,S=3,M=2", "unknown extent 'M' for conv2d"},
      {Op::kDepthwiseConv2d, "C=32,H=8,W=8,K=32,R=3,S=3",
       "unknown extent 'K' for depthwise_conv2d"},
      {Op::kDepthwiseConv2d, "C=32,H=8,W=8,R=3,S=3,groups=4", "groups = C"},
      {Op::kConv2d, "C=3,H=8,W=8,K=4,R=3,S=3,layout=chwn", "unknown layout 'chwn' (expected nchw, nchw4c"},
      {Op::kConv2d, "C=3,H=8,W=8,K=4,R=3,S=3,layout=nchw8c,layout=nchw", "layout given twice"},
      {Op::kConv2d, "C=32,H=8,W=8,K=32,R=3,S=3,groups=4,layout=nchw8c", "layout nchw8c takes conv2d with groups=1"},
      {Op::kGemm, "M=1,N=1,K=1,layout=nchw8c", "unknown extent 'layout' for gemm"},
      {Op::kDepthwiseConv2d, "C=8,H=8,W=8,R=3,S=3,layout=nchw-nchw8c", "only conv2d may read an NCHW input"},
      {Op::kConv2d, "C=8,H=8,W=8,K=8,R=3,S=3,layout=nchw8c-nchw", "only an NCHW input may change layout"},
  };
  for (const auto& c : cases) {
    const std::string message = shape_error(c.op, c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "shape '" << c.text << "' gave: '" << message << "', expected '" << c.expected << "'";
    EXPECT_EQ(message.rfind("shape: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Workload, ValidateChecksWorkloadsBuiltByHand) {
  EXPECT_NO_THROW(validate_workload(gemm(1, 1, 1)));
  EXPECT_THROW(validate_workload(gemm(0, 1, 1)), std::invalid_argument);
  Conv2dShape bad = depthwise_shape();
  bad.groups = 1;
  EXPECT_THROW(validate_workload(conv(Op::kDepthwiseConv2d, bad)), std::invalid_argument);
  EXPECT_THROW(validate_workload(blocked(gemm(1, 1, 1), 8)), std::invalid_argument);
  EXPECT_THROW(validate_workload(blocked(conv(Op::kConv2d, resnet_conv()), 5)), std::invalid_argument);
}

}  // namespace
}  // namespace optune::kernels
