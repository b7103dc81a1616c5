// The "depthwise_conv2d.opencl" template: the tuning space of kernels/opencl/depthwise_conv2d.cl
// for one workload and device, its default config and the launch of a candidate. Depthwise has
// no reduction over channels, so its own kernel keeps each channel's taps in registers and tiles
// over channels, rows and columns only.
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
constexpr const char* kTq = "tq";  // work-items along output columns
constexpr const char* kTp = "tp";  // work-items along output rows
constexpr const char* kTc = "tc";  // work-items along channels (one channel each)
constexpr const char* kQpt = "qpt";
constexpr const char* kPpt = "ppt";
constexpr const char* kLocalInput = "local_in";
constexpr const char* kUnrollWindow = "unroll_rs";
constexpr const char* kVw = "vw";

constexpr std::int64_t kMaxOutputsPerItem = 32;

struct DepthwiseTile {
  std::int64_t tq, tp, tc, qpt, ppt, local_in, unroll, vw;
  explicit DepthwiseTile(const ss::ConfigView& v)
      : tq(number(v, kTq)), tp(number(v, kTp)), tc(number(v, kTc)), qpt(number(v, kQpt)), ppt(number(v, kPpt)),
        local_in(number(v, kLocalInput)), unroll(number(v, kUnrollWindow)), vw(number(v, kVw)) {}
  std::int64_t tile_q() const { return tq * qpt; }
  std::int64_t tile_p() const { return tp * ppt; }
  std::int64_t input_tiles(const Conv2dShape& s) const {
    const std::int64_t rows = opencl::input_extent(tile_p(), s.stride, s.R, s.dilation);
    const std::int64_t cols = opencl::input_extent(tile_q(), s.stride, s.S, s.dilation);
    return tc * rows * cols;
  }
};

class OpenCLDepthwiseConv2dTemplate final : public opencl::TemplateBase {
 public:
  std::string name() const override { return "depthwise_conv2d.opencl"; }
  std::vector<DataType> dtypes() const override { return opencl::storage_dtypes(); }
  Op op() const override { return Op::kDepthwiseConv2d; }

  ss::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override {
    opencl::require_nchw(name(), workload);
    const Conv2dShape s = workload.conv();
    const opencl::DeviceLimits limits = opencl::device_limits(device);
    const std::vector<std::int64_t> widths = opencl::vector_widths(limits, 4);
    ss::ConfigSpace space;
    opencl::add_activations_knob(space, workload);
    space.add(opencl::number_knob(kTq, {1, 2, 4, 8, 16, 32}));
    space.add(opencl::number_knob(kTp, {1, 2, 4, 8, 16}));
    space.add(opencl::number_knob(kTc, {1, 2, 4, 8, 16}));
    space.add(opencl::number_knob(kQpt, {1, 2, 4, 8}));
    space.add(opencl::number_knob(kPpt, {1, 2, 4}));
    space.add(opencl::number_knob(kLocalInput, {0, 1}));
    space.add(opencl::number_knob(kUnrollWindow, {0, 1}));
    space.add(opencl::number_knob(kVw, widths));

    space.add_constraint("the work-group fits the device", [limits](const ss::ConfigView& v) {
      return limits.fits_work_group(number(v, kTq), number(v, kTp), number(v, kTc));
    });
    space.add_constraint("the input tiles fit local memory", [limits, s](const ss::ConfigView& v) {
      const DepthwiseTile t(v);
      return t.local_in == 0 || 4 * t.input_tiles(s) <= limits.local_mem_bytes;
    });
    space.add_constraint("at most 32 accumulators per work-item", [](const ss::ConfigView& v) {
      return number(v, kQpt) * number(v, kPpt) <= kMaxOutputsPerItem;
    });
    space.add_constraint("vw divides qpt", [](const ss::ConfigView& v) {
      return number(v, kQpt) % number(v, kVw) == 0;
    });
    space.add_constraint("tiles not far beyond the output", [s](const ss::ConfigView& v) {
      const DepthwiseTile t(v);
      return t.tile_q() <= std::max<std::int64_t>(4, next_pow2(s.out_w())) &&
             t.tile_p() <= std::max<std::int64_t>(4, next_pow2(s.out_h())) &&
             t.tc <= std::max<std::int64_t>(1, next_pow2(s.C));
    });
    return space;
  }

