// The "gemm_int8.cpu" and "conv2d_int8.cpu" templates: i8 GEMM and conv2d workloads (int32
// accumulation and output) on the header-only kernel optune/kernels/cpu/gemm_int8.hpp (the conv2d
// through conv2d_dot.hpp's im2col columns). On x86 they read activations (A, the image) as u8 (what
// VNNI's vpdpbusd multiplies, and oneDNN's u8s8s32 matmul and convolution take), elsewhere as s8;
// weights (B, the filter) are s8. Both also run u7 workloads: activations u8 in 0..127 (7-bit,
// PyTorch's reduce_range), which AVX2 multiplies by vpmaddubsw's quads (GemmInt8Config::a7); the
// other paths run them as u8. The knobs map one to one onto GemmInt8Config's fields
// (dot_gemm_template.hpp). Where the device has AMX's int8 tiles (amx_int8) the micro-tiles run on
// them (DotGemmTemplate::amx_isa).
#include "dot_gemm_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;

class CpuInt8Template final : public DotGemmTemplate {
 public:
  using DotGemmTemplate::DotGemmTemplate;
  std::vector<DataType> dtypes() const override { return {DataType::kI8, DataType::kU7}; }

  std::vector<DataType> input_dtypes(const Workload& workload, const DeviceInfo& device) const override {
    return {int8_activations(workload, device), DataType::kI8};
  }

 protected:
  std::string element_name() const override { return "int8"; }
  DotGemmKernel kernel() const override { return {"gemm_int8.hpp", "gemm_int8", "GemmInt8Config"}; }
  // gemm_int8_lanes() in the header: int32 lanes of a zmm on the VNNI path, of a ymm elsewhere.
  int lanes(const DeviceInfo& device) const override { return has_int8_vnni(device) ? 16 : 8; }
  int max_mr(const DeviceInfo& device) const override { return has_int8_vnni(device) ? 14 : 12; }
  std::string amx_isa() const override { return "amx_int8"; }
  int amx_depth_step() const override { return 64; }  // a slab of A: 64 bytes of a row
  int amx_default_kc() const override { return 1024; }  // 1024 bytes of a row
  // x86 without VNNI widens to int16 pairs (vpmaddwd), whose temporaries share AVX2's 16
  // registers with the accumulators: 3 rows. Tuned on AVX2 code (2026-11-30, 4 shapes), 2-4 rows
  // won every shape and the 6 of the VNNI path ran 1.4-1.7x slower than the best
  // (docs/performance/lowp-cpu-gemm.md).
  // vpmaddubsw's quads (u7 on AVX2) keep an accumulator per ymm with no widening temporaries: 4
  // rows of 16 columns ran 376 GOP/s at 1024^3 on a Xeon capped to AVX2, 3 rows of 24 339, 6 rows
  // 323 (2026-12-01, docs/performance/lowp-cpu-gemm.md).
  int default_mr(const Workload& workload, const DeviceInfo& device) const override {
    if (runs_maddubs(workload, device)) return 4;
    return is_x86(device) && !has_int8_vnni(device) ? 3 : DotGemmTemplate::default_mr(workload, device);
  }
  // Bytes per packed element: as they are in quads (VNNI, or u7 on AVX2), widened to int16 pairs elsewhere.
  double packed_bytes(const Workload& workload, const DeviceInfo& device) const override {
    return has_int8_vnni(device) || runs_maddubs(workload, device) ? 1 : 2;
  }
  // Quads are 4 bytes of a row as they lie; the pair path widens A as it packs it.
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& device) const override {
    return (has_int8_vnni(device) || runs_maddubs(workload, device)) && gemm_shape(workload).K % 4 == 0;
  }
  // The activations' type as the knob writes it into a record ("u8", "s8", or "u7").
  void add_type_knobs(ss::ConfigSpace& space, const Workload& workload, const DeviceInfo& device) const override {
    add_activations_knob(space, int8_activations(workload, device));
  }
  DotOperandTypes operand_types(const ss::ConfigView& view) const override {
    return {cpu_element_type(activations_type(view.choice(kActivationsKnob))), cpu_element_type(DataType::kI8),
            cpu_element_type(DataType::kI32)};
  }
  std::string type_fields(const ss::ConfigView& view) const override {
    return view.choice(kActivationsKnob) == "u7" ? ", .a7 = true" : "";
  }

 private:
  // Whether candidates compile to gemm_int8.hpp's vpmaddubsw quads: u7 on x86 without VNNI.
  static bool runs_maddubs(const Workload& workload, const DeviceInfo& device) {
    return workload.dtype == DataType::kU7 && is_x86(device) && !has_int8_vnni(device);
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_int8_template() {
  static const CpuInt8Template kernel_template(Op::kGemm);
  return kernel_template;
}

const KernelTemplate& cpu_conv2d_int8_template() {
  static const CpuInt8Template kernel_template(Op::kConv2d);
  return kernel_template;
}

}  // namespace optune::kernels
