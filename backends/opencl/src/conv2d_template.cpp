// The "conv2d.opencl" template: the tuning space of kernels/opencl/conv2d.cl (direct NCHW
// convolution, any stride, padding, dilation and groups) for one workload and device, its
// default config and the launch of a candidate. Tiles over output channels, rows and columns,
// the input channels split over slices of a work-group or not, the input tile in local memory
// or not, the filter window unrolled or not, a vector width. A pointwise layer of one image runs
// as gemm.opencl's tensor-core GEMM where the device has one (runs_as_gemm below).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using opencl::ceil_div;
using opencl::next_pow2;
using opencl::number;

// Knob names: stored in records, a contract once released.
constexpr const char* kTq = "tq";                // work-items along output columns
constexpr const char* kTp = "tp";                // work-items along output rows
constexpr const char* kTk = "tk";                // work-items along output channels
constexpr const char* kQpt = "qpt";              // consecutive columns per work-item
constexpr const char* kPpt = "ppt";              // rows per work-item (strided by tp)
constexpr const char* kKpt = "kpt";              // output channels per work-item
constexpr const char* kTc = "tc";                // slices splitting the input channels
constexpr const char* kCb = "cb";                // input channels per slice and local-memory step
constexpr const char* kLocalInput = "local_in";  // input tile staged in local memory
constexpr const char* kUnrollWindow = "unroll_rs";
constexpr const char* kVw = "vw";                // vector width of stores and local reads

constexpr std::int64_t kMaxOutputsPerItem = 64;

struct ConvTile {
  std::int64_t tq, tp, tk, tc, qpt, ppt, kpt, cb, local_in, unroll, vw;
  explicit ConvTile(const ss::ConfigView& v)
      : tq(number(v, kTq)), tp(number(v, kTp)), tk(number(v, kTk)), tc(number(v, kTc)), qpt(number(v, kQpt)),
        ppt(number(v, kPpt)), kpt(number(v, kKpt)), cb(number(v, kCb)), local_in(number(v, kLocalInput)),
        unroll(number(v, kUnrollWindow)), vw(number(v, kVw)) {}
  std::int64_t tile_q() const { return tq * qpt; }
  std::int64_t tile_p() const { return tp * ppt; }
  std::int64_t tile_k() const { return tk * kpt; }
  std::int64_t work_items() const { return tq * tp * tk * tc; }
  // Floats of the staged input tile of cb x tc channels.
  std::int64_t input_tile(const Conv2dShape& s) const {
    const std::int64_t rows = opencl::input_extent(tile_p(), s.stride, s.R, s.dilation);
    const std::int64_t cols = opencl::input_extent(tile_q(), s.stride, s.S, s.dilation);
    return cb * tc * rows * cols;
  }
  // Bytes of local memory: the staged input and the slices' partial sums.
  std::int64_t local_bytes(const Conv2dShape& s) const {
    const std::int64_t partials = tc > 1 ? tc * tile_k() * tile_p() * tile_q() : 0;
    return 4 * ((local_in ? input_tile(s) : 0) + partials);
  }
};

// A pointwise layer of one image (1 x 1 filter, stride 1, no padding or groups) is the GEMM
// output[K][H*W] = filter[K][C] x input[C][H*W] on its very NCHW buffers. Where gemm.opencl would
// run that GEMM on the tensor cores, conv2d.opencl tunes it there: its space, default and kernel
// are the GEMM's (gemm_mma.cl with CONV_ARGS, which takes the input before the filter, as the
// convolution's arguments come).
bool is_pointwise_gemm(const Conv2dShape& s) {
  return s.N == 1 && s.R == 1 && s.S == 1 && s.stride == 1 && s.pad == 0 && s.dilation == 1 && s.groups == 1;
}

Workload pointwise_gemm(const Workload& workload) {
  const Conv2dShape s = workload.conv();
  return Workload{Op::kGemm, workload.dtype, GemmShape{s.K, s.H * s.W, s.C}};
}

bool runs_as_gemm(const Workload& workload, const DeviceInfo& device) {
  return workload.layout_block == kLayoutNchw && is_pointwise_gemm(workload.conv()) &&
         opencl_gemm_uses_tensor_cores(pointwise_gemm(workload), device);
}

