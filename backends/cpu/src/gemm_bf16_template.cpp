// The "gemm_bf16.cpu" template: bf16 GEMM workloads (bf16 in and out, float32 accumulation) on
// the header-only kernel optune/kernels/cpu/gemm_bf16.hpp, whose micro-kernel is AVX-512 BF16's
// vdpbf16ps (two bf16 products summed into each float32 lane). It applies where the device has
// avx512_bf16, and is then the default ahead of gemm.cpu, which widens bf16 to float32 as it packs
// (the path for every other CPU). The knobs map one to one onto GemmBf16Config's fields
// (dot_gemm_template.hpp).
#include "dot_gemm_template.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

class CpuGemmBf16Template final : public DotGemmTemplate {
 public:
  std::string name() const override { return "gemm_bf16.cpu"; }
  std::vector<DataType> dtypes() const override { return {DataType::kBF16}; }
  bool applies(const Workload& /*workload*/, const DeviceInfo& device) const override {
    return device.has_isa("avx512_bf16");
  }
  int priority() const override { return 1; }  // ahead of gemm.cpu where it applies

 protected:
  DotGemmKernel kernel() const override { return {"gemm_bf16.hpp", "gemm_bf16", "GemmBf16Config"}; }
  int lanes(const DeviceInfo& /*device*/) const override { return 16; }  // float32 lanes of a zmm
  int max_mr(const DeviceInfo& /*device*/) const override { return 14; }
  double packed_bytes(const DeviceInfo& /*device*/) const override { return 2; }
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& /*device*/) const override {
    return workload.gemm().K % 2 == 0;  // a pair of K is 4 bytes of a row as it lies
  }
  std::vector<std::string> operand_types(const search_space::ConfigView& /*view*/) const override {
    return {"optune::kernels::cpu::bfloat16", "optune::kernels::cpu::bfloat16", "optune::kernels::cpu::bfloat16"};
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_bf16_template() {
  static const CpuGemmBf16Template kernel_template;
  return kernel_template;
}

}  // namespace optune::kernels
