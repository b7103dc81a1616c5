// The "gemm_bf16.cpu" and "conv2d_bf16.cpu" templates: bf16 GEMM and conv2d workloads (bf16 in
// and out, float32 accumulation) on the header-only kernel optune/kernels/cpu/gemm_bf16.hpp (the
// conv2d through conv2d_dot.hpp's im2col columns), whose micro-kernel is AVX-512 BF16's vdpbf16ps
// (two bf16 products summed into each float32 lane). They apply where the device has avx512_bf16
// (the conv2d on NCHW layers), and are then the defaults ahead of gemm.cpu and conv2d.cpu /
// conv2d_gemm.cpu, which widen bf16 to float32 (the path for every other CPU and layout). The
// knobs map one to one onto GemmBf16Config's fields (dot_gemm_template.hpp). Where the device has
// AMX's bf16 tiles (amx_bf16) the micro-tiles run on them (DotGemmTemplate::amx_isa): on a 2-core
// Xeon with AMX 4.4-8.1x the vdpbf16ps path (docs/performance/lowp-cpu-gemm.md).
#include "dot_gemm_template.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

class CpuBf16Template final : public DotGemmTemplate {
 public:
  using DotGemmTemplate::DotGemmTemplate;
  std::vector<DataType> dtypes() const override { return {DataType::kBF16}; }
  bool applies(const Workload& workload, const DeviceInfo& device) const override {
    if (!device.has_isa("avx512_bf16")) return false;
    if (workload.op == Op::kGemm) return true;
    const Conv2dShape& c = workload.conv();
    return c.groups == 1 && workload.layout_block == kLayoutNchw && !workload.nchw_input;
  }
  // Ahead of gemm.cpu (0), conv2d.cpu (0) and conv2d_gemm.cpu (10) where it applies.
  int priority() const override { return 20; }

 protected:
  std::string element_name() const override { return "bf16"; }
  DotGemmKernel kernel() const override { return {"gemm_bf16.hpp", "gemm_bf16", "GemmBf16Config"}; }
  int lanes(const DeviceInfo& /*device*/) const override { return 16; }  // float32 lanes of a zmm
  int max_mr(const DeviceInfo& /*device*/) const override { return 14; }
  std::string amx_isa() const override { return "amx_bf16"; }
  int amx_depth_step() const override { return 32; }  // a slab of A: 64 bytes of a row
  int amx_default_kc() const override { return 256; }  // 512 bytes of a row
  double packed_bytes(const Workload& /*workload*/, const DeviceInfo& /*device*/) const override { return 2; }
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& /*device*/) const override {
    return gemm_shape(workload).K % 2 == 0;  // a pair of K is 4 bytes of a row as it lies
  }
  DotOperandTypes operand_types(const search_space::ConfigView& /*view*/) const override {
    const std::string bf16 = cpu_element_type(DataType::kBF16);
    return {bf16, bf16, bf16};
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_bf16_template() {
  static const CpuBf16Template kernel_template(Op::kGemm);
  return kernel_template;
}

const KernelTemplate& cpu_conv2d_bf16_template() {
  static const CpuBf16Template kernel_template(Op::kConv2d);
  return kernel_template;
}

}  // namespace optune::kernels
