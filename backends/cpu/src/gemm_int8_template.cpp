// The "gemm_int8.cpu" and "conv2d_int8.cpu" templates: i8 GEMM and conv2d workloads (int32
// accumulation and output) on the header-only kernel optune/kernels/cpu/gemm_int8.hpp (the conv2d
// through conv2d_dot.hpp's im2col columns). On x86 they read activations (A, the image) as u8 (what
// VNNI's vpdpbusd multiplies, and oneDNN's u8s8s32 matmul and convolution take), elsewhere as s8;
// weights (B, the filter) are s8. The knobs map one to one onto GemmInt8Config's fields
// (dot_gemm_template.hpp). Where the device has AMX's int8 tiles (amx_int8) the micro-tiles run on
// them (DotGemmTemplate::amx_isa).
#include "dot_gemm_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;

// Whether candidates compile to gemm_int8.hpp's VNNI path (u8 activations, as x86 runs them, and
// vpdpbusd on zmm registers): micro-tiles are then whole 16-lane int32 vectors, 32 registers deep.
bool runs_vnni(const DeviceInfo& device) {
  return is_x86(device) && device.has_isa("avx512_vnni") && device.has_isa("avx512bw");
}

class CpuInt8Template final : public DotGemmTemplate {
 public:
  using DotGemmTemplate::DotGemmTemplate;
  std::vector<DataType> dtypes() const override { return {DataType::kI8}; }

  std::vector<DataType> input_dtypes(const Workload& /*workload*/, const DeviceInfo& device) const override {
    return {int8_activations(device), DataType::kI8};
  }

 protected:
  std::string element_name() const override { return "int8"; }
  DotGemmKernel kernel() const override { return {"gemm_int8.hpp", "gemm_int8", "GemmInt8Config"}; }
  // gemm_int8_lanes() in the header: int32 lanes of a zmm on the VNNI path, of a ymm elsewhere.
  int lanes(const DeviceInfo& device) const override { return runs_vnni(device) ? 16 : 8; }
  int max_mr(const DeviceInfo& device) const override { return runs_vnni(device) ? 14 : 12; }
  std::string amx_isa() const override { return "amx_int8"; }
  int amx_depth_step() const override { return 64; }  // a slab of A: 64 bytes of a row
  int amx_default_kc() const override { return 1024; }  // 1024 bytes of a row
  // x86 without VNNI widens to int16 pairs (vpmaddwd), whose temporaries share AVX2's 16
  // registers with the accumulators: 3 rows. Tuned on AVX2 code (2026-11-30, 4 shapes), 2-4 rows
  // won every shape and the 6 of the VNNI path ran 1.4-1.7x slower than the best
  // (docs/performance/lowp-cpu-gemm.md).
  int default_mr(const DeviceInfo& device) const override {
    return is_x86(device) && !runs_vnni(device) ? 3 : DotGemmTemplate::default_mr(device);
  }
  // Bytes per packed element: as they are with VNNI, widened to int16 pairs elsewhere.
  double packed_bytes(const DeviceInfo& device) const override { return runs_vnni(device) ? 1 : 2; }
  // VNNI's quads are 4 bytes of a row as they lie; the pair path widens A as it packs it.
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& device) const override {
    return runs_vnni(device) && gemm_shape(workload).K % 4 == 0;
  }
  void add_type_knobs(ss::ConfigSpace& space, const DeviceInfo& device) const override {
    add_activations_knob(space, device);
  }
  DotOperandTypes operand_types(const ss::ConfigView& view) const override {
    return {cpu_element_type(view.choice(kActivationsKnob) == "u8" ? DataType::kU8 : DataType::kI8),
            cpu_element_type(DataType::kI8), cpu_element_type(DataType::kI32)};
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
