// The catalog's entry for depthwise_conv2d: conv2d with one channel per group (K = C = groups),
// on NCHW or NCHW[b]c activations. Its `--shape` has no K, and groups only if it equals C; its
// key neither: "depthwise_conv2d.nchw8c.f32.N1.C32.H112.W112.R3.S3.st1.pad1.dil1".
#include "convolution.hpp"
#include "entry_support.hpp"
#include "optune/kernels/operator_catalog.hpp"

namespace optune::kernels {
namespace {

// Depthwise is conv2d with one channel per group; the shape says so whatever it was built with.
Conv2dShape depthwise_as_conv(Conv2dShape s) {
  s.K = s.C;
  s.groups = s.C;
  return s;
}

class DepthwiseConv2dEntry final : public OperatorEntry {
 public:
  Op op() const override { return Op::kDepthwiseConv2d; }
  std::string_view name() const override { return "depthwise_conv2d"; }

  // "groups" falls back to 0, read as C.
  const std::vector<ExtentSpec>& extents() const override {
    static const std::vector<ExtentSpec> extents = {
        {"N", false, 1},        {"C", true, 0},          {"H", true, 0},        {"W", true, 0},
        {"R", true, 0},         {"S", true, 0},          {"stride", false, 1}, {"pad", false, 0},
        {"dilation", false, 1}, {"groups", false, 0}};
    return extents;
  }
  const std::vector<KeyField>& key_fields() const override {
    static const std::vector<KeyField> fields = {
        {"N", "N"}, {"C", "C"}, {"H", "H"}, {"W", "W"}, {"R", "R"}, {"S", "S"},
        {"st", "stride"}, {"pad", "pad"}, {"dil", "dilation"}};
    return fields;
  }
  bool has_layout() const override { return true; }

  Workload workload_from(const ExtentValues& e, std::string_view context) const override {
    Conv2dShape s;
    s.N = e.at("N"), s.C = e.at("C"), s.H = e.at("H"), s.W = e.at("W"), s.R = e.at("R"), s.S = e.at("S");
    s.stride = e.at("stride"), s.pad = e.at("pad"), s.dilation = e.at("dilation");
    // groups may be spelled out, but only as C.
    const std::int64_t groups = e.at("groups");
    if (groups != 0 && groups != s.C) {
      fail(context, "depthwise_conv2d has groups = C, got C=" + std::to_string(s.C) +
                        ", groups=" + std::to_string(groups));
    }
    Workload workload;
    workload.op = Op::kDepthwiseConv2d;
    workload.shape = depthwise_as_conv(s);
    return workload;
  }
  ExtentValues extents_of(const Workload& workload) const override {
    const auto& s = workload.conv();
    return {{"N", s.N}, {"C", s.C},           {"H", s.H},         {"W", s.W},
            {"R", s.R}, {"S", s.S},           {"stride", s.stride}, {"pad", s.pad},
            {"dilation", s.dilation}, {"groups", s.groups}};
  }

  void validate(const Workload& workload, std::string_view context) const override {
    if (workload.nchw_input) reject_nchw_input(workload, context);
    if (workload.layout_block == kLayoutNhwc)
      fail(context, "depthwise_conv2d does not take layout nhwc (conv2d only, groups=1)");
    check_convolution_shape_kind(workload, context);
    const auto& s = workload.conv();
    check_convolution_extents(s, context);
    if (s.K != s.C || s.groups != s.C) {
      fail(context, "depthwise_conv2d needs K = C = groups, got C=" + std::to_string(s.C) +
                        ", K=" + std::to_string(s.K) + ", groups=" + std::to_string(s.groups));
    }
    check_convolution_geometry(s, context);
  }

  double tensor_elements(const Workload& workload) const override {
    return convolution_tensor_elements(workload.conv());
  }
  double flops(const Workload& workload) const override {
    const auto& c = workload.conv();
    const double outputs = double(c.N) * double(c.K) * double(c.out_h()) * double(c.out_w());
    return 2.0 * outputs * double(c.R) * double(c.S);
  }

  std::vector<std::size_t> input_sizes(const Workload& workload) const override {
    const auto& c = workload.conv();
    return convolution_input_sizes(workload, c.C * c.R * c.S);
  }
  std::size_t output_size(const Workload& workload) const override {
    return convolution_output_size(workload, workload.conv().C);
  }
  std::vector<std::string> operand_names(const Workload&) const override { return {"input", "filter", "output"}; }
  double reduction_length(const Workload& workload) const override {
    return double(workload.conv().R) * double(workload.conv().S);
  }
  void reference(const Workload& workload, const std::vector<const double*>& inputs,
                 double* output) const override {
    reference_convolution(workload, depthwise_as_conv(workload.conv()), inputs, output);
  }

  std::vector<std::pair<std::string, float>> shape_features(const Workload& workload) const override {
    return convolution_shape_features(workload.conv());
  }
};

}  // namespace

const OperatorEntry& depthwise_conv2d_entry() {
  static const DepthwiseConv2dEntry entry;
  return entry;
}

}  // namespace optune::kernels