class OpenCLConv2dTemplate final : public opencl::TemplateBase {
 public:
  std::string name() const override { return "conv2d.opencl"; }
  std::vector<DataType> dtypes() const override { return opencl::storage_dtypes(); }
  Op op() const override { return Op::kConv2d; }
  // NHWC is for the templates that take it (GPU implicit GEMMs); a blocked layout is refused by space().
  bool applies(const Workload& workload, const DeviceInfo&) const override {
    return workload.layout_block != kLayoutNhwc;
  }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    opencl::require_nchw(name(), workload);
    if (runs_as_gemm(workload, device)) return opencl_gemm_template().space(pointwise_gemm(workload), device);
    const Conv2dShape s = workload.conv();
    const opencl::DeviceLimits limits = opencl::device_limits(device);
    const std::vector<std::int64_t> widths = opencl::vector_widths(limits, 4);
    ss::ConfigSpace space;
    opencl::add_activations_knob(space, workload);
    space.add(opencl::number_knob(kTq, {1, 2, 4, 8, 16, 32}));
    space.add(opencl::number_knob(kTp, {1, 2, 4, 8, 16}));
    space.add(opencl::number_knob(kTk, {1, 2, 4, 8, 16}));
    space.add(opencl::number_knob(kQpt, {1, 2, 4}));
    space.add(opencl::number_knob(kPpt, {1, 2, 4}));
    space.add(opencl::number_knob(kKpt, {1, 2, 4, 8}));
    space.add(opencl::number_knob(kTc, {1, 2, 4, 8, 16, 32}));
    space.add(opencl::number_knob(kCb, {1, 2, 4, 8}));
    space.add(opencl::number_knob(kLocalInput, {0, 1}));
    space.add(opencl::number_knob(kUnrollWindow, {0, 1}));
    space.add(opencl::number_knob(kVw, widths));

