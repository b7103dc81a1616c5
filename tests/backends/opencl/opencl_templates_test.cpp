// The OpenCL templates' spaces against device limits: no config over a device's work-group,
// work-item, local-memory or vector limits is ever valid (so never proposed), defaults are valid,
// and launches cover the output exactly once per tile.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <stdexcept>
#include <string>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels {
namespace {

// A small phone-like GPU: 128 work-items, 64 x 64 x 64 item sizes, 8 KiB local memory.
DeviceInfo small_gpu() {
  DeviceInfo device;
  device.kind = "opencl";
  device.name = "Small GPU";
  device.platform = "Test";
  device.cores = 4;
  device.max_work_group_size = 128;
  device.max_work_item_sizes = {64, 64, 16};
  device.local_mem_bytes = 8 * 1024;
  device.preferred_vector_width = 1;
  return device;
}

std::int64_t number(const search_space::ConfigView& view, const std::string& knob) {
  return std::stoll(view.choice(knob));
}

struct Case {
  Op op;
  const char* shape;
};

class OpenCLTemplateLimits : public ::testing::TestWithParam<Case> {};

TEST_P(OpenCLTemplateLimits, NoValidConfigExceedsTheDeviceLimits) {
  const Workload workload = parse_workload(GetParam().op, GetParam().shape);
  const OpenCLTemplate& t = as_opencl(backends::find_template(std::string(op_name(workload.op)) + ".opencl"));
  const DeviceInfo device = small_gpu();
  const auto space = t.space(workload, device);
  std::mt19937_64 rng(7);
  const auto configs = space.sample_valid_distinct(rng, 300);
  ASSERT_GT(configs.size(), 50u);
  for (const auto& config : configs) {
    const search_space::ConfigView view(space, config);
    const auto kernel = t.opencl_kernel(workload, device, view);
    const auto& local = kernel.local_size;
    EXPECT_LE(local[0] * local[1] * local[2], 128u) << space.to_json(config).dump();
    EXPECT_LE(local[0], 64u);
    EXPECT_LE(local[1], 64u);
    EXPECT_LE(local[2], 16u);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(kernel.global_size[d] % local[d], 0u);
    const std::string& options = kernel.build_options;
    for (const char* wide : {"-DVWN=8", "-DVWM=8", "-DVW=8"}) EXPECT_EQ(options.find(wide), std::string::npos);
    if (workload.op == Op::kGemm) {
      const auto kwg = number(view, "kwg");
      const auto bytes = 4 * kwg * (number(view, "sa") * number(view, "mwg") + number(view, "sb") * number(view, "nwg"));
      EXPECT_LE(bytes, 8 * 1024) << space.to_json(config).dump();
    }
    if (workload.op == Op::kConv2d) {  // the staged input of cb x tc channels and the slices' partial sums
      const auto s = workload.conv();
      const auto tile_p = number(view, "tp") * number(view, "ppt"), tile_q = number(view, "tq") * number(view, "qpt");
      const auto tc = number(view, "tc");
      const auto input = number(view, "local_in") * number(view, "cb") * tc * ((tile_p - 1) * s.stride + s.R) *
                         ((tile_q - 1) * s.stride + s.S);
      const auto partials = tc > 1 ? tc * number(view, "tk") * number(view, "kpt") * tile_p * tile_q : 0;
      EXPECT_LE(4 * (input + partials), 8 * 1024) << space.to_json(config).dump();
    }
  }
  const auto fallback = t.default_config(workload, device, space);
  EXPECT_TRUE(space.is_valid(fallback)) << space.first_violation(fallback);
}

INSTANTIATE_TEST_SUITE_P(
    Templates, OpenCLTemplateLimits,
    ::testing::Values(Case{Op::kGemm, "127,509,1021"},
                      Case{Op::kConv2d, "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"},
                      Case{Op::kConv2d, "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"},
                      Case{Op::kDepthwiseConv2d, "N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"}));

TEST(OpenCLGemmTemplate, DefaultIsTheGenericGpuTileOnALargeDevice) {
  DeviceInfo device = small_gpu();
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = {1024, 1024, 64};
  device.local_mem_bytes = 48 * 1024;
  const Workload workload = parse_workload(Op::kGemm, "2048,2048,2048");
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  const auto space = t.space(workload, device);
  const auto config = t.default_config(workload, device, space);
  const auto json = space.to_json(config);
  EXPECT_EQ(json["mwg"], "128");
  EXPECT_EQ(json["mdimc"], "16");
  EXPECT_EQ(json["sa"], "1");
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  EXPECT_EQ(kernel.global_size[0], 2048u / 256 * 16);
  EXPECT_NE(kernel.build_options.find("-DEDGE_M=0"), std::string::npos);
  EXPECT_EQ(t.name(), "gemm.opencl");
}

// On a large GPU the conv default splits the input channels over 16 slices of a work-group (the
// deep batch-1 layers need it), and its launch has 16 x 2 x 16 work-items; with 3 input channels
// (ResNet's stem) the split is refused and the default falls back to a tile without it.
TEST(OpenCLConv2dTemplate, DefaultSplitsTheChannelsOnALargeDeviceWhereThereAreChannelsToSplit) {
  DeviceInfo device = small_gpu();
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = {1024, 1024, 64};
  device.local_mem_bytes = 48 * 1024;
  const OpenCLTemplate& t = as_opencl(backends::find_template("conv2d.opencl"));
  const Workload deep = parse_workload(Op::kConv2d, "N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1");
  const auto space = t.space(deep, device);
  const auto config = t.default_config(deep, device, space);
  EXPECT_EQ(space.to_json(config)["tc"], "16");
  const auto kernel = t.opencl_kernel(deep, device, search_space::ConfigView(space, config));
  EXPECT_EQ(kernel.local_size, (std::array<std::size_t, 3>{8, 2, 16}));
  EXPECT_EQ(kernel.global_size, (std::array<std::size_t, 3>{8, 2, 512 / 8 * 16}));

  const Workload stem = parse_workload(Op::kConv2d, "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3");
  const auto stem_space = t.space(stem, device);
  EXPECT_EQ(stem_space.to_json(t.default_config(stem, device, stem_space))["tc"], "1");
}

TEST(OpenCLGemmTemplate, OddShapesSwitchEdgeHandlingOn) {
  const Workload workload = parse_workload(Op::kGemm, "127,509,1021");
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  const DeviceInfo device = small_gpu();
  const auto space = t.space(workload, device);
  const auto config = t.default_config(workload, device, space);
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  for (const char* edge : {"-DEDGE_M=1", "-DEDGE_N=1", "-DEDGE_K=1"})
    EXPECT_NE(kernel.build_options.find(edge), std::string::npos) << kernel.build_options;
  EXPECT_NE(t.emit_source(workload, device, search_space::ConfigView(space, config)).find("#include \"gemm.cl\""),
            std::string::npos);
}

// An H100 as NVIDIA's OpenCL driver describes it: compute capability 9.0, 48 KiB of local memory.
DeviceInfo nvidia_h100() {
  DeviceInfo device = small_gpu();
  device.name = "NVIDIA H100 80GB HBM3";
  device.platform = "NVIDIA CUDA";
  device.cores = 132;
  device.max_work_group_size = 1024;
  device.max_work_item_sizes = {1024, 1024, 64};
  device.local_mem_bytes = 48 * 1024;
  device.isa = {"sm_90"};
  return device;
}

// On NVIDIA devices of compute capability 8.0 and later, a GEMM whose K and N are multiples of 4
// is tuned in the tensor-core kernel's space: every sampled config fits the device (warps of 32,
// local memory of its stages, 128 accumulators), launches one work-group per tile, and builds
// gemm_mma.cl; the default is the 128 x 128 tile of four 64 x 64 warps.
TEST(OpenCLGemmTemplate, TensorCoreSpaceOnNvidiaSm80AndLater) {
  const DeviceInfo device = nvidia_h100();
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  const Workload workload = parse_workload(Op::kGemm, "2048,2048,2048");
  const auto space = t.space(workload, device);
  ASSERT_NO_THROW(space.knob_index("math"));
  EXPECT_THROW(space.knob_index("mdimc"), std::out_of_range);
  std::mt19937_64 rng(11);
  const auto configs = space.sample_valid_distinct(rng, 200);
  ASSERT_GT(configs.size(), 100u);
  for (const auto& config : configs) {
    const search_space::ConfigView view(space, config);
    const auto kernel = t.opencl_kernel(workload, device, view);
    EXPECT_EQ(kernel.source_file, "gemm_mma.cl");
    EXPECT_EQ(kernel.kernel_name, "optune_gemm_mma");
    const auto mwg = number(view, "mwg"), nwg = number(view, "nwg"), kwg = number(view, "kwg");
    const auto wm = number(view, "wm"), wn = number(view, "wn"), stages = number(view, "stages");
    const std::size_t threads = (mwg / wm) * (nwg / wn) * 32;
    EXPECT_EQ(kernel.local_size, (std::array<std::size_t, 3>{threads, 1, 1})) << space.to_json(config).dump();
    EXPECT_LE(threads, 1024u);
    const auto splitk = static_cast<std::size_t>(number(view, "splitk"));
    EXPECT_EQ(kernel.global_size, (std::array<std::size_t, 3>{2048 / nwg * threads, std::size_t(2048 / mwg), splitk}));
    const std::size_t tiles = (2048 / mwg) * (2048 / nwg);
    EXPECT_EQ(kernel.scratch_bytes, splitk > 1 ? 4 * ((tiles * threads + 3) / 4 * 4 + tiles * splitk * mwg * nwg) : 0u);
    EXPECT_LE(4 * stages * (mwg * (kwg + 4) + kwg * (nwg + 8)), 48 * 1024) << space.to_json(config).dump();
    EXPECT_LE(wm * wn / 32, 128);
    EXPECT_NE(kernel.build_options.find("-DSTAGES=" + std::to_string(stages)), std::string::npos);
  }
  const auto config = t.default_config(workload, device, space);
  const auto json = space.to_json(config);
  EXPECT_EQ(json["math"], "tf32x3");
  EXPECT_EQ(json["mwg"], "128");
  EXPECT_EQ(json["nwg"], "128");
  EXPECT_EQ(json["wm"], "64");
  EXPECT_EQ(json["wn"], "64");
  EXPECT_EQ(json["gsw"], "8");
  EXPECT_EQ(json["splitk"], "1");
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  EXPECT_EQ(kernel.local_size[0], 128u);
  EXPECT_NE(kernel.build_options.find("-DEDGE_M=0 -DEDGE_N=0 -DEDGE_K=0"), std::string::npos)
      << kernel.build_options;
  EXPECT_NE(t.emit_source(workload, device, search_space::ConfigView(space, config)).find("#include \"gemm_mma.cl\""),
            std::string::npos);
}

// f16 and bf16 on NVIDIA sm_80+: the tensor-core kernel in m16n8k16 products (math names the
// type) where K and N are multiples of 8, with K blocks of at least 16, warp tiles of whole pairs
// of 8-column tiles and local memory of 2-byte elements within the device's 48 KiB; the program
// gets the type's define. Elsewhere (N or K not a multiple of 8, i8) gemm.cl takes the type.
TEST(OpenCLGemmTemplate, SixteenBitTypesTakeTheTensorCoresWhereRowsAreWholePieces) {
  const DeviceInfo device = nvidia_h100();
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  for (const char* dtype : {"f16", "bf16"}) {
    SCOPED_TRACE(dtype);
    const Workload workload = parse_workload(Op::kGemm, std::string("1000,1016,2048,dtype=") + dtype);
    const auto space = t.space(workload, device);
    std::mt19937_64 rng(5);
    const auto configs = space.sample_valid_distinct(rng, 200);
    ASSERT_GT(configs.size(), 50u);
    for (const auto& config : configs) {
      const search_space::ConfigView view(space, config);
      EXPECT_EQ(view.choice("math"), dtype);
      const auto mwg = number(view, "mwg"), nwg = number(view, "nwg"), kwg = number(view, "kwg");
      EXPECT_GE(kwg, 16);
      EXPECT_EQ(number(view, "wn") % 16, 0);
      EXPECT_LE(2 * number(view, "stages") * (mwg * (kwg + 8) + kwg * (nwg + 8)), 48 * 1024);
      const auto kernel = t.opencl_kernel(workload, device, view);
      EXPECT_EQ(kernel.source_file, "gemm_mma.cl");
      EXPECT_NE(kernel.build_options.find(std::string(" -DOPTUNE_") + (dtype == std::string("f16") ? "F16" : "BF16")),
                std::string::npos);
    }
    // The defaults, as tuned on an H200: 128 x 128 tiles of 64 x 32 warps in K blocks of 32 where
    // a tile per SM fills the device; a BERT GEMM's 64 x 64 tiles split 8 ways, not float32's 16
    // (a split at least 288 deep).
    auto default_of = [&](const std::string& shape) {
      const Workload w = parse_workload(Op::kGemm, shape + ",dtype=" + dtype);
      const auto w_space = t.space(w, device);
      return w_space.to_json(t.default_config(w, device, w_space));
    };
    const auto json = default_of("4096,4096,4096");
    EXPECT_EQ(json["math"], dtype);
    EXPECT_EQ(json["mwg"], "128");
    EXPECT_EQ(json["nwg"], "128");
    EXPECT_EQ(json["kwg"], "32");
    EXPECT_EQ(json["wn"], "32");
    EXPECT_EQ(json["ldsm"], "1");
    const auto bert = default_of("128,768,3072");
    EXPECT_EQ(bert["mwg"].get<std::string>() + "x" + bert["nwg"].get<std::string>() + "/" +
                  bert["splitk"].get<std::string>() + " warps " + bert["wm"].get<std::string>() + "x" +
                  bert["wn"].get<std::string>(),
              "64x64/8 warps 16x32");
    for (const char* generic : {"1000,1020,2048", "1000,1016,2044"}) {
      const Workload other = parse_workload(Op::kGemm, std::string(generic) + ",dtype=" + dtype);
      const auto other_space = t.space(other, device);
      EXPECT_EQ(t.opencl_kernel(other, device, search_space::ConfigView(other_space, t.default_config(other, device, other_space)))
                    .source_file,
                "gemm.cl")
          << generic;
    }
  }
}

// i8 on the tensor cores: K blocks of whole 32-deep steps, warp tiles of whole pairs of 8-column
// tiles, local memory of 1-byte elements (B transposed, its rows padded as A's) within 48 KiB,
// the type's define and signedness in every config.
TEST(OpenCLGemmTemplate, Int8TensorCoreSpaceKeepsToTheKernel) {
  const DeviceInfo device = nvidia_h100();
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  const Workload workload = parse_workload(Op::kGemm, "1000,1004,2048,dtype=i8");
  const auto space = t.space(workload, device);
  std::mt19937_64 rng(9);
  const auto configs = space.sample_valid_distinct(rng, 200);
  ASSERT_GT(configs.size(), 50u);
  for (const auto& config : configs) {
    const search_space::ConfigView view(space, config);
    EXPECT_EQ(view.choice("math"), "i8");
    EXPECT_EQ(view.choice("activations"), "s8");
    const auto mwg = number(view, "mwg"), nwg = number(view, "nwg"), kwg = number(view, "kwg");
    EXPECT_GE(kwg, 32);
    EXPECT_EQ(number(view, "wn") % 16, 0);
    EXPECT_LE(number(view, "stages") * (mwg * (kwg + 16) + nwg * (kwg + 16)), 48 * 1024);
    const auto kernel = t.opencl_kernel(workload, device, view);
    EXPECT_EQ(kernel.source_file, "gemm_mma.cl");
    EXPECT_NE(kernel.build_options.find(" -DOPTUNE_I8"), std::string::npos);
  }
  const Workload large = parse_workload(Op::kGemm, "4096,4096,4096,dtype=i8");
  const auto large_space = t.space(large, device);
  const auto json = large_space.to_json(t.default_config(large, device, large_space));
  EXPECT_EQ(json["mwg"].get<std::string>() + "x" + json["nwg"].get<std::string>() + "/" + json["kwg"].get<std::string>(),
            "128x64/64");
  // BERT's short-M GEMM: 64 x 64 tiles split 4 ways (K ranges of at least 576), as tuned.
  const Workload bert = parse_workload(Op::kGemm, "128,768,3072,dtype=i8");
  const auto bert_space = t.space(bert, device);
  const auto bert_json = bert_space.to_json(t.default_config(bert, device, bert_space));
  EXPECT_EQ(bert_json["mwg"].get<std::string>() + "x" + bert_json["nwg"].get<std::string>() + "/" +
                bert_json["splitk"].get<std::string>(),
            "64x64/4");
}

// A pointwise layer of one image on a tensor-core device is the GEMM output[K][H*W] = filter[K][C]
// x input[C][H*W]: conv2d.opencl tunes it in gemm.opencl's tensor-core space and builds gemm_mma.cl
// with the convolution's argument order (CONV_ARGS), in every dtype the tensor cores take. Other
// layers (3 x 3, a batch, a stride) and other devices keep conv2d.cl, as do 16-bit layers whose
// H x W is no multiple of 8 (the tensor-core GEMM's condition on N).
TEST(OpenCLConv2dTemplate, PointwiseLayerOfOneImageRunsAsTheTensorCoreGemm) {
  const DeviceInfo device = nvidia_h100();
  const OpenCLTemplate& t = as_opencl(backends::find_template("conv2d.opencl"));
  auto kernel_of = [&](const DeviceInfo& d, const std::string& shape) {
    const Workload workload = parse_workload(Op::kConv2d, shape);
    const auto space = t.space(workload, d);
    return t.opencl_kernel(workload, d, search_space::ConfigView(space, t.default_config(workload, d, space)));
  };
  for (const char* dtype : {"f32", "f16", "bf16", "i8"}) {
    SCOPED_TRACE(dtype);
    const auto kernel =
        kernel_of(device, std::string("N=1,C=256,H=28,W=28,K=1024,R=1,S=1,stride=1,pad=0,dtype=") + dtype);
    EXPECT_EQ(kernel.source_file, "gemm_mma.cl");
    EXPECT_NE(kernel.build_options.find("-DM=1024 -DN=784 -DK=256 "), std::string::npos) << kernel.build_options;
    EXPECT_NE(kernel.build_options.find("-DCONV_ARGS=1"), std::string::npos) << kernel.build_options;
  }
  EXPECT_EQ(kernel_of(device, "N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1").source_file, "conv2d.cl");
  EXPECT_EQ(kernel_of(device, "N=2,C=256,H=14,W=14,K=1024,R=1,S=1,stride=1,pad=0").source_file, "conv2d.cl");
  EXPECT_EQ(kernel_of(device, "N=1,C=256,H=14,W=14,K=1024,R=1,S=1,stride=2,pad=0").source_file, "conv2d.cl");
  EXPECT_EQ(kernel_of(small_gpu(), "N=1,C=256,H=14,W=14,K=1024,R=1,S=1,stride=1,pad=0").source_file, "conv2d.cl");
  EXPECT_EQ(kernel_of(device, "N=1,C=256,H=14,W=14,K=1024,R=1,S=1,stride=1,pad=0,dtype=bf16").source_file,
            "conv2d.cl");
  EXPECT_EQ(kernel_of(device, "N=1,C=256,H=14,W=14,K=1024,R=1,S=1,stride=1,pad=0,dtype=i8").source_file,
            "gemm_mma.cl");
}

// i8 takes the tensor cores (gemm_mma.cl, math i8) on sm_80+ where K is a multiple of 16 and N
// of 4; else gemm_dot4.cl (four s8 values of K in a word) where K is a multiple of 4 and the
// device has a packed dot product: NVIDIA's dp4a, or cl_khr_integer_dot_product in its isa;
// elsewhere gemm.cl widened. The dot4 space keeps to the device and names its signedness.
TEST(OpenCLGemmTemplate, Int8TakesPackedQuadsWhereTheDeviceHasADotProduct) {
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  auto kernel_of = [&](const DeviceInfo& device, const char* shape) {
    const Workload workload = parse_workload(Op::kGemm, std::string(shape) + ",dtype=i8");
    const auto space = t.space(workload, device);
    return t.opencl_kernel(workload, device, search_space::ConfigView(space, t.default_config(workload, device, space)))
        .source_file;
  };
  const DeviceInfo h100 = nvidia_h100();
  EXPECT_EQ(kernel_of(h100, "1024,1024,1024"), "gemm_mma.cl");
  EXPECT_EQ(kernel_of(h100, "1024,1022,1024"), "gemm_dot4.cl");  // N no multiple of 4
  EXPECT_EQ(kernel_of(h100, "1024,1024,1020"), "gemm_dot4.cl");  // K no multiple of 16
  EXPECT_EQ(kernel_of(h100, "1024,1024,1022"), "gemm.cl");
  DeviceInfo turing = h100;  // dp4a, but no tensor-core kernel (sm_80+)
  turing.isa = {"sm_75"};
  EXPECT_EQ(kernel_of(turing, "1024,1024,1024"), "gemm_dot4.cl");
  EXPECT_EQ(kernel_of(small_gpu(), "1024,1024,1024"), "gemm.cl");
  DeviceInfo with_extension = small_gpu();
  with_extension.isa.push_back(kIntegerDotProductIsa);
  EXPECT_EQ(kernel_of(with_extension, "1024,1024,1024"), "gemm_dot4.cl");

  const Workload workload = parse_workload(Op::kGemm, "4096,4096,4096,dtype=i8");
  const auto space = t.space(workload, turing);
  std::mt19937_64 rng(3);
  for (const auto& config : space.sample_valid_distinct(rng, 100)) {
    const search_space::ConfigView view(space, config);
    EXPECT_EQ(view.choice("activations"), "s8");
    const auto kernel = t.opencl_kernel(workload, turing, view);
    EXPECT_LE(kernel.local_size[0] * kernel.local_size[1], 1024u);
    EXPECT_LE((number(view, "mwg") / number(view, "mdimc")) * (number(view, "nwg") / number(view, "ndimc")), 64);
    EXPECT_EQ(kernel.global_size[0] / kernel.local_size[0], std::size_t(4096 / number(view, "nwg")));
  }
  // Defaults: work-groups of 256, the largest tile that fills the device's 132 SMs, else the one
  // that gives the most work-groups (the configs tuned at these shapes on an H200).
  auto default_tile = [&](const DeviceInfo& device, const char* shape) {
    const Workload w = parse_workload(Op::kGemm, std::string(shape) + ",dtype=i8");
    const auto w_space = t.space(w, device);
    const auto json = w_space.to_json(t.default_config(w, device, w_space));
    EXPECT_EQ(json["math"], "dot4");
    return json["mwg"].get<std::string>() + "x" + json["nwg"].get<std::string>() + " by " +
           json["mdimc"].get<std::string>() + "x" + json["ndimc"].get<std::string>();
  };
  EXPECT_EQ(default_tile(turing, "4096,4096,4096"), "128x128 by 16x16");
  EXPECT_EQ(default_tile(h100, "1000,1000,1000"), "64x64 by 32x8");
  EXPECT_EQ(default_tile(h100, "127,508,1020"), "32x16 by 32x8");
}

// The default follows the shape. The largest tile where it alone gives each of the device's
// compute units a work-group: on an H100 (132 SMs) 4096 x 1024 keeps the 128 x 128 tile (256
// work-groups). Otherwise the largest tile of at most 64 x 64 that fits M and N and whose K splits
// (at most 16, each at least 96 deep and given K blocks, an option of the knob) reach 2.5
// work-groups per unit, split for the most even load: 1000^3 64 x 64 in 2 (512, 3.9 per unit),
// 450 x 768 64 x 64 in 4 (384), 128 x 768 x 3072 64 x 64 in 16 (384), 32 x 768 x 3072 32 x 32 in
// 16, 1023 x 769 x 2049 64 x 64 in 8 (1664: 12.6 per unit, where 2 would give 3.2 and 4 6.3),
// 128 x 768 x 768 32 x 32 in 4 (64 x 64 reaches 1.5 at most). Where no tile reaches 2.5, the
// largest one split the most: 32 x 768 x 768 32 x 32 in 8 (16 x 16 only where nothing larger
// fits), 7 x 768 the 16 x 16 tile in 6. The FMA kernel (a device before sm_80) follows the same
// rule. On a device of 4 compute units the largest tile that gives each one a work-group, unsplit.
TEST(OpenCLGemmTemplate, DefaultTileGivesEveryComputeUnitAWorkGroup) {
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  auto default_tile = [&](const DeviceInfo& device, const char* shape) {
    const Workload workload = parse_workload(Op::kGemm, shape);
    const auto space = t.space(workload, device);
    const auto json = space.to_json(t.default_config(workload, device, space));
    return json["mwg"].get<std::string>() + "x" + json["nwg"].get<std::string>() + "/" +
           json["splitk"].get<std::string>();
  };
  const DeviceInfo h100 = nvidia_h100();
  EXPECT_EQ(default_tile(h100, "4096,1024,4096"), "128x128/1");
  EXPECT_EQ(default_tile(h100, "1000,1000,1000"), "64x64/2");
  EXPECT_EQ(default_tile(h100, "450,768,768"), "64x64/4");
  EXPECT_EQ(default_tile(h100, "7,768,768"), "16x16/6");  // 8 would leave splits of 12 K blocks idle
  EXPECT_EQ(default_tile(h100, "32,768,768"), "32x32/8");
  EXPECT_EQ(default_tile(h100, "128,768,3072"), "64x64/16");
  EXPECT_EQ(default_tile(h100, "32,768,3072"), "32x32/16");
  EXPECT_EQ(default_tile(h100, "512,3072,768"), "64x64/1");  // 384 tiles: 2.9 per unit unsplit
  EXPECT_EQ(default_tile(h100, "1023,769,2049"), "64x64/8");
  EXPECT_EQ(default_tile(h100, "128,768,768"), "32x32/4");
  // 288 32 x 32 tiles are two per SM, where the space takes no split: 64 x 64 split 3 (240).
  EXPECT_EQ(default_tile(h100, "257,1000,333"), "64x64/3");
  // The rule picks only points of the space, so where 32 x 32 tiles alone give every SM a
  // work-group the default never falls through to the 16 x 16 tile (the list's most work-groups).
  for (int m : {33, 100, 257, 500, 999})
    for (int n : {100, 1000, 3000})
      for (int k : {100, 333, 1000, 4000}) {
        if ((m + 31) / 32 * ((n + 31) / 32) < h100.cores) continue;
        const std::string shape = std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k);
        EXPECT_NE(default_tile(h100, shape.c_str()).rfind("16x16", 0), 0u) << shape;
      }
  DeviceInfo turing = h100;  // the FMA kernel's tiles
  turing.isa = {"sm_75"};
  EXPECT_EQ(default_tile(turing, "1023,769,2049"), "64x64/12");  // K blocks of 16 allow 12: 18.9 per unit
  DeviceInfo few_units = h100;
  few_units.cores = 4;
  EXPECT_EQ(default_tile(few_units, "1000,1000,1000"), "128x128/1");
  EXPECT_EQ(default_tile(few_units, "128,768,3072"), "128x128/1");
  EXPECT_EQ(default_tile(few_units, "1023,769,2049"), "128x128/1");
  turing.cores = 4;
  EXPECT_EQ(default_tile(turing, "1023,769,2049"), "128x256/1");
}