  // 16 x 4 x 2 work-items computing 2 columns x 2 rows of one channel each, input in local memory.
  ss::Config default_config(const Workload&, const DeviceInfo&, const ss::ConfigSpace& space) const override {
    auto preference = [](const char* tq, const char* tp, const char* tc, const char* qpt, const char* local,
                         const char* vw) {
      return opencl::Preference{{kTq, tq},          {kTp, tp},           {kTc, tc}, {kQpt, qpt}, {kPpt, qpt},
                                {kLocalInput, local}, {kUnrollWindow, "1"}, {kVw, vw}};
    };
    return opencl::preferred_config(space,
                                    {preference("16", "4", "2", "2", "1", "2"), preference("4", "4", "2", "2", "1", "2"),
                                     preference("4", "4", "1", "1", "0", "1"), preference("1", "1", "1", "1", "0", "1")},
                                    name());
  }

  OpenCLKernel opencl_kernel(const Workload& workload, const DeviceInfo&,
                                            const ss::ConfigView& config) const override {
    const Conv2dShape s = workload.conv();
    const DepthwiseTile t(config);
    const std::int64_t P = s.out_h(), Q = s.out_w();
    OpenCLKernel kernel;
    kernel.source_file = "depthwise_conv2d.cl";
    kernel.kernel_name = "optune_depthwise_conv2d";
    kernel.build_options = opencl::build_options({
        {"N", s.N}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"R", s.R}, {"S", s.S}, {"P", P}, {"Q", Q},
        {"STRIDE", s.stride}, {"PAD", s.pad}, {"DIL", s.dilation}, {"TQ", t.tq}, {"TP", t.tp},
        {"TC", t.tc}, {"QPT", t.qpt}, {"PPT", t.ppt}, {"LOCAL_IN", t.local_in}, {"UNROLL_RS", t.unroll},
        {"VW", t.vw}, {"EDGE_Q", Q % t.tile_q() != 0}, {"EDGE_P", P % t.tile_p() != 0},
        {"EDGE_C", s.C % t.tc != 0}});
    kernel.build_options += opencl::storage_option(workload.dtype);
    kernel.dimensions = 3;
    kernel.global_size = {static_cast<std::size_t>(ceil_div(Q, t.tile_q()) * t.tq),
                          static_cast<std::size_t>(ceil_div(P, t.tile_p()) * t.tp),
                          static_cast<std::size_t>(s.N * ceil_div(s.C, t.tc) * t.tc)};
    kernel.local_size = {static_cast<std::size_t>(t.tq), static_cast<std::size_t>(t.tp),
                         static_cast<std::size_t>(t.tc)};
    return kernel;
  }

  std::vector<TableForm> table_forms() const override {
    return opencl::table_forms({"kDepthwiseConv2d", "N=1,C=128,H=56,W=56,R=3,S=3,stride=1,pad=1", "depthwise_conv2d",
                                "NCHW output = depthwise_conv2d(NCHW input, [C,1,R,S] filter) (shape.K and shape.groups\n"
                                "// are taken as shape.C),",
                                "const kernels::Conv2dShape& shape, cl_mem input, cl_mem filter, cl_mem output",
                                "shape, input, filter, output"});
  }

};

}  // namespace

const OpenCLTemplate& opencl_depthwise_conv2d_template() {
  static const OpenCLDepthwiseConv2dTemplate instance;
  return instance;
}

}  // namespace optune::kernels