    space.add_constraint("the work-group fits the device", [limits](const ss::ConfigView& v) {
      return limits.fits_work_group(number(v, kTq), number(v, kTp), number(v, kTk) * number(v, kTc));
    });
    space.add_constraint("input tile and partial sums fit local memory", [limits, s](const ss::ConfigView& v) {
      return ConvTile(v).local_bytes(s) <= limits.local_mem_bytes;
    });
    space.add_constraint("at most 64 accumulators per work-item", [](const ss::ConfigView& v) {
      const ConvTile t(v);
      return t.kpt * t.ppt * t.qpt <= kMaxOutputsPerItem;
    });
    space.add_constraint("vw divides qpt", [](const ss::ConfigView& v) {
      return number(v, kQpt) % number(v, kVw) == 0;
    });
    // cb only sizes local-memory steps: without local_in its values are the same kernel.
    space.add_constraint("cb is 1 unless local_in", [](const ss::ConfigView& v) {
      return number(v, kLocalInput) == 1 || number(v, kCb) == 1;
    });
    space.add_constraint("a tile of output channels stays in one group", [s](const ss::ConfigView& v) {
      return s.groups == 1 || (s.K / s.groups) % ConvTile(v).tile_k() == 0;
    });
    space.add_constraint("tiles not far beyond the output", [s](const ss::ConfigView& v) {
      const ConvTile t(v);
      return t.tile_q() <= std::max<std::int64_t>(4, next_pow2(s.out_w())) &&
             t.tile_p() <= std::max<std::int64_t>(4, next_pow2(s.out_h())) &&
             t.tile_k() <= std::max<std::int64_t>(4, next_pow2(s.K)) &&
             t.cb * t.tc <= std::max<std::int64_t>(1, next_pow2(s.C / s.groups));
    });
    return space;
  }

  // On a large GPU, 8 x 2 work-items of 4 rows x 8 channels each, with 16 slices splitting the
  // input channels: measured on an H100 within 1.0-1.7x of the tuned best on ResNet-18's 3x3
  // layers (batch 1), and ahead of cuDNN on each. Where the device or shape refuses that (few
  // channels, small work-groups), tiles without the split.
  ss::Config default_config(const Workload& workload, const DeviceInfo& device,
                            const ss::ConfigSpace& space) const override {
    if (runs_as_gemm(workload, device))
      return opencl_gemm_template().default_config(pointwise_gemm(workload), device, space);
    auto preference = [](const char* tq, const char* tp, const char* tk, const char* tc, const char* qpt,
                         const char* ppt, const char* kpt, const char* cb, const char* local, const char* vw) {
      return opencl::Preference{{kTq, tq},   {kTp, tp},   {kTk, tk},          {kTc, tc},
                                {kQpt, qpt}, {kPpt, ppt}, {kKpt, kpt},        {kCb, cb},
                                {kLocalInput, local},     {kUnrollWindow, "1"}, {kVw, vw}};
    };
    return opencl::preferred_config(space,
                                    {preference("8", "2", "1", "16", "1", "4", "8", "1", "0", "1"),
                                     preference("8", "8", "4", "1", "2", "2", "4", "4", "1", "2"),
                                     preference("4", "4", "4", "1", "2", "2", "2", "2", "1", "2"),
                                     preference("4", "4", "1", "1", "1", "1", "1", "1", "0", "1"),
                                     preference("1", "1", "1", "1", "1", "1", "1", "1", "0", "1")},
                                    name());
  }

  OpenCLKernel opencl_kernel(const Workload& workload, const DeviceInfo& device,
                                            const ss::ConfigView& config) const override {
    if (config.has("math")) {  // the pointwise layer's GEMM (runs_as_gemm)
      OpenCLKernel kernel = opencl_gemm_template().opencl_kernel(pointwise_gemm(workload), device, config);
      kernel.build_options += " -DCONV_ARGS=1";
      return kernel;
    }
    const Conv2dShape s = workload.conv();
    const ConvTile t(config);
    const std::int64_t P = s.out_h(), Q = s.out_w();
    const std::int64_t cpg = s.C / s.groups, kpg = s.K / s.groups;
    OpenCLKernel kernel;
    kernel.source_file = "conv2d.cl";
    kernel.kernel_name = "optune_conv2d";
    kernel.build_options = opencl::build_options({
        {"N", s.N}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"K", s.K}, {"R", s.R}, {"S", s.S},
        {"P", P}, {"Q", Q}, {"STRIDE", s.stride}, {"PAD", s.pad}, {"DIL", s.dilation},
        {"CPG", cpg}, {"KPG", kpg}, {"TQ", t.tq}, {"TP", t.tp}, {"TK", t.tk}, {"QPT", t.qpt},
        {"PPT", t.ppt}, {"KPT", t.kpt}, {"TC", t.tc}, {"CB", t.cb}, {"LOCAL_IN", t.local_in},
        {"UNROLL_RS", t.unroll}, {"VW", t.vw}, {"EDGE_Q", Q % t.tile_q() != 0},
        {"EDGE_P", P % t.tile_p() != 0}, {"EDGE_K", s.K % t.tile_k() != 0}, {"EDGE_C", cpg % (t.cb * t.tc) != 0}});
    kernel.build_options += opencl::storage_option(workload.dtype);
    kernel.dimensions = 3;
    kernel.global_size = {static_cast<std::size_t>(ceil_div(Q, t.tile_q()) * t.tq),
                          static_cast<std::size_t>(ceil_div(P, t.tile_p()) * t.tp),
                          static_cast<std::size_t>(s.N * ceil_div(s.K, t.tile_k()) * t.tk * t.tc)};
    kernel.local_size = {static_cast<std::size_t>(t.tq), static_cast<std::size_t>(t.tp),
                         static_cast<std::size_t>(t.tk * t.tc)};
    return kernel;
  }

  std::vector<TableForm> table_forms() const override {
    return opencl::table_forms({"kConv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1", "conv2d",
                                "NCHW output = conv2d(NCHW input, OIHW filter),",
                                "const kernels::Conv2dShape& shape, cl_mem input, cl_mem filter, cl_mem output",
                                "shape, input, filter, output"});
  }

  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    if (config.has("math")) return opencl_gemm_template().derived_features(pointwise_gemm(workload), device, config);
    const Conv2dShape s = workload.conv();
    const ConvTile t(config);
    const opencl::DeviceLimits limits = opencl::device_limits(device);
    const double tiles = double(ceil_div(s.out_w(), t.tile_q())) * double(ceil_div(s.out_h(), t.tile_p())) *
                         double(s.N * ceil_div(s.K, t.tile_k()));
    const double useful = double(s.N) * double(s.K) * double(s.out_h()) * double(s.out_w());
    return {
        {"work_items_per_group", double(t.work_items())},
        {"outputs_per_item", double(t.kpt * t.ppt * t.qpt)},
        {"channels_per_item", double(s.C / s.groups) / double(t.tc)},
        {"work_items_per_compute_unit", tiles * double(t.work_items()) / std::max(1, device.cores)},
        {"local_mem_share", double(t.local_bytes(s)) / double(limits.local_mem_bytes)},
        {"groups_per_compute_unit", tiles / std::max(1, device.cores)},
        {"edge_waste", 1.0 - useful / (tiles * double(t.tile_q() * t.tile_p() * t.tile_k()))},
    };
  }
};

}  // namespace

const OpenCLTemplate& opencl_conv2d_template() {
  static const OpenCLConv2dTemplate instance;
  return instance;
}

}  // namespace optune::kernels