// A device before sm_80, or one that is not NVIDIA's, gets the float32 FMA kernel's space. On
// tensor-core devices every shape takes the tensor-core kernel: rows of A and B that are no
// multiple of 4 floats are copied element by element (A_ROWS16 = 0 for A's K-long rows, B_ROWS16 = 0
// for B's N-long ones, each operand on its own) instead of 16 bytes at a time.
TEST(OpenCLGemmTemplate, FmaSpaceWhereTensorCoresDoNotApply) {
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  auto is_tensor_core_space = [&](const DeviceInfo& device, const char* shape) {
    const Workload workload = parse_workload(Op::kGemm, shape);
    const auto space = t.space(workload, device);
    const auto config = t.default_config(workload, device, space);
    const bool mma = t.opencl_kernel(workload, device, search_space::ConfigView(space, config)).source_file ==
                     "gemm_mma.cl";
    EXPECT_EQ(mma, space.describe().dump().find("\"math\"") != std::string::npos) << shape;
    return mma;
  };
  DeviceInfo device = nvidia_h100();
  auto rows16 = [&](const char* shape) {
    const Workload workload = parse_workload(Op::kGemm, shape);
    const auto space = t.space(workload, device);
    const auto config = t.default_config(workload, device, space);
    return t.opencl_kernel(workload, device, search_space::ConfigView(space, config)).build_options;
  };
  EXPECT_TRUE(is_tensor_core_space(device, "1000,1020,1028"));  // M needs no multiple: edges
  EXPECT_NE(rows16("1000,1020,1028").find("-DA_ROWS16=1 -DB_ROWS16=1"), std::string::npos);
  EXPECT_NE(rows16("128,128,130").find("-DA_ROWS16=0 -DB_ROWS16=1"), std::string::npos);
  EXPECT_NE(rows16("128,130,128").find("-DA_ROWS16=1 -DB_ROWS16=0"), std::string::npos);
  for (const char* odd : {"127,509,1021", "128,128,130", "128,130,128"}) {
    EXPECT_TRUE(is_tensor_core_space(device, odd));
    EXPECT_NE(rows16(odd).find("_ROWS16=0"), std::string::npos) << odd;
  }
  device.isa = {"sm_75"};
  EXPECT_FALSE(is_tensor_core_space(device, "2048,2048,2048"));
  EXPECT_FALSE(is_tensor_core_space(small_gpu(), "2048,2048,2048"));
}

