// The catalog's entry for conv2d: NCHW input [N,C,H,W], OIHW filter [K, C/groups, R, S], output
// [N,K,P,Q], on NCHW or NCHW[b]c activations; or, with groups 1, all three channels last (NHWC,
// OHWI, NHWC). The only operator that may read an NCHW input while writing a blocked layout (a
// network's first layer, which reads the image), and the only one on NHWC. Its key:
// "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1".
#include "convolution.hpp"
#include "entry_support.hpp"
#include "optune/kernels/operator_catalog.hpp"

namespace optune::kernels {
namespace {

class Conv2dEntry final : public OperatorEntry {
 public:
  Op op() const override { return Op::kConv2d; }
  std::string_view name() const override { return "conv2d"; }

  const std::vector<ExtentSpec>& extents() const override {
    static const std::vector<ExtentSpec> extents = {
        {"N", false, 1},   {"C", true, 0},          {"H", true, 0},        {"W", true, 0},
        {"K", true, 0},    {"R", true, 0},          {"S", true, 0},        {"stride", false, 1},
        {"pad", false, 0}, {"dilation", false, 1}, {"groups", false, 1}};
    return extents;
  }
  const std::vector<KeyField>& key_fields() const override {
    static const std::vector<KeyField> fields = {
        {"N", "N"}, {"C", "C"}, {"H", "H"}, {"W", "W"}, {"K", "K"}, {"R", "R"}, {"S", "S"},
        {"st", "stride"}, {"pad", "pad"}, {"dil", "dilation"}, {"g", "groups"}};
    return fields;
  }
  bool has_layout() const override { return true; }

  Workload workload_from(const ExtentValues& e, std::string_view /*context*/) const override {
    Conv2dShape s;
    s.N = e.at("N"), s.C = e.at("C"), s.H = e.at("H"), s.W = e.at("W"), s.K = e.at("K");
    s.R = e.at("R"), s.S = e.at("S");
    s.stride = e.at("stride"), s.pad = e.at("pad"), s.dilation = e.at("dilation"), s.groups = e.at("groups");
    Workload workload;
    workload.op = Op::kConv2d;
    workload.shape = s;
    return workload;
  }
  ExtentValues extents_of(const Workload& workload) const override {
    const auto& s = workload.conv();
    return {{"N", s.N}, {"C", s.C},           {"H", s.H},     {"W", s.W},
            {"K", s.K}, {"R", s.R},           {"S", s.S},     {"stride", s.stride},
            {"pad", s.pad}, {"dilation", s.dilation}, {"groups", s.groups}};
  }

  void validate(const Workload& workload, std::string_view context) const override {
    if (workload.nchw_input && !is_blocked_layout(workload.layout_block)) reject_nchw_input(workload, context);
    check_convolution_shape_kind(workload, context);
    const auto& s = workload.conv();
    if (workload.layout_block != kLayoutNchw && s.groups != 1) {
      fail(context, "layout " + layout_name(workload.layout_block) + " takes conv2d with groups=1, got groups=" +
                        std::to_string(s.groups));
    }
    check_convolution_extents(s, context);
    check_convolution_geometry(s, context);
  }

  double tensor_elements(const Workload& workload) const override {
    return convolution_tensor_elements(workload.conv());
  }
  double flops(const Workload& workload) const override {
    const auto& c = workload.conv();
    const double outputs = double(c.N) * double(c.K) * double(c.out_h()) * double(c.out_w());
    return 2.0 * outputs * double(c.C / c.groups) * double(c.R) * double(c.S);
  }

  std::vector<std::size_t> input_sizes(const Workload& workload) const override {
    const auto& c = workload.conv();
    return convolution_input_sizes(workload, c.K * (c.C / c.groups) * c.R * c.S);
  }
  std::size_t output_size(const Workload& workload) const override {
    return convolution_output_size(workload, workload.conv().K);
  }
  std::vector<std::string> operand_names(const Workload&) const override { return {"input", "filter", "output"}; }
  double reduction_length(const Workload& workload) const override {
    const auto& c = workload.conv();
    return double(c.C / c.groups) * double(c.R) * double(c.S);
  }
  void reference(const Workload& workload, const std::vector<const double*>& inputs,
                 double* output) const override {
    reference_convolution(workload, workload.conv(), inputs, output);
  }

  std::vector<std::pair<std::string, float>> shape_features(const Workload& workload) const override {
    return convolution_shape_features(workload.conv());
  }
};

}  // namespace

const OperatorEntry& conv2d_entry() {
  static const Conv2dEntry entry;
  return entry;
}

}  // namespace optune::kernels