// The edges of the tensor-core kernel: M, N, K past the tiles switch zero-filled copies and
// checked stores on, and the grid covers the matrix.
TEST(OpenCLGemmTemplate, TensorCoreEdgesAreCheckedAndCovered) {
  const DeviceInfo device = nvidia_h100();
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  const Workload workload = parse_workload(Op::kGemm, "1000,1020,1028");
  const auto space = t.space(workload, device);
  const auto config = t.default_config(workload, device, space);
  const auto kernel = t.opencl_kernel(workload, device, search_space::ConfigView(space, config));
  for (const char* edge : {"-DEDGE_M=1", "-DEDGE_N=1", "-DEDGE_K=1"})
    EXPECT_NE(kernel.build_options.find(edge), std::string::npos) << kernel.build_options;
  const auto json = space.to_json(config);
  const std::size_t mwg = std::stoul(json["mwg"].get<std::string>()), nwg = std::stoul(json["nwg"].get<std::string>());
  EXPECT_GE(kernel.global_size[1] * mwg, 1000u);
  EXPECT_GE(kernel.global_size[0] / kernel.local_size[0] * nwg, 1020u);
}

// Split-K: work-groups along dimension 2 share a tile's K blocks and sum them through a scratch
// buffer (a counter per work-item of every tile, padded to 4, and every split's partial tile). It is offered only
// where the tiles leave the compute units short and every split gets K blocks; a config without
// a split builds the program it built before the knob existed (no
// SPLITK define, two dimensions), and a record written before the knob reads as no split.
TEST(OpenCLGemmTemplate, SplitKWhereTilesAreFewWithItsScratchBuffer) {
  const OpenCLTemplate& t = as_opencl(backends::find_template("gemm.opencl"));
  for (const char* shape : {"128,768,3072", "1023,769,2049", "32,768,768"}) {
    const DeviceInfo device = nvidia_h100();
    const Workload workload = parse_workload(Op::kGemm, shape);
    const GemmShape& s = workload.gemm();
    const auto space = t.space(workload, device);
    std::mt19937_64 rng(3);
    std::size_t split = 0;
    for (const auto& config : space.sample_valid_distinct(rng, 300)) {
      const search_space::ConfigView view(space, config);
      const auto kernel = t.opencl_kernel(workload, device, view);
      const std::int64_t splitk = number(view, "splitk"), kwg = number(view, "kwg");
      const std::int64_t tiles = (s.M + number(view, "mwg") - 1) / number(view, "mwg") *
                                 ((s.N + number(view, "nwg") - 1) / number(view, "nwg"));
      const std::int64_t blocks = (s.K + kwg - 1) / kwg, per_split = (blocks + splitk - 1) / splitk;
      if (splitk == 1) {
        EXPECT_EQ(kernel.dimensions, 2);
        EXPECT_EQ(kernel.scratch_bytes, 0u);
        EXPECT_EQ(kernel.build_options.find("SPLITK"), std::string::npos) << kernel.build_options;
        continue;
      }
      ++split;
      EXPECT_LT(tiles, 2 * 132) << space.to_json(config).dump();
      EXPECT_GT(blocks - (splitk - 1) * per_split, 0) << "an idle split: " << space.to_json(config).dump();
      EXPECT_EQ(kernel.dimensions, 3);
      EXPECT_EQ(kernel.global_size[2], std::size_t(splitk));
      EXPECT_EQ(kernel.local_size[2], 1u);
      const std::int64_t items = std::int64_t(kernel.local_size[0] * kernel.local_size[1]);
      EXPECT_EQ(kernel.scratch_bytes, std::size_t(4 * ((tiles * items + 3) / 4 * 4 +
                                                       tiles * splitk * number(view, "mwg") * number(view, "nwg"))));
      EXPECT_NE(kernel.build_options.find("-DSPLITK=" + std::to_string(splitk)), std::string::npos);
    }
    EXPECT_GT(split, 30u) << shape;
    nlohmann::json older = space.to_json(t.default_config(workload, device, space));
    older.erase("splitk");
    EXPECT_EQ(search_space::ConfigView(space, space.from_json(older)).choice("splitk"), "1") << shape;
  }
  // Enough tiles at 4096 x 4096 with 128 x 128 tiles: no split.
  const Workload large = parse_workload(Op::kGemm, "4096,4096,4096");
  const auto space = t.space(large, nvidia_h100());
  std::mt19937_64 rng(5);
  for (const auto& config : space.sample_valid_distinct(rng, 300)) {
    const search_space::ConfigView view(space, config);
    if (number(view, "mwg") <= 128 && number(view, "nwg") <= 128) EXPECT_EQ(number(view, "splitk"), 1);
  }
}

}  // namespace
}  // namespace optune::kernels
